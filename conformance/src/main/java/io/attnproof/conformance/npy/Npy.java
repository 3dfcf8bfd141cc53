package io.attnproof.conformance.npy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * NumPy {@code .npy} files of little-endian float32 ({@code '<f4'}) or float16 ({@code '<f2'}) arrays in C order:
 * reads format versions 1.0, 2.0 and 3.0 (the header dict {@code {'descr': ..., 'fortran_order': False, 'shape': (...)}}),
 * writes 1.0 (2.0 when the header would not fit 1.0's 16-bit length, or when asked). Every failure is an
 * {@link NpyException} whose message starts with the file.
 */
public final class Npy {
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    /** Headers are padded so that the data starts at a multiple of this (NumPy's alignment). */
    private static final int ALIGN = 64;

    private Npy() {
    }

    /** The element types read and written: IEEE binary16, binary32 and binary64, little- or big-endian. */
    public enum DType {
        /** {@code '<f4'}: IEEE binary32, little-endian. */
        F4("<f4", 4),
        /** {@code '<f2'}: IEEE binary16, little-endian. */
        F2("<f2", 2),
        /** {@code '<f8'}: IEEE binary64, little-endian (PyTorch users dump float64). */
        F8("<f8", 8),
        /** {@code '>f4'}: IEEE binary32, big-endian. */
        F4_BE(">f4", 4),
        /** {@code '>f2'}: IEEE binary16, big-endian. */
        F2_BE(">f2", 2),
        /** {@code '>f8'}: IEEE binary64, big-endian. */
        F8_BE(">f8", 8);

        private final String descr;
        private final int itemSize;

        DType(String descr, int itemSize) {
            this.descr = descr;
            this.itemSize = itemSize;
        }

        /** The NumPy type string, e.g. {@code <f4}. */
        public String descr() {
            return descr;
        }

        /** Bytes per element. */
        public int itemSize() {
            return itemSize;
        }

        /** Whether this is float16 (either byte order). */
        public boolean isHalf() {
            return itemSize == 2;
        }

        /** The byte order of the data. */
        public ByteOrder order() {
            return descr.charAt(0) == '>' ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        }

        /** The type with this NumPy type string ({@code '='} and {@code '|'} read as little-endian), or null. */
        static DType ofDescr(String descr) {
            String d = descr.startsWith("=") ? "<" + descr.substring(1) : descr;
            for (DType t : values()) {
                if (t.descr.equals(d)) {
                    return t;
                }
            }
            return null;
        }
    }

    /** One array: its file, element type, shape (C order) and values widened to float. */
    public record Array(Path file, DType dtype, int[] shape, float[] data) {
        public Array {
            shape = shape.clone();
        }

        @Override
        public int[] shape() {
            return shape.clone();
        }

        /** The shape as NumPy prints it, e.g. {@code (2, 1, 20, 8)}. */
        public String shapeText() {
            return Npy.shapeText(shape);
        }
    }

    /**
     * Reads {@code file}.
     *
     * @throws NpyException naming the file: missing or unreadable, not a .npy file, an unsupported version,
     *                      dtype or order, a malformed header, truncated or trailing data
     */
    public static Array read(Path file) {
        return readBoth(file).array();
    }

    private static Wide readBoth(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new NpyException(file, "no such file");
        } catch (IOException e) {
            throw new NpyException(file, "cannot read: " + e);
        }
        if (bytes.length < MAGIC.length + 2 || !Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            if (bytes.length < MAGIC.length + 2 && Arrays.equals(bytes, 0, Math.min(bytes.length, MAGIC.length),
                    MAGIC, 0, Math.min(bytes.length, MAGIC.length))) {
                throw new NpyException(file, "truncated: " + bytes.length + " bytes, shorter than the .npy preamble");
            }
            throw new NpyException(file, "not a .npy file: it does not start with the magic \\x93NUMPY");
        }
        int major = bytes[6] & 0xFF;
        int minor = bytes[7] & 0xFF;
        int lengthBytes = switch (major) {
            case 1 -> 2;
            case 2, 3 -> 4;
            default -> throw new NpyException(file, "unsupported .npy format version " + major + "." + minor
                    + " (1.0, 2.0 and 3.0 are read)");
        };
        int preamble = 8 + lengthBytes;
        if (bytes.length < preamble) {
            throw new NpyException(file, "truncated: " + bytes.length + " bytes, shorter than the version " + major
                    + " preamble (" + preamble + " bytes)");
        }
        ByteBuffer le = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long headerLength = lengthBytes == 2 ? le.getShort(8) & 0xFFFF : le.getInt(8) & 0xFFFFFFFFL;
        if (preamble + headerLength > bytes.length) {
            throw new NpyException(file, "truncated: the header announces " + headerLength + " bytes, the file holds "
                    + (bytes.length - preamble) + " after the preamble");
        }
        String header = new String(bytes, preamble, (int) headerLength,
                major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        Map<String, Object> dict;
        try {
            dict = HeaderParser.parse(header);
        } catch (IllegalArgumentException e) {
            throw new NpyException(file, "malformed header " + abbreviate(header.strip()) + ": " + e.getMessage());
        }
        for (String key : dict.keySet()) {
            if (!List.of("descr", "fortran_order", "shape").contains(key)) {
                throw new NpyException(file, "malformed header: unexpected key '" + key
                        + "' (a .npy header holds exactly 'descr', 'fortran_order' and 'shape')");
            }
        }
        DType dtype = dtype(file, dict.get("descr"));
        Object order = dict.get("fortran_order");
        if (!(order instanceof Boolean)) {
            throw new NpyException(file, "malformed header: 'fortran_order' = " + order + " must be True or False");
        }
        if ((Boolean) order) {
            throw new NpyException(file, "fortran_order True is not supported: write the array in C order"
                    + " (numpy.ascontiguousarray)");
        }
        int[] shape = shape(file, dict.get("shape"));
        long count = 1;
        for (int d : shape) {
            count *= d;
            if (count > Integer.MAX_VALUE - 8) {
                throw new NpyException(file, "shape " + shapeText(shape) + " holds more than 2^31 elements");
            }
        }
        long dataStart = preamble + headerLength;
        long expected = count * dtype.itemSize();
        long present = bytes.length - dataStart;
        if (present < expected) {
            throw new NpyException(file, "truncated: shape " + shapeText(shape) + " of '" + dtype.descr() + "' needs "
                    + expected + " data bytes, the file holds " + present);
        }
        if (present > expected) {
            throw new NpyException(file, (present - expected) + " bytes follow the " + expected
                    + " data bytes of shape " + shapeText(shape) + " '" + dtype.descr() + "'");
        }
        double[] wide = new double[(int) count];
        ByteBuffer in = ByteBuffer.wrap(bytes).order(dtype.order());
        in.position((int) dataStart);
        for (int i = 0; i < wide.length; i++) {
            wide[i] = switch (dtype.itemSize()) {
                case 2 -> Float.float16ToFloat(in.getShort());
                case 4 -> in.getFloat();
                default -> in.getDouble();
            };
        }
        float[] data = new float[wide.length];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) wide[i];
        }
        return new Wide(new Array(file, dtype, shape, data), wide);
    }

    /**
     * Reads {@code file} keeping every value at full width (a {@code '<f8'} output is judged as written, never
     * rounded to float32 first): the array and its values as doubles.
     */
    public static Wide readWide(Path file) {
        return readBoth(file);
    }

    /** An array with its values at full width. */
    public record Wide(Array array, double[] values) {
    }

    /** Writes {@code data} of {@code shape} as {@code dtype} with a version 1.0 header (2.0 if it does not fit). */
    public static void write(Path file, DType dtype, int[] shape, float[] data) {
        write(file, dtype, shape, data, 1);
    }

    /**
     * Writes {@code data} (C order) of {@code shape} as {@code dtype} with a version {@code version} (1 or 2) header;
     * float16 values are rounded to nearest even. The file appears whole or not at all (written beside it, then
     * moved into place).
     *
     * @throws IllegalArgumentException for a shape that does not hold {@code data.length} elements or a bad version
     * @throws NpyException naming the file when it cannot be written
     */
    public static void write(Path file, DType dtype, int[] shape, float[] data, int version) {
        byte[] bytes = encode(dtype, shape, data, version);
        Path target = file.toAbsolutePath();
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            tmp = target.resolveSibling("." + target.getFileName() + "." + Long.toHexString(System.nanoTime()) + ".part");
            Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write already failed; report that
                }
            }
            throw new NpyException(file, "cannot write: " + e);
        }
    }

    /**
     * The bytes {@link #write} puts in a file: {@code data} (C order) of {@code shape} as {@code dtype} with a
     * version {@code version} (1 or 2) header.
     *
     * @throws IllegalArgumentException for a shape that does not hold {@code data.length} elements or a bad version
     */
    public static byte[] encode(DType dtype, int[] shape, float[] data, int version) {
        if (dtype == null || shape == null || data == null) {
            throw new IllegalArgumentException("dtype, shape and data must be present (got " + dtype + ", "
                    + Arrays.toString(shape) + ", " + (data == null ? "null" : "float[" + data.length + "]") + ")");
        }
        if (version != 1 && version != 2) {
            throw new IllegalArgumentException("version = " + version + " must be 1 or 2");
        }
        long count = 1;
        for (int d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("shape = " + Arrays.toString(shape) + " must have no negative sizes");
            }
            count *= d;
        }
        if (count != data.length) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " holds " + count
                    + " elements, data holds " + data.length);
        }
        String dict = "{'descr': '" + dtype.descr() + "', 'fortran_order': False, 'shape': " + shapeText(shape) + ", }";
        if (version == 1 && 10 + dict.length() + 1 > 0xFFFF) {
            version = 2;
        }
        int preamble = version == 1 ? 10 : 12;
        int total = preamble + dict.length() + 1;
        int padded = (total + ALIGN - 1) / ALIGN * ALIGN;
        String header = dict + " ".repeat(padded - total) + "\n";
        ByteBuffer out = ByteBuffer.allocate(preamble + header.length() + data.length * dtype.itemSize())
                .order(ByteOrder.LITTLE_ENDIAN);
        out.put(MAGIC).put((byte) version).put((byte) 0);
        if (version == 1) {
            out.putShort((short) header.length());
        } else {
            out.putInt(header.length());
        }
        out.put(header.getBytes(StandardCharsets.ISO_8859_1));
        out.order(dtype.order());
        for (float x : data) {
            switch (dtype.itemSize()) {
                case 2 -> out.putShort(Float.floatToFloat16(x));
                case 4 -> out.putFloat(x);
                default -> out.putDouble(x);
            }
        }
        return out.array();
    }

    /** A shape as NumPy prints a tuple: {@code ()}, {@code (5,)}, {@code (2, 3)}. */
    public static String shapeText(int[] shape) {
        if (shape.length == 1) {
            return "(" + shape[0] + ",)";
        }
        StringBuilder s = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            s.append(i == 0 ? "" : ", ").append(shape[i]);
        }
        return s.append(')').toString();
    }

    private static DType dtype(Path file, Object descr) {
        if (!(descr instanceof String s)) {
            throw new NpyException(file, "malformed header: 'descr' = " + descr + " must be a type string such as '<f4'");
        }
        DType t = DType.ofDescr(s);
        if (t == null) {
            throw new NpyException(file, "dtype '" + s + "' is not supported: attnproof reads float16, float32 and"
                    + " float64 ('<f2', '<f4', '<f8', or big-endian '>f2', '>f4', '>f8')");
        }
        return t;
    }

    private static int[] shape(Path file, Object shape) {
        if (!(shape instanceof List<?> dims)) {
            throw new NpyException(file, "malformed header: 'shape' = " + shape + " must be a tuple of sizes");
        }
        int[] out = new int[dims.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(dims.get(i) instanceof Long d) || d < 0 || d > Integer.MAX_VALUE) {
                throw new NpyException(file, "malformed header: shape entry " + dims.get(i)
                        + " must be a size between 0 and 2^31-1");
            }
            out[i] = (int) (long) d;
        }
        return out;
    }

    private static String abbreviate(String s) {
        return s.length() <= 100 ? s : s.substring(0, 97) + "...";
    }

    /** The Python literal subset of .npy headers: a dict of str keys to str, True/False/None, int or tuple of int. */
    static final class HeaderParser {
        private final String text;
        private int pos;

        private HeaderParser(String text) {
            this.text = text;
        }

        static Map<String, Object> parse(String text) {
            HeaderParser p = new HeaderParser(text);
            p.skip();
            Object value = p.value();
            p.skip();
            if (p.pos != text.length()) {
                throw p.error("the end of the header");
            }
            if (!(value instanceof Map<?, ?>)) {
                throw new IllegalArgumentException("the header must be a dict");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) value;
            return map;
        }

        private Object value() {
            if (pos >= text.length()) {
                throw error("a value");
            }
            char ch = text.charAt(pos);
            if (ch == '{') {
                return dict();
            }
            if (ch == '(' || ch == '[') {
                return tuple(ch == '(' ? ')' : ']');
            }
            if (ch == '\'' || ch == '"') {
                return string();
            }
            if (ch == '-' || Character.isDigit(ch)) {
                return integer();
            }
            for (String word : new String[] {"True", "False", "None"}) {
                if (text.startsWith(word, pos)) {
                    pos += word.length();
                    return word.equals("None") ? null : Boolean.valueOf(word.equals("True"));
                }
            }
            throw error("a value");
        }

        private Map<String, Object> dict() {
            Map<String, Object> map = new LinkedHashMap<>();
            pos++;
            while (true) {
                skip();
                if (peek() == '}') {
                    pos++;
                    return map;
                }
                if (peek() != '\'' && peek() != '"') {
                    throw error("a quoted key");
                }
                String key = string();
                skip();
                expect(':');
                skip();
                if (map.put(key, value()) != null) {
                    throw new IllegalArgumentException("key '" + key + "' appears twice");
                }
                skip();
                if (peek() == ',') {
                    pos++;
                } else if (peek() != '}') {
                    throw error("',' or '}'");
                }
            }
        }

        private List<Object> tuple(char close) {
            List<Object> items = new ArrayList<>();
            pos++;
            while (true) {
                skip();
                if (peek() == close) {
                    pos++;
                    return items;
                }
                items.add(value());
                skip();
                if (peek() == ',') {
                    pos++;
                } else if (peek() != close) {
                    throw error("',' or '" + close + "'");
                }
            }
        }

        private String string() {
            char quote = text.charAt(pos++);
            int start = pos;
            while (pos < text.length() && text.charAt(pos) != quote) {
                if (text.charAt(pos) == '\\') {
                    throw error("a string without escapes");
                }
                pos++;
            }
            if (pos >= text.length()) {
                throw error("a closing " + quote);
            }
            return text.substring(start, pos++);
        }

        private Long integer() {
            int start = pos;
            if (peek() == '-') {
                pos++;
            }
            while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
                pos++;
            }
            String digits = text.substring(start, pos);
            if (peek() == 'L') {
                pos++; // Python 2 long suffix
            }
            try {
                return Long.valueOf(digits);
            } catch (NumberFormatException e) {
                throw error("an integer");
            }
        }

        private void expect(char ch) {
            if (peek() != ch) {
                throw error("'" + ch + "'");
            }
            pos++;
        }

        private char peek() {
            return pos < text.length() ? text.charAt(pos) : '\0';
        }

        private void skip() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        private IllegalArgumentException error(String expected) {
            String found = pos < text.length() ? "'" + text.charAt(pos) + "'" : "the end";
            return new IllegalArgumentException("at offset " + pos + ": expected " + expected + ", found " + found);
        }
    }
}
