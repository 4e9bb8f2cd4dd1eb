import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Keeps 5,000 lambdas in a static list for a few seconds, and prints the class name the JVM
 * gives them (Class.getName(): a hidden class, Lambdas$$Lambda/0x...), collecting twice a
 * second, then "done".
 */
public class Lambdas {
    static final List<Supplier<String>> KEPT = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 5_000; i++) {
            final int k = i;
            KEPT.add(() -> "lambda " + k);
        }
        System.out.println(KEPT.get(0).getClass().getName());
        // Collections wake the agent's worker, which walks after them.
        for (long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000; System.currentTimeMillis() < end; ) {
            System.gc();
            Thread.sleep(500);
        }
        System.out.println("done " + KEPT.size());
    }
}
