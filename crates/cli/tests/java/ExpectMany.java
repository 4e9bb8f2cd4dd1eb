import io.leakscope.LeakScope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Hundreds of objects declared dead with LeakScope.expectDead, in two path shapes: 300
 * sessions a static map still holds, 200 carts a static list still holds, and 100 sessions
 * really dropped. Runs with the agent from the start; prints READY once they are declared,
 * then allocates garbage (so that the collector and the agent's walks run) for ARGS[0] seconds.
 */
public class ExpectMany {
    static final class Session {
        final byte[] data = new byte[512];
    }

    static final class Cart {
        final long[] items = new long[16];
    }

    static final Map<Integer, Session> SESSIONS = new HashMap<>();
    static final List<Cart> CARTS = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(args[0]);
        for (int i = 0; i < 300; i++) {
            Session s = new Session();
            SESSIONS.put(i, s);
            LeakScope.expectDead(s); // EXPECT-SESSION
        }
        for (int i = 0; i < 200; i++) {
            Cart c = new Cart();
            CARTS.add(c);
            LeakScope.expectDead(c); // EXPECT-CART
        }
        for (int i = 0; i < 100; i++) {
            LeakScope.expectDead(new Session()); // EXPECT-DROPPED
        }
        System.out.println("READY");
        System.out.flush();
        List<byte[]> churn = new ArrayList<>();
        while (System.currentTimeMillis() < deadline) {
            churn.add(new byte[16 * 1024]);
            if (churn.size() > 400) {
                churn.clear();
            }
            Thread.sleep(1);
        }
    }
}
