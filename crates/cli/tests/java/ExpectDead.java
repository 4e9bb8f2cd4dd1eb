import io.leakscope.LeakScope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Objects declared dead with LeakScope.expectDead: one still held by a static map (a leak),
 * one really dropped. Started without the agent, it waits until one is attached (so the call
 * before that is a no-op), then keeps allocating garbage, so that the collector and the
 * agent's heap walks run, until ARGS[0] seconds have passed.
 */
public class ExpectDead {
    static final class Order {
        final long id;
        final byte[] lines = new byte[64 * 1024];

        Order(long id) {
            this.id = id;
        }
    }

    static final class Registry {
        static final Map<Long, Order> OPEN = new HashMap<>();
    }

    public static void main(String[] args) throws Exception {
        long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(args[0]);
        Order early = new Order(0);
        Registry.OPEN.put(0L, early);
        LeakScope.expectDead(early); // EXPECT-EARLY: followed only when the agent is there from the start
        early = null;
        System.out.println("READY");
        while (!LeakScope.agentLoaded() && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        Order kept = new Order(1);
        Registry.OPEN.put(1L, kept);
        LeakScope.expectDead(kept); // EXPECT-LEAK
        kept = null;
        Order gone = new Order(2);
        LeakScope.expectDead(gone); // EXPECT-GONE
        gone = null;
        System.out.println("EXPECTED");
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
