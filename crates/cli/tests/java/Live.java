import java.util.*;
import java.util.concurrent.*;

/**
 * Programs for the agent: each runs for a while with a steady churn of garbage (so that the
 * collector runs), and either leaks in one way or does not.
 *
 * Usage: java Live SCENARIO SECONDS
 * Prints "READY" once running (for attach), and "done N" at the end.
 */
public class Live {
    // "map": sessions of logged-out users are never removed ("mapfull": until the heap is full).
    static final class Session {
        final long id;
        final byte[] state = new byte[256];
        Session(long id) { this.id = id; }
    }
    static final class SessionStore {
        static final Map<Long, Session> sessions = new HashMap<>();
    }

    // "listeners": widgets register listeners and never unregister.
    static final class Widget {
        final byte[] pixels = new byte[192];
    }
    interface Listener { void onEvent(String e); }
    static final class EventBus {
        static final List<Listener> listeners = new ArrayList<>();
    }

    // "threadlocal": pool threads append traces to a thread-local list never cleared.
    static final class Trace {
        final byte[] frames = new byte[160];
    }
    static final ThreadLocal<List<Trace>> TRACES = ThreadLocal.withInitial(ArrayList::new);

    // "steady": a working set that swings up and down around a constant mean.
    static final class Job {
        final byte[] payload;
        Job(int n) { payload = new byte[n]; }
    }

    // "cache": an LRU cache that fills during warm-up and then stays full.
    static final class Cached {
        final byte[] value = new byte[256];
    }
    static final int CACHE_SIZE = 20_000;
    static final Map<Integer, Cached> CACHE = new LinkedHashMap<>(16, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<Integer, Cached> e) { return size() > CACHE_SIZE; }
    };

    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        long seconds = Long.parseLong(args[1]);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Random rnd = new Random(42);
        List<Job> working = new ArrayList<>();
        System.out.println("READY");
        System.out.flush();
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        long i = 0;
        while (System.nanoTime() < end) {
            for (int k = 0; k < 2000; k++, i++) {
                // Garbage that keeps the collector busy.
                sink = new byte[64 + (int) (i % 200)];
                sink = new StringBuilder().append("request ").append(i).toString();
            }
            switch (scenario) {
                case "map":
                    // At most 15 sessions a millisecond (5 MB/s, 126 MB in 24 s): unbounded, the
                    // rate was the machine's speed, and a fast CI machine filled -Xmx160m in 24 s.
                    if (SessionStore.sessions.size() < (System.nanoTime() - start) / 1_000_000 * 15) {
                        for (int k = 0; k < 40; k++) SessionStore.sessions.put(i + k, new Session(i + k));
                    }
                    break;
                case "mapfull": {
                    // The same leak, filling the heap over the first half of the run whatever
                    // the machine's speed, then no more while it is nearly full: a heap held at
                    // its limit, where the JVM collects and goes on, not dies.
                    Runtime rt = Runtime.getRuntime();
                    double half = seconds * 1e9 / 2;
                    double share = 0.95 * Math.min(1.0, (System.nanoTime() - start) / half);
                    // Up to 100 batches a loop: 40 sessions a loop kept up only where a loop took
                    // 3 ms or less, and a loaded machine's heap never filled in 12 s.
                    for (int b = 0; b < 100 && rt.totalMemory() - rt.freeMemory() < share * rt.maxMemory(); b++) {
                        for (int k = 0; k < 40; k++) SessionStore.sessions.put(i * 100 + b * 40L + k, new Session(i + k));
                    }
                    break;
                }
                case "listeners":
                    for (int k = 0; k < 40; k++) {
                        final Widget w = new Widget();
                        EventBus.listeners.add(e -> sink = w);
                    }
                    break;
                case "threadlocal": {
                    List<Future<?>> fs = new ArrayList<>();
                    for (int k = 0; k < 2; k++) {
                        fs.add(pool.submit(() -> {
                            for (int t = 0; t < 20; t++) TRACES.get().add(new Trace());
                        }));
                    }
                    for (Future<?> f : fs) f.get();
                    break;
                }
                case "steady": {
                    // Mean 3000 jobs; swings between 1000 and 5000.
                    int target = 3000 + (int) (2000 * Math.sin(i / 200_000.0)) + rnd.nextInt(300);
                    while (working.size() < target) working.add(new Job(200 + rnd.nextInt(200)));
                    while (working.size() > target) working.remove(working.size() - 1);
                    if (!working.isEmpty()) working.set(rnd.nextInt(working.size()), new Job(200 + rnd.nextInt(200)));
                    break;
                }
                case "cache":
                    for (int k = 0; k < 40; k++) {
                        int key = rnd.nextInt(200_000);
                        CACHE.computeIfAbsent(key, x -> new Cached());
                    }
                    break;
                default:
                    throw new IllegalArgumentException("unknown scenario " + scenario);
            }
            Thread.sleep(1);
        }
        // Ends as a service that leaks is stopped: with what it holds still held. Shutting the
        // pool down first would free the thread-locals' traces, and a heap walk after that
        // rightly saw no leak (a JDK 25 CI run).
        System.out.println("done " + i);
        System.out.flush();
        System.exit(0);
    }
}
