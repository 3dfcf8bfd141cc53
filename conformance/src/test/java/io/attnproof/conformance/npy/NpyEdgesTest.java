package io.attnproof.conformance.npy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The .npy reader and writer at the edges of each rule: a header that ends early at every place the parser looks,
 * whitespace wherever Python allows it, a header exactly at the preamble, the size limits of a shape, the version
 * switch of the writer at exactly 65535 bytes and the 64-byte alignment at its edge; and the messages name the
 * numbers. Expected texts are written from the format by hand.
 */
class NpyEdgesTest {
    @TempDir
    Path dir;

    private static IllegalArgumentException parseFails(String header) {
        return assertThrows(IllegalArgumentException.class, () -> Npy.HeaderParser.parse(header));
    }

    @Test
    void aHeaderEndingEarlyIsRefusedWhereItEnds() {
        assertEquals("at offset 7: expected ',' or '}', found the end", parseFails("{'a': 1").getMessage());
        assertEquals("at offset 8: expected a closing ', found the end", parseFails("{'a': 'x").getMessage());
        assertEquals("at offset 6: expected a value, found the end", parseFails("{'a': ").getMessage());
        assertEquals("at offset 1: expected a quoted key, found '1'", parseFails("{1: 2}").getMessage());
    }

    @Test
    void whitespaceQuotesAndLongSuffixesAreRead() {
        assertEquals(Map.of("a", 1L, "b", List.of(2L, 3L)), Npy.HeaderParser.parse("  { 'a' : 1 , \"b\" : ( 2 , 3 ) } "));
        assertEquals(Map.of("a", 3L), Npy.HeaderParser.parse("{'a': 3L}"));
    }

