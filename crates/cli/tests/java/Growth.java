import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.*;
import java.util.concurrent.*;

/**
 * Programs that leak in different ways, and programs that do not, each run in phases with a
 * live heap dump (what `jcmd PID GC.heap_dump` writes) after every phase.
 *
 * Usage: java Growth SCENARIO PHASES OUTDIR
 */
public class Growth {
    // Scenario "map": logged-out sessions of a few users are never removed from the map.
    static final class Session {
        final long id;
        final String user;
        final byte[] state = new byte[512];
        Session(long id, String user) { this.id = id; this.user = user; }
    }
    static final class SessionStore {
        static final Map<Long, Session> sessions = new HashMap<>();
    }

    // Scenario "listeners": widgets register listeners on a global bus and never unregister.
    static final class Widget {
        final byte[] pixels = new byte[256];
    }
    interface Listener { void onEvent(String e); }
    static final class EventBus {
        static final List<Listener> listeners = new CopyOnWriteArrayList<>();
    }

    // Scenario "threadlocal": pool threads append traces to a thread-local list never cleared.
    static final class Trace {
        final byte[] frames = new byte[200];
    }
    static final ThreadLocal<List<Trace>> TRACES = ThreadLocal.withInitial(ArrayList::new);
    static ExecutorService pool;

    // Scenario "twoindexes": customers leave byId but stay in byName.
    static final class Customer {
        final int id;
        final String name;
        final byte[] profile = new byte[300];
        Customer(int id, String name) { this.id = id; this.name = name; }
    }
    static final class Directory {
        static final Map<Integer, Customer> byId = new HashMap<>();
        static final TreeMap<String, Customer> byName = new TreeMap<>();
    }

    // Scenario "slowjitter": a slow audit leak under a working set of the same class that swings.
    static final class Record {
        final byte[] body = new byte[400];
    }
    static final class AuditLog {
        static final List<Record> records = new ArrayList<>();
    }

    // Working sets that come and go (used by several scenarios), and the non-leaking scenarios.
    static final class WorkingSet {
        static List<Object> current = new ArrayList<>();
    }
    static final class Document {
        final List<char[]> paragraphs = new ArrayList<>();
    }
    static final class LruCache extends LinkedHashMap<String, byte[]> {
        final int capacity;
        LruCache(int capacity) { super(16, 0.75f, true); this.capacity = capacity; }
        @Override protected boolean removeEldestEntry(Map.Entry<String, byte[]> e) { return size() > capacity; }
    }
    static final class Caches {
        static final LruCache pages = new LruCache(6000);
    }

    static final Random random = new Random(42);
    static long next = 0;

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        int phases = Integer.parseInt(args[1]);
        String out = args[2];
        pool = Executors.newFixedThreadPool(3);
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        for (int p = 1; p <= phases; p++) {
            switch (scenario) {
                case "map": map(); break;
                case "listeners": listeners(); break;
                case "threadlocal": threadLocal(); break;
                case "twoindexes": twoIndexes(); break;
                case "slowjitter": slowJitter(); break;
                case "phases": phases(); break;
                case "cache": cache(); break;
                default: throw new IllegalArgumentException("unknown scenario " + scenario);
            }
            bean.dumpHeap(String.format("%s/%s-%02d.hprof", out, scenario, p), true);
        }
        pool.shutdown();
        System.out.println("DONE");
    }

    static void workingSet(int maxKb) {
        List<Object> ws = new ArrayList<>();
        int n = random.nextInt(maxKb);
        for (int i = 0; i < n; i++) ws.add(new byte[1024]);
        WorkingSet.current = ws;
    }

    /** A working set of long[], so that it does not share a class with what is measured. */
    static void longWorkingSet(int maxKb) {
        List<Object> ws = new ArrayList<>();
        int n = random.nextInt(maxKb);
        for (int i = 0; i < n; i++) ws.add(new long[127]);
        WorkingSet.current = ws;
    }

    static void map() {
        List<Long> open = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            long id = next++;
            SessionStore.sessions.put(id, new Session(id, "user-" + (id % 97)));
            open.add(id);
        }
        for (long id : open) {
            if (id % 4 != 0) SessionStore.sessions.remove(id); // every fourth logout is forgotten
        }
        workingSet(2048);
    }

    static void listeners() {
        for (int i = 0; i < 1500; i++) {
            Widget w = new Widget();
            EventBus.listeners.add(e -> w.pixels[0]++);
        }
        workingSet(2048);
    }

    static void threadLocal() throws Exception {
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < 3000; i++) done.add(pool.submit(() -> TRACES.get().add(new Trace())));
        for (Future<?> f : done) f.get();
        workingSet(2048);
    }

    static void twoIndexes() {
        List<Customer> batch = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            int id = (int) next++;
            Customer c = new Customer(id, "customer-" + id);
            Directory.byId.put(id, c);
            Directory.byName.put(c.name, c);
            batch.add(c);
        }
        for (Customer c : batch) Directory.byId.remove(c.id); // forgets byName
        workingSet(2048);
    }

    static void slowJitter() {
        for (int i = 0; i < 700; i++) AuditLog.records.add(new Record());
        List<Object> ws = new ArrayList<>();
        int n = random.nextInt(6000);
        for (int i = 0; i < n; i++) ws.add(new Record());
        WorkingSet.current = ws;
    }

    static void phases() {
        Document d = new Document();
        int n = 500 + random.nextInt(4000);
        for (int i = 0; i < n; i++) d.paragraphs.add(new char[1000]);
        WorkingSet.current = new ArrayList<>(List.of(d));
    }

    static void cache() {
        for (int i = 0; i < 2000; i++) {
            long id = next++;
            Caches.pages.put("page-" + id, new byte[300]);
        }
        for (int i = 0; i < 3000; i++) Caches.pages.get("page-" + random.nextInt((int) next));
        // Not byte[], the class of the cached pages: a cache that fills under a working set of
        // its own class whose last heap happens to be high is a borderline case of its own
        // (5% more byte[] in the last of these heaps made byte[] a candidate in a CI run).
        longWorkingSet(2048);
    }
}
