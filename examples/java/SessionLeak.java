import java.util.*;

/**
 * The bundled demo: a web-session registry that forgets to remove sessions, so its map and
 * every session's attribute map grow with each request. `tests/fixtures/demo-jdk17.hprof`
 * is a dump of this program (see tests/fixtures/README.md).
 */
public class SessionLeak {
    static final class Session {
        final String id;
        final long created = System.nanoTime();
        final Map<String, Object> attributes = new HashMap<>();
        Session(String id) { this.id = id; }
    }

    static final class SessionRegistry {
        private final Map<String, Session> sessions = new HashMap<>();
        Session open(String id) { return sessions.computeIfAbsent(id, Session::new); }
        // close(id) exists in the real code, but nobody calls it.
    }

    static final SessionRegistry REGISTRY = new SessionRegistry();

    public static void main(String[] args) throws Exception {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        for (int i = 0; i < requests; i++) {
            Session s = REGISTRY.open("session-" + i);
            s.attributes.put("cart", new ArrayList<>(List.of("item-" + i)));
            s.attributes.put("token", new byte[64]);
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