    /** A version 1.0 (or {@code major}.0) file with {@code header} (announcing {@code announced} bytes) and no data. */
    private Path raw(int major, byte[] header, int announced) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
        if (major == 1) {
            out.write(new byte[] {(byte) announced, (byte) (announced >> 8)});
        } else {
            out.write(new byte[] {(byte) announced, (byte) (announced >> 8), (byte) (announced >> 16), 0});
        }
        out.write(header);
        return Files.write(dir.resolve("a" + out.size() + "-" + major + ".npy"), out.toByteArray());
    }

    private static String detail(Path file) {
        return assertThrows(NpyException.class, () -> Npy.read(file)).detail();
    }

    @Test
    void aFileExactlyAsLongAsThePreambleHasAnEmptyHeader() throws IOException {
        Path f = raw(1, new byte[0], 0);
        assertEquals("malformed header : at offset 0: expected a value, found the end", detail(f));
        assertEquals("truncated: the header announces 100 bytes, the file holds 5 after the preamble",
                detail(raw(1, "{'a':".getBytes(StandardCharsets.ISO_8859_1), 100)));
    }

    @Test
    void aFileOfMagicAndVersionOnlyIsTruncatedNotForeign() throws IOException {
        Path f = Files.write(dir.resolve("eight.npy"), new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
        assertEquals("truncated: 8 bytes, shorter than the version 1 preamble (10 bytes)", detail(f));
    }

    @Test
    void aMalformedHeaderIsQuotedUpToOneHundredCharacters() throws IOException {
        String hundred = "{'x" + "y".repeat(97);
        assertEquals(100, hundred.length());
        assertEquals("malformed header " + hundred + ": at offset 100: expected a closing ', found the end",
                detail(raw(1, hundred.getBytes(StandardCharsets.ISO_8859_1), 100)));
        String longer = hundred + "z";
        assertEquals("malformed header " + longer.substring(0, 97) + "...: at offset 101: expected a closing ', found"
                + " the end", detail(raw(1, longer.getBytes(StandardCharsets.ISO_8859_1), 101)));
    }

    @Test
    void version3HeadersAreUtf8AndOlderOnesLatin1() throws IOException {
        String h = "{'descr': '\u00e9', 'fortran_order': False, 'shape': (1,), }";
        assertEquals("dtype '\u00e9' is not supported: attnproof reads float16, float32 and float64 ('<f2', '<f4',"
                + " '<f8', or big-endian '>f2', '>f4', '>f8')", detail(raw(3, h.getBytes(StandardCharsets.UTF_8),
                h.getBytes(StandardCharsets.UTF_8).length)));
        assertTrue(detail(raw(1, h.getBytes(StandardCharsets.ISO_8859_1), h.length())).startsWith("dtype '\u00e9'"));
    }

    private Path header(String shape) throws IOException {
        String h = "{'descr': '<f2', 'fortran_order': False, 'shape': " + shape + ", }";
        return raw(1, h.getBytes(StandardCharsets.ISO_8859_1), h.length());
    }

    @Test
    void shapesUpToTheElementLimitAreReadThenFoundTruncated() throws IOException {
        // 2^31 - 9 elements is the most a shape may hold; 2^31 - 1 is a valid size that holds more.
        assertEquals("truncated: shape (2147483639,) of '<f2' needs 4294967278 data bytes, the file holds 0",
                detail(header("(2147483639,)")));
        assertEquals("shape (2147483640,) holds more than 2^31 elements", detail(header("(2147483640,)")));
        assertEquals("shape (2147483647,) holds more than 2^31 elements", detail(header("(2147483647,)")));
        assertEquals("malformed header: shape entry 2147483648 must be a size between 0 and 2^31-1",
                detail(header("(2147483648,)")));
    }

    private static int[] ones(int n, int tens) {
        int[] s = new int[n];
        Arrays.fill(s, 1);
        Arrays.fill(s, n - tens, n, 10);
        return s;
    }

    @Test
    void theWriterSwitchesToVersion2AboveSixtyFiveThousandFiveHundredThirtyFiveBytes() {
        // The dict "{'descr': '<f4', 'fortran_order': False, 'shape': (...), }" is 53 + 3n characters for n >= 2
        // sizes of one digit (a two-digit size adds one): 21821 ones and two tens give 65524, so the preamble (10),
        // the dict and its newline are exactly 65535 bytes, the most version 1 holds; 21824 ones give 65525.
        byte[] v1 = Npy.encode(Npy.DType.F4, ones(21823, 2), new float[100], 1);
        assertEquals(1, v1[6]);
        byte[] v2 = Npy.encode(Npy.DType.F4, ones(21824, 0), new float[1], 1);
        assertEquals(2, v2[6]);
    }

    @Test
    void theDataStartsAtTheNextMultipleOf64() {
        // 21 sizes of one: a dict of 53 + 63 = 116 characters, 127 bytes with preamble and newline: padded to 128.
        assertEquals(128 + 4, Npy.encode(Npy.DType.F4, ones(21, 0), new float[1], 1).length);
        // (2, 3): 59 characters, 70 bytes: padded to 128.
        assertEquals(128 + 24, Npy.encode(Npy.DType.F4, new int[] {2, 3}, new float[6], 1).length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Npy.encode(Npy.DType.F4, new int[] {1}, null, 1));
        assertEquals("dtype, shape and data must be present (got F4, [1], null)", e.getMessage());
    }

    @Test
    void typesArraysAndErrorsSayWhatTheyHold() throws IOException {
        assertEquals(ByteOrder.LITTLE_ENDIAN, Npy.DType.F4.order());
        assertEquals(ByteOrder.BIG_ENDIAN, Npy.DType.F8_BE.order());
        Path f = dir.resolve("x.npy");
        Npy.write(f, Npy.DType.F4, new int[] {2, 3}, new float[6]);
        assertEquals("(2, 3)", Npy.read(f).shapeText());
        Npy.write(f, Npy.DType.F4, new int[] {2}, new float[] {1.5f, -2f});
        assertEquals(List.of(1.5, -2.0), Arrays.stream(Npy.readWide(f).values()).boxed().toList());
        NpyException e = new NpyException(f, "why");
        assertEquals(f, e.file());
        assertEquals("why", e.detail());
        assertEquals(f + ": why", e.getMessage());
    }
}
