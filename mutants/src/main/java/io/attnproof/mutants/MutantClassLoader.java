package io.attnproof.mutants;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * The isolated, child-first loader of one mutant run: the mutated classes first, then every other class of the
 * system under test, its claim tests, the fixtures, the oracles and their libraries, each defined afresh from the
 * runner's class path (so static state such as memos, counters and evidence sinks starts clean). Only the JDK,
 * the JUnit Platform (shared so the runner can drive the Launcher) and the runner itself come from the parent.
 * Also carries the system properties this run overrides (see {@link ScopedProperties}).
 */
public final class MutantClassLoader extends ClassLoader {
    /** Package prefixes always taken from the parent. */
    public static final List<String> PARENT_FIRST = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.",
            "org.junit.", "org.opentest4j.", "org.apiguardian.", "io.attnproof.mutants.");

    static {
        registerAsParallelCapable();
    }

    private final Map<String, byte[]> mutated;
    private final ClassLoader source;
    private final Map<String, String> properties;

    /**
     * A loader named {@code name} defining {@code mutated} (binary name to bytes) ahead of the classes it reads from
     * {@code source}, whose parent is {@code source} as well; {@code properties} are this run's overrides.
     */
    public MutantClassLoader(String name, Map<String, byte[]> mutated, ClassLoader source,
            Map<String, String> properties) {
        super(name, source);
        this.mutated = Map.copyOf(mutated);
        this.source = source;
        this.properties = Map.copyOf(properties);
    }

    /** The system property {@code key} as this run sees it, or null when the run does not override it. */
    public String property(String key) {
        return properties.get(key);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                if (parentFirst(name)) {
                    c = getParent().loadClass(name);
                } else {
                    byte[] bytes = mutated.get(name);
                    if (bytes == null) {
                        bytes = read(name);
                    }
                    c = bytes == null ? getParent().loadClass(name) : defineClass(name, bytes, 0, bytes.length);
                }
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    static boolean parentFirst(String name) {
        for (String prefix : PARENT_FIRST) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private byte[] read(String name) {
        try (InputStream in = source.getResourceAsStream(name.replace('.', '/') + ".class")) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read class " + name, e);
        }
    }
}
