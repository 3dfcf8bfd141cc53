package io.attnproof.attention.pit;

import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.extension.DynamicTestInvocationContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

/**
 * Skips test bodies, and their before/after methods, while PIT's JUnit 5 plugin lists a mutation minion's tests, and
 * nowhere else. The plugin finds test units by executing each relevant test class once, in full
 * ({@code JUnit5TestUnitFinder.findTestUnits}: the events name the tests, parameterised invocations included), at the
 * start of every mutation minion, one per mutated class: 88 full runs of the claim tests in a whole-module run,
 * whose results it discards. The tests that judge a mutant run later through {@code JUnit5TestUnit.execute}, with
 * that finder off the stack, and are never touched; the coverage minion (PIT's coverage comes from its finder pass)
 * is never touched either, nor is surefire or the curated campaign (neither turns on extension autodetection).
 *
 * <p>Active only with {@code -Dattnproof.pit.discoveryPass=skip} and Jupiter's extension autodetection, both set for
 * PIT's minions in the parent pom. Factory methods and constructors still run: a {@code @TestFactory} names its
 * dynamic tests by running. A failure of this rule is loud, never silent: a skip in the coverage minion leaves the
 * mutations without coverage, a skip while a mutant is judged lets it survive, and the thresholds fail the run.
 */
public final class DiscoveryPass implements InvocationInterceptor {
    static final String PROPERTY = "attnproof.pit.discoveryPass";
    static final String FINDER = "org.pitest.junit5.JUnit5TestUnitFinder";
    static final String MUTATION_MINION = "org.pitest.mutationtest.execute.MutationTestMinion";

    /** True when {@code stack} (class names, innermost first) is a mutation minion's test-unit discovery. */
    static boolean discovering(List<String> stack) {
        return stack.contains(FINDER) && stack.contains(MUTATION_MINION);
    }

    static boolean active() {
        return "skip".equals(System.getProperty(PROPERTY)) && discovering(StackWalker.getInstance()
                .walk(s -> s.map(StackWalker.StackFrame::getClassName).toList()));
    }

    private static <T> void run(Invocation<T> invocation) throws Throwable {
        if (active()) {
            invocation.skip();
        } else {
            invocation.proceed();
        }
    }

    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptBeforeEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptDynamicTest(Invocation<Void> invocation, DynamicTestInvocationContext call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptAfterEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }

    @Override
    public void interceptAfterAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        run(invocation);
    }
}
