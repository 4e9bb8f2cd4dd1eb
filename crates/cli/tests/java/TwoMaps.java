import java.util.HashMap;
import java.util.Map;

/** Items kept in two indexes: neither index alone retains them, both together do. */
public class TwoMaps {
    static final class Item {
        final int id;
        final String name;
        final long[] payload = new long[16];
        Item(int id) { this.id = id; this.name = "item-" + id; }
    }

    static final Map<Integer, Item> BY_ID = new HashMap<>();
    static final Map<String, Item> BY_NAME = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        for (int i = 0; i < n; i++) {
            Item it = new Item(i);
            BY_ID.put(it.id, it);
            BY_NAME.put(it.name, it);
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
