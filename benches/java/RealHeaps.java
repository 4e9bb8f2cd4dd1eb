import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.sql.*;

/**
 * Big heaps of real applications from Debian's packages, for the index benchmark
 * (benches/index-vs-peers.sh): an in-memory H2 database of orders with two indexes, and an
 * embedded Tomcat 10 holding shopping sessions. Fills the heap to about SIZE_MB of live data,
 * then writes a live heap dump to OUT.
 *
 * Usage: java -Xmx6g -cp JARS:. RealHeaps h2|tomcat SIZE_MB OUT
 */
public class RealHeaps {
    public static void main(String[] args) throws Exception {
        String app = args[0];
        long target = Long.parseLong(args[1]) << 20;
        String out = args[2];
        Object keep = switch (app) {
            case "h2" -> h2(target);
            case "tomcat" -> tomcat(target);
            default -> throw new IllegalArgumentException(app);
        };
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(out, true);
        System.out.println("dumped " + out + " holding " + keep.getClass().getName());
        System.exit(0);
    }

    static long used() {
        Runtime r = Runtime.getRuntime();
        System.gc();
        return r.totalMemory() - r.freeMemory();
    }

    /** Orders with customers, totals, timestamps and notes, indexed by customer and by day. */
    static Connection h2(long target) throws Exception {
        Connection c = DriverManager.getConnection("jdbc:h2:mem:shop");
        try (Statement s = c.createStatement()) {
            s.execute("create table orders(id bigint primary key, customer varchar(40), total decimal(12,2),"
                    + " placed timestamp, status varchar(12), note varchar(200))");
            s.execute("create index by_customer on orders(customer)");
            s.execute("create index by_placed on orders(placed)");
        }
        String[] status = {"new", "paid", "shipped", "returned"};
        long id = 0;
        try (PreparedStatement ins = c.prepareStatement("insert into orders values(?,?,?,?,?,?)")) {
            while (true) {
                for (int i = 0; i < 100_000; i++, id++) {
                    ins.setLong(1, id);
                    ins.setString(2, "customer-" + (id * 7919 % 250_000));
                    ins.setBigDecimal(3, java.math.BigDecimal.valueOf(id * 31 % 1_000_000, 2));
                    ins.setTimestamp(4, new Timestamp(1_700_000_000_000L + id * 60_000));
                    ins.setString(5, status[(int) (id % 4)]);
                    ins.setString(6, "order " + id + " for delivery zone " + (id % 97));
                    ins.addBatch();
                }
                ins.executeBatch();
                if (used() > target) break;
            }
        }
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select status, count(*), sum(total) from orders group by status")) {
            while (r.next()) r.getLong(2);
        }
        return c;
    }

    /** A Tomcat whose sessions each hold a cart of items and a few attributes. */
    static org.apache.catalina.startup.Tomcat tomcat(long target) throws Exception {
        var tomcat = new org.apache.catalina.startup.Tomcat();
        java.io.File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
        tomcat.setBaseDir(base.getPath());
        tomcat.setPort(0);
        var ctx = tomcat.addContext("", base.getPath());
        tomcat.getConnector();
        tomcat.start();
        var manager = ctx.getManager();
        if (manager instanceof org.apache.catalina.session.ManagerBase m) m.setMaxActiveSessions(-1);
        long n = 0;
        while (true) {
            for (int i = 0; i < 20_000; i++, n++) {
                var session = manager.createSession(null);
                session.setMaxInactiveInterval(-1);
                var http = session.getSession();
                http.setAttribute("user", "user-" + n);
                http.setAttribute("locale", java.util.Locale.forLanguageTag(n % 2 == 0 ? "en-GB" : "de-DE"));
                var cart = new java.util.ArrayList<java.util.Map<String, Object>>();
                for (int k = 0; k < 1 + n % 5; k++) {
                    var item = new java.util.HashMap<String, Object>();
                    item.put("sku", "SKU-" + (n * 13 + k) % 50_000);
                    item.put("quantity", (int) (1 + k % 3));
                    item.put("price", java.math.BigDecimal.valueOf(100 + (n + k) % 9_000, 2));
                    cart.add(item);
                }
                http.setAttribute("cart", cart);
                http.setAttribute("visits", new java.util.concurrent.atomic.AtomicLong(n % 40));
            }
            if (used() > target) break;
        }
        return tomcat;
    }
}
