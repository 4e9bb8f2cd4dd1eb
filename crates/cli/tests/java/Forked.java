import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A heap whose reachable part is known exactly while the program churns garbage: N nodes, each
 * with its own 24-byte array, in one list ({@code Forked.NODES}), and N/2 of them again in a map
 * by id ({@code Forked.HOLDER.byId}, a field of a class with inherited fields and an interface
 * with fields before it, as JVMTI numbers them); nothing reachable changes after READY. For heap
 * walks on a forked copy of the JVM (issue 45): every walk, whenever it forks, must count these
 * as the program made them and name the fields that hold them.
 *
 * Usage: java Forked N SECONDS [MARKER]  (the marker only names the process)
 */
public class Forked {
    static final class Node {
        final byte[] data = new byte[24];
        final int id;
        Node(int id) { this.id = id; }
    }

    interface Labelled {
        String LABEL = "holder";
        Object TOKEN = new Object();
    }

    static class Base {
        int generation = 1;
        Object note = "base";
        long stamp = 7;
    }

    static final class Holder extends Base implements Labelled {
        int size;
        final Object other = new Object();
        final Map<Integer, Node> byId = new HashMap<>();
        String name = "by id";
    }

    static final List<Node> NODES = new ArrayList<>();
    static final Holder HOLDER = new Holder();
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        for (int i = 0; i < n; i++) {
            Node node = new Node(i);
            NODES.add(node);
            if (i % 2 == 0) HOLDER.byId.put(i, node);
        }
        System.out.println("READY");
        System.out.flush();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long made = 0;
        while (System.nanoTime() < end) {
            // Garbage only: what the JVM writes while a forked child walks its old copy.
            for (int k = 0; k < 1000; k++) sink = new long[8];
            made += 1000;
            if (made % 100_000 == 0) Thread.sleep(1);
        }
        System.out.println("done " + NODES.size() + " " + HOLDER.byId.size());
    }
}
