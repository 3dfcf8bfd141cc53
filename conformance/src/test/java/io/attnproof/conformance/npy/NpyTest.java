package io.attnproof.conformance.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NpyTest {
    @TempDir
    Path dir;

    private Path resource(String name) throws IOException {
        Path out = dir.resolve(name);
        try (InputStream in = NpyTest.class.getResourceAsStream("/npy/" + name)) {
            Files.write(out, in.readAllBytes());
        }
        return out;
    }

    private static float[] numpyArange() {
        float[] a = new float[24];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i - 7.25f) / 4;
        }
        return a;
    }

    @Test
    void readsWhatNumpyWrote() throws IOException {
        Npy.Array v1 = Npy.read(resource("numpy-f4-v1.npy"));
        assertEquals(Npy.DType.F4, v1.dtype());
        assertArrayEquals(new int[] {2, 3, 4}, v1.shape());
        assertArrayEquals(numpyArange(), v1.data());

        Npy.Array v2 = Npy.read(resource("numpy-f4-v2.npy"));
        assertArrayEquals(new int[] {2, 3, 4}, v2.shape());
        assertArrayEquals(numpyArange(), v2.data());

        Npy.Array f2 = Npy.read(resource("numpy-f2-v1.npy"));
        assertEquals(Npy.DType.F2, f2.dtype());
        assertArrayEquals(new int[] {5}, f2.shape());
        assertArrayEquals(new float[] {1f, -2.5f, 65504f, Float.float16ToFloat(Float.floatToFloat16(6.1e-5f)), 0f},
                f2.data());

        Npy.Array scalar = Npy.read(resource("numpy-f4-scalar.npy"));
        assertArrayEquals(new int[0], scalar.shape());
        assertArrayEquals(new float[] {3.5f}, scalar.data());
    }

    @Test
    void writesWhatNumpyWritesByteForByte() throws IOException {
        Path mine = dir.resolve("mine.npy");
        Npy.write(mine, Npy.DType.F4, new int[] {2, 3, 4}, numpyArange());
        assertArrayEquals(Files.readAllBytes(resource("numpy-f4-v1.npy")), Files.readAllBytes(mine));
        Npy.write(mine, Npy.DType.F4, new int[] {2, 3, 4}, numpyArange(), 2);
        assertArrayEquals(Files.readAllBytes(resource("numpy-f4-v2.npy")), Files.readAllBytes(mine));
    }

    @Test
    void roundTripsShapesAndFloat16Rounding() {
        for (int[] shape : new int[][] {{}, {0}, {5}, {2, 3}, {2, 1, 3, 2}}) {
            int n = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
            float[] data = new float[n];
            for (int i = 0; i < n; i++) {
                data[i] = (float) Math.sin(i + 1) * 3;
            }
            for (Npy.DType t : Npy.DType.values()) {
                for (int version : new int[] {1, 2}) {
                    Path file = dir.resolve("rt-" + t + "-" + version + "-" + shape.length + ".npy");
                    Npy.write(file, t, shape, data, version);
                    Npy.Array back = Npy.read(file);
                    assertEquals(t, back.dtype());
                    assertArrayEquals(shape, back.shape());
                    float[] expected = data.clone();
                    if (t.isHalf()) {
                        for (int i = 0; i < n; i++) {
                            expected[i] = Float.float16ToFloat(Float.floatToFloat16(data[i]));
                        }
                    }
                    assertArrayEquals(expected, back.data());
                }
            }
        }
    }

    @Test
    void headersAreAlignedTo64Bytes() throws IOException {
        Path file = dir.resolve("aligned.npy");
        Npy.write(file, Npy.DType.F2, new int[] {3, 7}, new float[21]);
        byte[] bytes = Files.readAllBytes(file);
        int headerLength = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getShort(8) & 0xFFFF;
        assertEquals(0, (10 + headerLength) % 64);
        assertEquals('\n', bytes[10 + headerLength - 1]);
        assertEquals(10 + headerLength + 21 * 2, bytes.length);
    }

    @Test
    void writeRefusesAShapeThatDoesNotHoldTheData() {
        Path file = dir.resolve("bad.npy");
        assertThrows(IllegalArgumentException.class, () -> Npy.write(file, Npy.DType.F4, new int[] {2, 2}, new float[3]));
        assertFalse(Files.exists(file));
    }

    @Test
    void aFailedWriteLeavesNothing() throws IOException {
        Path blocker = Files.writeString(dir.resolve("not-a-dir"), "x");
        Path file = blocker.resolve("out.npy");
        NpyException e = assertThrows(NpyException.class,
                () -> Npy.write(file, Npy.DType.F4, new int[] {1}, new float[1]));
        assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(1, files.count(), "only the blocker exists");
        }
    }

    /** Bytes of a hand-made .npy with {@code header} (padded) and {@code dataBytes} bytes of data. */
    static byte[] npy(int major, String header, int dataBytes) {
        byte[] h = header.getBytes(StandardCharsets.ISO_8859_1);
        int pre = major == 1 ? 10 : 12;
        ByteBuffer b = ByteBuffer.allocate(pre + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
        if (major == 1) {
            b.putShort((short) h.length);
        } else {
            b.putInt(h.length);
        }
        b.put(h);
        return b.array();
    }

    static Stream<Arguments> malformed() {
        String ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
        byte[] good = npy(1, ok, 24);
        return Stream.of(
                Arguments.of("empty", new byte[0], "truncated: 0 bytes"),
                Arguments.of("not-npy", "hello world, not numpy".getBytes(StandardCharsets.US_ASCII), "not a .npy file"),
                Arguments.of("short-preamble", Arrays.copyOf(good, 7), "truncated"),
                Arguments.of("short-header", Arrays.copyOf(good, 30), "truncated: the header announces"),
                Arguments.of("short-data", Arrays.copyOf(good, good.length - 5), "truncated: shape (2, 3) of '<f4' needs 24"),
                Arguments.of("trailing", Arrays.copyOf(good, good.length + 4), "4 bytes follow"),
                Arguments.of("version-4", npy(4, ok, 24), "unsupported .npy format version 4.0"),
                Arguments.of("complex", npy(1, ok.replace("<f4", "<c8"), 48), "dtype '<c8' is not supported"),
                Arguments.of("f8-short", npy(1, ok.replace("<f4", "<f8"), 24), "truncated: shape (2, 3) of '<f8' needs 48"),
                Arguments.of("int", npy(1, ok.replace("<f4", "<i4"), 24), "dtype '<i4' is not supported"),
                Arguments.of("fortran", npy(1, ok.replace("False", "True"), 24), "fortran_order True is not supported"),
                Arguments.of("no-shape", npy(1, "{'descr': '<f4', 'fortran_order': False, }\n", 0), "'shape' = null"),
                Arguments.of("bad-dict", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}\n", 24),
                        "malformed header"),
                Arguments.of("extra-key", npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8),
                        "unexpected key 'x'"),
                Arguments.of("negative-dim", npy(1, ok.replace("(2, 3)", "(2, -3)"), 24), "must be a size"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedFilesGiveOneClearErrorNamingTheFile(String name, byte[] bytes, String expected) throws IOException {
        Path file = Files.write(dir.resolve(name + ".npy"), bytes);
        NpyException e = assertThrows(NpyException.class, () -> Npy.read(file));
        assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void numpyFilesOfOtherKindsAreRefusedClearly() throws IOException {
        Path f8 = resource("numpy-f8.npy");
        assertEquals(Npy.DType.F8, Npy.read(f8).dtype(), "float64 (PyTorch dumps) is read");
        Path fortran = resource("numpy-f4-fortran.npy");
        assertTrue(assertThrows(NpyException.class, () -> Npy.read(fortran)).getMessage()
                .contains("fortran_order True"));
        Path missing = dir.resolve("missing.npy");
        assertEquals(missing + ": no such file", assertThrows(NpyException.class, () -> Npy.read(missing)).getMessage());
    }
}
