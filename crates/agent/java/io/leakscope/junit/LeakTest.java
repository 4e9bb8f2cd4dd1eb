package io.leakscope.junit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A JUnit 5 test that fails when its scenario leaks.
 *
 * <p>The method runs once as any test does, then {@link #rounds()} rounds of
 * {@link #runsPerRound()} more runs, with a heap dump of this JVM's live objects after each
 * round; {@code leakscope growth} judges the dumps, and the test fails with the growing data
 * structure, what piles up in it and its path from a GC root. The rounds are the same work, so
 * whatever keeps more bytes at every round than {@link #leakBytesPerRun()} times the runs is a
 * leak, however small beside the heap. Objects the scenario declared
 * dead with {@code LeakScope.expectDead} (when the leakscope agent is loaded) and that are
 * still reachable after the last round fail it too, with the path that keeps them.
 *
 * <pre>{@code
 * import io.leakscope.junit.LeakTest;
 *
 * class CartTest {
 *     @LeakTest
 *     void checkoutLeavesNothingBehind() { shop.checkout(new Cart()); }
 * }
 * }</pre>
 *
 * <p>The {@code leakscope} binary is found through the system property {@code leakscope.bin},
 * the environment variable {@code LEAKSCOPE_BIN}, or {@code PATH}; the dumps are written under
 * {@code java.io.tmpdir} and removed afterwards unless {@code -Dleakscope.keep=true}.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Test
@ExtendWith(LeakCheck.class)
public @interface LeakTest {
    /** Rounds of runs, a heap dump after each: the series {@code leakscope growth} judges. */
    int rounds() default 6;

    /** Runs of the test method in each round. */
    int runsPerRound() default 100;

    /**
     * Bytes a run may leave behind: a class or data structure that kept more than this many
     * bytes per run at every round fails the test, however small beside the heap (one
     * {@code String[3]} kept per run is 32 bytes). The default, 8, is under any object's size.
     */
    int leakBytesPerRun() default 8;
}
