package io.attnproof.mutants;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

/**
 * Compiles mutated source files in process with {@link javax.tools.JavaCompiler} against a module's compiled
 * classes and their class path (the system under test's, or the conformance kit's); the class files stay in memory. Any compiler error makes the mutant stale, with javac's
 * messages.
 */
public final class MutantCompiler {
    private final List<Path> classpath;

    /** A compiler resolving everything outside the mutated files from {@code classpath}. */
    public MutantCompiler(List<Path> classpath) {
        this.classpath = List.copyOf(classpath);
    }

    /**
     * Compiles {@code sources} (repository-relative path under one of {@link PatchParser#JAVA_ROOTS} to its text);
     * returns binary class name to class file bytes, nested and anonymous classes included.
     */
    public Map<String, byte[]> compile(Map<String, String> sources) throws StaleException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("no system Java compiler: run the mutants on a JDK, not a JRE");
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Map<String, byte[]> classes = new ConcurrentHashMap<>();
        try (StandardJavaFileManager standard = javac.getStandardFileManager(diagnostics, Locale.ROOT,
                StandardCharsets.UTF_8)) {
            standard.setLocationFromPaths(StandardLocation.CLASS_PATH, classpath);
            standard.setLocationFromPaths(StandardLocation.SOURCE_PATH, List.of());
            JavaFileManager memory = new ForwardingJavaFileManager<>(standard) {
                @Override
                public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
                        FileObject sibling) {
                    return new SimpleJavaFileObject(URI.create("mem:///" + className.replace('.', '/') + kind.extension),
                            kind) {
                        @Override
                        public OutputStream openOutputStream() {
                            return new ByteArrayOutputStream() {
                                @Override
                                public void close() {
                                    classes.put(className, toByteArray());
                                }
                            };
                        }
                    };
                }
            };
            List<JavaFileObject> units = new ArrayList<>();
            for (Map.Entry<String, String> e : new TreeMap<>(sources).entrySet()) {
                units.add(new Source(e.getKey(), e.getValue()));
            }
            // The system under test's CPU fast path compiles against the Vector API incubator module.
            List<String> options = List.of("--release", "25", "--add-modules", "jdk.incubator.vector", "-proc:none", "-g",
                    "-implicit:none", "-nowarn", "-Xlint:none", "-encoding", "UTF-8");
            boolean ok = javac.getTask(null, memory, diagnostics, options, null, units).call();
            if (!ok) {
                StringBuilder message = new StringBuilder("the mutated sources do not compile:");
                for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                    if (d.getKind() == Diagnostic.Kind.ERROR) {
                        String name = d.getSource() == null ? "javac" : ((Source) d.getSource()).path;
                        message.append("\n").append(name).append(":").append(d.getLineNumber()).append(": error: ")
                                .append(d.getMessage(Locale.ROOT));
                    }
                }
                if (message.indexOf("\n") < 0) {
                    message.append(" javac reported no error (").append(diagnostics.getDiagnostics().size())
                            .append(" diagnostics)");
                }
                throw new StaleException(message.toString());
            }
        } catch (IOException e) {
            throw new IllegalStateException("javac's file manager failed: " + e.getMessage(), e);
        }
        return Map.copyOf(classes);
    }

    /** A source held in memory under its path relative to the source root (javac checks the file name). */
    private static final class Source extends SimpleJavaFileObject {
        final String path;
        final String text;

        Source(String path, String text) {
            super(URI.create("string:///" + relative(path)), Kind.SOURCE);
            this.path = path;
            this.text = text;
        }

        private static String relative(String path) {
            String root = PatchParser.javaRoot(path);
            return root == null ? path : path.substring(root.length());
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }
}
