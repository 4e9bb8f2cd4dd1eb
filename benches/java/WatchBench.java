import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A request loop for measuring staleness watching: each request looks an order up in a map
 * and calls a method on it (Order.total: the hot class), and one request in 100,000 also
 * touches a customer record (Customer.touch: the rarely used class). Prints the number of
 * requests per second over ARGS[0] seconds, after ARGS[1] seconds of warm-up.
 */
public class WatchBench {
    static final class Order {
        final long id;
        final long[] lines = new long[8];

        Order(long id) {
            this.id = id;
            for (int i = 0; i < lines.length; i++) lines[i] = id * 31 + i;
        }

        long total() {
            long t = 0;
            for (long l : lines) t += l;
            return t;
        }
    }

    static final class Customer {
        final long id;
        long visits;

        Customer(long id) {
            this.id = id;
        }

        void touch() {
            visits++;
        }
    }

    static final Map<Long, Order> ORDERS = new HashMap<>();
    static final List<Customer> CUSTOMERS = new ArrayList<>();

    public static void main(String[] args) {
        long seconds = Long.parseLong(args[0]);
        long warmup = Long.parseLong(args[1]);
        for (long i = 0; i < 100_000; i++) ORDERS.put(i, new Order(i));
        for (long i = 0; i < 1_000; i++) CUSTOMERS.add(new Customer(i));
        long sink = 0;
        long n = 0;
        long start = System.nanoTime();
        long measureFrom = start + warmup * 1_000_000_000L;
        long end = measureFrom + seconds * 1_000_000_000L;
        long measured = 0;
        boolean measuring = false;
        while (true) {
            for (int k = 0; k < 10_000; k++) {
                Order o = ORDERS.get(n % 100_000);
                sink += o.total();
                if (n % 100_000 == 0) CUSTOMERS.get((int) (n / 100_000 % 1_000)).touch();
                n++;
                if (measuring) measured++;
            }
            long now = System.nanoTime();
            if (!measuring && now >= measureFrom) measuring = true;
            if (now >= end) break;
        }
        System.out.println(measured / seconds + " requests/s " + (sink & 1));
    }
}
