package io.leakscope;

import java.lang.ref.WeakReference;
import java.util.Arrays;

/**
 * Assertions about object lifetimes, checked by the leakscope agent.
 *
 * <p>{@code LeakScope.expectDead(session)} says that {@code session} should now be garbage. The
 * agent then reports it at each heap walk while it is still reachable, and
 * {@code leakscope check PID} (or {@code leakscope check DUMP.hprof}) prints the shortest path
 * from a GC root that keeps it alive and the bytes it retains. Without the agent every call
 * returns at once.
 */
public final class LeakScope {
    private LeakScope() {}

    /** True once the agent has bound the natives; the agent sets it when it attaches late. */
    private static volatile boolean agent = bound();

    /** The expectations, held weakly; collected ones are dropped when the array fills. */
    private static Expected[] expected = new Expected[16];
    private static int count;

    /** Whether the leakscope agent is loaded in this JVM. */
    public static boolean agentLoaded() {
        return agent;
    }

    /** Declares that {@code o} should be unreachable from now on; a no-op without the agent. */
    public static void expectDead(Object o) {
        if (!agent || o == null) {
            return;
        }
        String site = expectDead0(o);
        register(new Expected(o, site, System.currentTimeMillis()));
    }

    private static synchronized void register(Expected e) {
        if (count == expected.length) {
            int kept = 0;
            for (int i = 0; i < count; i++) {
                if (expected[i].get() != null) {
                    expected[kept++] = expected[i];
                }
            }
            Arrays.fill(expected, kept, count, null);
            count = kept;
            if (count > expected.length / 2) {
                expected = Arrays.copyOf(expected, expected.length * 2);
            }
        }
        expected[count++] = e;
    }

    /**
     * Called with {@code this} at the entry of every instance method of a class that
     * {@code leakscope run --watch} watches (the agent adds the call to the bytecode); records
     * when and where a watched object was last used.
     */
    public static void touched(Object self) {
        if (agent) {
            touched0(self);
        }
    }

    /**
     * Called with {@code this} before every return of a constructor of a class that
     * {@code leakscope run --watch} watches; records when and where a watched object was
     * created, so that its clock starts then.
     */
    public static void created(Object self) {
        if (agent) {
            created0(self);
        }
    }

    private static boolean bound() {
        try {
            return bound0();
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    /** Bound by the agent: true. */
    private static native boolean bound0();

    /** Bound by the agent: records an access to {@code self} if it is watched. */
    private static native void touched0(Object self);

    /** Bound by the agent: records the creation of {@code self} if it is watched. */
    private static native void created0(Object self);

    /** Bound by the agent: tags {@code o} and returns where {@code expectDead} was called. */
    private static native String expectDead0(Object o);

    /**
     * One expectation, kept in the heap so that a heap dump shows it: a weak reference does not
     * keep the object alive, and leakscope follows it from here.
     */
    static final class Expected extends WeakReference<Object> {
        final String site;
        final long atMillis;

        Expected(Object o, String site, long atMillis) {
            super(o);
            this.site = site;
            this.atMillis = atMillis;
        }
    }
}
