package io.attnproof.mutants;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.UniqueId;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The claim tests of the system under test and of the conformance kit: which test classes hold tests of which claim (a method's
 * {@code @Claim}, else its class's or an enclosing class's), and a JUnit Platform run of exactly the tests of some
 * claims inside one class loader.
 */
public final class ClaimTests {
    /** The annotation marking claim tests (read by name: each run has its own copy of the class). */
    public static final String CLAIM = "io.attnproof.fixtures.claim.Claim";
    private static final Set<String> TEST_ANNOTATIONS = Set.of("org.junit.jupiter.api.Test",
            "org.junit.jupiter.params.ParameterizedTest", "org.junit.jupiter.api.RepeatedTest",
            "org.junit.jupiter.api.TestFactory", "org.junit.jupiter.api.TestTemplate");
    private static final int MESSAGE_LIMIT = 2000;

    private final Map<String, SortedSet<String>> classesByClaim;
    private final Map<String, SortedSet<String>> concreteByClaim;

    private ClaimTests(Map<String, SortedSet<String>> classesByClaim, Map<String, SortedSet<String>> concreteByClaim) {
        this.classesByClaim = classesByClaim;
        this.concreteByClaim = concreteByClaim;
    }

    /** A test that failed (or a class whose setup failed) and why. */
    public record Killer(String test, String message) {
    }

    /** What one run saw. */
    public record Outcome(int run, int passed, int failed, int skipped, List<Killer> killers) {
    }

    /**
     * Indexes every test class compiled under {@code testClasses}, loading each (uninitialised) through
     * {@code loader}.
     */
    public static ClaimTests index(Path testClasses, ClassLoader loader) {
        return index(List.of(testClasses), loader);
    }

