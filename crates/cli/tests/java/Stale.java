import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Sessions of users who logged out stay in the registry and are never used again (the leak);
 * the sessions of active users are used all the time. ARGS[0] seconds of work, garbage churn
 * included, so that the collector and the agent's heap walks run.
 */
public class Stale {
    static final class Session {
        final long id;
        final byte[] state = new byte[256];
        long hits;

        Session(long id) {
            this.id = id;
        }

        void touch() {
            hits++;
        }
    }

    static final class SessionRegistry {
        static final Map<Long, Session> ALL = new HashMap<>();
    }

    static final class ActiveUsers {
        static final List<Session> CURRENT = new ArrayList<>();
    }

    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(args[0]);
        for (long i = 0; i < 50; i++) {
            Session s = new Session(i);
            SessionRegistry.ALL.put(i, s);
            s.touch(); // LAST-USE-LEAKED
        }
        for (long i = 0; i < 20; i++) {
            ActiveUsers.CURRENT.add(new Session(1000 + i));
        }
        System.out.println("READY");
        List<byte[]> churn = new ArrayList<>();
        long sum = 0;
        while (System.currentTimeMillis() < deadline) {
            for (Session s : ActiveUsers.CURRENT) {
                s.touch(); // HOT-USE
                sum += s.hits;
            }
            churn.add(new byte[64 * 1024]);
            if (churn.size() > 300) {
                churn.clear();
            }
            Thread.sleep(2);
        }
        System.out.println("done " + sum);
    }
}
