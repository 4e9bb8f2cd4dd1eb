import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A steady heap for timing heap walks: a static registry of SESSIONS sessions (the class a
 * watch rule names, five references from a static field) beside OTHER unrelated map entries,
 * held for SECONDS while a little garbage keeps the collector running.
 *
 * Usage: java WalkHeap SESSIONS OTHER SECONDS
 */
public class WalkHeap {
    static final class Session {
        final String user;
        final long[] data = new long[4];

        Session(String user) {
            this.user = user;
        }
    }

    static final Map<String, Session> SESSIONS = new ConcurrentHashMap<>();
    static final List<Map<Integer, Object>> OTHER = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int sessions = Integer.parseInt(args[0]);
        int other = Integer.parseInt(args[1]);
        long seconds = Long.parseLong(args[2]);
        for (int i = 0; i < sessions; i++) SESSIONS.put("user-" + i, new Session("user-" + i));
        for (int i = 0; i < other / 100; i++) {
            Map<Integer, Object> m = new HashMap<>();
            for (int j = 0; j < 100; j++) m.put(j, new Object[] {"x" + j});
            OTHER.add(m);
        }
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long sink = 0;
        while (System.nanoTime() < end) {
            byte[] garbage = new byte[1024];
            sink += garbage.length;
            if ((sink & 0xFFFFF) == 0) Thread.sleep(1);
        }
        System.out.println(sink);
    }
}