    /**
     * Indexes every test class compiled under each of {@code testClassRoots} (the system under test's and the
     * conformance kit's), loading each (uninitialised) through {@code loader}: a claim's tests are those of every root.
     */
    public static ClaimTests index(List<Path> testClassRoots, ClassLoader loader) {
        Map<String, SortedSet<String>> byClaim = new TreeMap<>();
        List<String> names = new ArrayList<>();
        for (Path testClasses : testClassRoots) {
            try (Stream<Path> files = Files.walk(testClasses)) {
                files.filter(p -> p.toString().endsWith(".class") && !p.getFileName().toString().contains("$"))
                        .forEach(p -> {
                            String rel = testClasses.relativize(p).toString().replace('\\', '/');
                            names.add(rel.substring(0, rel.length() - ".class".length()).replace('/', '.'));
                        });
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the claim tests under " + testClasses, e);
            }
        }
        Map<String, SortedSet<String>> concrete = new TreeMap<>();
        for (String name : names) {
            Class<?> c;
            try {
                c = Class.forName(name, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw new IllegalStateException("cannot load test class " + name + ": " + e, e);
            }
            collect(c, name, byClaim);
            if (!java.lang.reflect.Modifier.isAbstract(c.getModifiers())) {
                // The tests a concrete class runs, its inherited ones included (a lane's LaneClaims subclass).
                for (Class<?> s = c.getSuperclass(); s != null && s != Object.class; s = s.getSuperclass()) {
                    for (Method m : s.getDeclaredMethods()) {
                        String claim = isTest(m) ? claimOf(s, m) : null;
                        if (claim != null) {
                            concrete.computeIfAbsent(claim, k -> new TreeSet<>()).add(name);
                        }
                    }
                }
                collect(c, name, concrete);
            }
        }
        return new ClaimTests(byClaim, concrete);
    }

    /**
     * The concrete test classes running at least one test of one of {@code claims}, inherited tests included (the
     * lanes' claim tests live in an abstract class that each lane's class extends): what a native mutant runs.
     */
    public SortedSet<String> concreteClassesFor(Collection<String> claims) {
        SortedSet<String> out = new TreeSet<>();
        for (String claim : claims) {
            out.addAll(concreteByClaim.getOrDefault(claim, new TreeSet<>()));
        }
        return out;
    }

    private static void collect(Class<?> c, String topLevel, Map<String, SortedSet<String>> byClaim) {
        for (Method m : c.getDeclaredMethods()) {
            if (isTest(m)) {
                String claim = claimOf(c, m);
                if (claim != null) {
                    byClaim.computeIfAbsent(claim, k -> new TreeSet<>()).add(topLevel);
                }
            }
        }
        for (Class<?> nested : c.getDeclaredClasses()) {
            collect(nested, topLevel, byClaim);
        }
    }

    /** The top-level test classes holding at least one test of one of {@code claims}. */
    public SortedSet<String> classesFor(Collection<String> claims) {
        SortedSet<String> out = new TreeSet<>();
        for (String claim : claims) {
            out.addAll(classesByClaim.getOrDefault(claim, new TreeSet<>()));
        }
        return out;
    }

    /** Every claim that has a test. */
    public Set<String> claims() {
        return classesByClaim.keySet();
    }

    /**
     * Runs the tests of {@code claims} in {@code classes}, loaded through {@code loader} (also the context class
     * loader for the run), on the calling thread.
     */
    public static Outcome run(ClassLoader loader, Collection<String> claims, Collection<String> classes) {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            List<DiscoverySelector> selectors = new ArrayList<>();
            for (String name : classes) {
                selectors.add(DiscoverySelectors.selectClass(Class.forName(name, false, loader)));
            }
            Set<String> wanted = Set.copyOf(claims);
            PostDiscoveryFilter byClaim = descriptor -> {
                if (descriptor.getSource().orElse(null) instanceof MethodSource ms) {
                    String claim = claimOf(ms.getJavaClass(), ms.getJavaMethod());
                    return FilterResult.includedIf(claim != null && wanted.contains(claim), () -> "claim " + claim,
                            () -> "claim " + claim + " not attacked");
                }
                return FilterResult.included("container");
            };
            LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                    .selectors(selectors)
                    .filters(byClaim)
                    .enableImplicitConfigurationParameters(false)
                    .configurationParameter("junit.jupiter.execution.parallel.enabled", "false")
                    .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "false")
                    .build();
            Launcher launcher = LauncherFactory.create(LauncherConfig.builder()
                    .enableTestExecutionListenerAutoRegistration(false)
                    .enableLauncherSessionListenerAutoRegistration(false)
                    .enableLauncherDiscoveryListenerAutoRegistration(false)
                    .enablePostDiscoveryFilterAutoRegistration(false)
                    .build());
            Recorder recorder = new Recorder();
            launcher.execute(request, recorder);
            return recorder.outcome();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot load test class: " + e.getMessage(), e);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** The claim id governing test method {@code m} of {@code testClass}, or null for a test with none. */
    static String claimOf(Class<?> testClass, Method m) {
        String onMethod = claimOn(m.getAnnotations());
        if (onMethod != null) {
            return onMethod;
        }
        for (Class<?> c = testClass; c != null; c = c.getEnclosingClass()) {
            String onClass = claimOn(c.getAnnotations());
            if (onClass != null) {
                return onClass;
            }
        }
        return null;
    }

    private static String claimOn(Annotation[] annotations) {
        for (Annotation a : annotations) {
            if (a.annotationType().getName().equals(CLAIM)) {
                try {
                    return String.valueOf(a.annotationType().getMethod("value").invoke(a));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot read " + a, e);
                }
            }
        }
        return null;
    }

    private static boolean isTest(Method m) {
        for (Annotation a : m.getAnnotations()) {
            if (TEST_ANNOTATIONS.contains(a.annotationType().getName())) {
                return true;
            }
        }
        return false;
    }

    /** Collects counts and every failure of a run. */
    private static final class Recorder implements TestExecutionListener {
        final AtomicInteger run = new AtomicInteger();
        final AtomicInteger passed = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger skipped = new AtomicInteger();
        final List<Killer> killers = new ArrayList<>();

        @Override
        public void executionSkipped(TestIdentifier id, String reason) {
            if (id.isTest()) {
                skipped.incrementAndGet();
            }
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            if (id.isTest()) {
                run.incrementAndGet();
                switch (result.getStatus()) {
                    case SUCCESSFUL -> passed.incrementAndGet();
                    case ABORTED -> skipped.incrementAndGet();
                    case FAILED -> failed.incrementAndGet();
                }
            }
            if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                Throwable t = result.getThrowable().orElse(null);
                String message = t == null ? "failed without a throwable"
                        : t instanceof AssertionError && t.getMessage() != null ? t.getMessage() : t.toString();
                if (message.length() > MESSAGE_LIMIT) {
                    message = message.substring(0, MESSAGE_LIMIT) + " ...";
                }
                synchronized (killers) {
                    killers.add(new Killer(name(id), message));
                }
            }
        }

        Outcome outcome() {
            synchronized (killers) {
                return new Outcome(run.get(), passed.get(), failed.get(), skipped.get(), List.copyOf(killers));
            }
        }

        private static String name(TestIdentifier id) {
            TestSource source = id.getSource().orElse(null);
            if (source instanceof MethodSource ms) {
                String cls = ms.getClassName().substring(ms.getClassName().lastIndexOf('.') + 1);
                String base = cls.substring(cls.lastIndexOf('$') + 1) + "#" + ms.getMethodName();
                UniqueId.Segment last = id.getUniqueIdObject().getLastSegment();
                if (!last.getType().endsWith("invocation")) {
                    return base;
                }
                String index = last.getValue().startsWith("#") ? last.getValue().substring(1) : last.getValue();
                String display = id.getDisplayName();
                String prefix = "[" + index + "]";
                display = display.startsWith(prefix) ? display.substring(prefix.length()).strip() : display;
                return base + prefix + (display.isEmpty() ? "" : " " + display);
            }
            if (source instanceof ClassSource cs) {
                return cs.getClassName().substring(cs.getClassName().lastIndexOf('.') + 1) + " (class)";
            }
            return id.getDisplayName();
        }
    }
}
