package io.attnproof.attention.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the native lanes find what the build made: the emulation libraries and the nvcc-built PTX under the
 * directory named by {@code attnproof.native.dir} (the Maven build sets it to {@code system-under-test/target/native});
 * the checked-in fallback PTX and the MSL source as classpath resources ({@code /native/...}).
 */
final class NativeFiles {
    /** The system property naming the directory of built native artefacts. */
    static final String DIR_PROPERTY = "attnproof.native.dir";
    static final String CUDA_EMU_LIBRARY = "libattnproof_cuda_emu.so";
    /** The cuda-emu build with FMA contraction on (-ffp-contract=fast); built only where the CPU has FMA. */
    static final String CUDA_EMU_FMA_LIBRARY = "libattnproof_cuda_emu_fma.so";
    static final String METAL_EMU_LIBRARY = "libattnproof_metal_emu.so";
    /** The PTX the nvcc profile builds, relative to the native directory. */
    static final String BUILT_PTX = "ptx/sinks_attn.ptx";
    static final String FALLBACK_PTX_RESOURCE = "/native/cuda/sinks_attn.ptx";
    static final String METAL_SOURCE_RESOURCE = "/native/metal/sinks_attn.metal";

    private NativeFiles() {
    }

    /** The native directory: the property's value, else {@code target/native} or {@code system-under-test/target/native}. */
    static Path dir() {
        String configured = System.getProperty(DIR_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        Path local = Path.of("target", "native");
        return Files.isDirectory(local) ? local : Path.of("system-under-test", "target", "native");
    }

    static Path library(String name) {
        return dir().resolve(name);
    }

    /** A PTX text and where it came from. */
    record Ptx(String source, byte[] text) {
    }

    /** The nvcc-built PTX when the build made one, else the checked-in fallback. */
    static Ptx ptx() {
        Path built = dir().resolve(BUILT_PTX);
        try {
            if (Files.isRegularFile(built)) {
                return new Ptx(built.toString(), Files.readAllBytes(built));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + built, e);
        }
        return new Ptx("classpath:" + FALLBACK_PTX_RESOURCE, resource(FALLBACK_PTX_RESOURCE));
    }

    /** The bytes of classpath resource {@code name}. */
    static byte[] resource(String name) {
        try (InputStream in = NativeFiles.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("classpath resource " + name + " is missing (the build copies native/"
                        + " into the classes)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read classpath resource " + name, e);
        }
    }
}
