package io.attnproof.mutants;

import java.io.Serial;
import java.util.Properties;

/**
 * System properties that answer differently inside a mutant run: a lookup made by a thread whose context class
 * loader is (or descends from) a {@link MutantClassLoader} sees that run's overrides first. This is how mutants
 * running side by side each write evidence to their own directory even though the fixtures read
 * {@code attnproof.evidence.dir} from {@link System#getProperty}. Everything else reads through unchanged.
 */
final class ScopedProperties extends Properties {
    @Serial
    private static final long serialVersionUID = 1L;

    private ScopedProperties(Properties base) {
        super();
        putAll(base);
    }

    /** Installs the scoped view once per JVM (idempotent). */
    static synchronized void install() {
        Properties current = System.getProperties();
        if (!(current instanceof ScopedProperties)) {
            System.setProperties(new ScopedProperties(current));
        }
    }

    @Override
    public String getProperty(String key) {
        String scoped = scoped(key);
        return scoped != null ? scoped : super.getProperty(key);
    }

    @Override
    public String getProperty(String key, String defaultValue) {
        String scoped = scoped(key);
        return scoped != null ? scoped : super.getProperty(key, defaultValue);
    }

    private static String scoped(String key) {
        for (ClassLoader l = Thread.currentThread().getContextClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof MutantClassLoader m) {
                return m.property(key);
            }
        }
        return null;
    }
}
