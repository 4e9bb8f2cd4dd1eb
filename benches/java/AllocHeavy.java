import java.util.*;

/**
 * An allocation-heavy workload with a large, churning live set: the program the agent's
 * overhead is measured on. A fixed amount of work; prints its own elapsed time.
 *
 * Usage: java AllocHeavy LIVE_OBJECTS ROUNDS [STACK_DEPTH]
 *
 * With STACK_DEPTH, the work runs that many calls deep, as a request handler runs below a
 * server's frames (Tomcat's are 40 to 60 deep): what a sampled allocation's stack costs.
 */
public class AllocHeavy {
    static final class Item {
        final long id;
        final byte[] data;
        Item next;
        Item(long id, int n) { this.id = id; this.data = new byte[n]; }
    }

    public static void main(String[] args) {
        int live = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        System.out.println(nested(depth, live, rounds));
    }

    static String nested(int depth, int live, int rounds) {
        return depth <= 0 ? work(live, rounds) : nested(depth - 1, live, rounds);
    }

    static String work(int live, int rounds) {
        long start = System.nanoTime();
        Random rnd = new Random(7);
        Item[] table = new Item[live];
        Map<Integer, String> names = new HashMap<>();
        long checksum = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < live / 10; i++) {
                // Old-generation churn: replace a random live item.
                int k = rnd.nextInt(live);
                Item it = new Item(r * (long) live + i, 16 + rnd.nextInt(48));
                it.next = table[rnd.nextInt(live)];
                if (it.next != null) it.next.next = null;
                table[k] = it;
                // Young garbage: strings, boxes, arrays.
                String s = "item-" + k + "-" + r;
                names.put(k & 0xffff, s);
                checksum += s.hashCode() + new int[8 + (i & 31)].length;
            }
        }
        return "elapsed_ms " + (System.nanoTime() - start) / 1_000_000 + " checksum " + checksum;
    }
}
