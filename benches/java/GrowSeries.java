import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.*;

/**
 * A service-sized heap that leaks slowly, for timing `leakscope growth` on a series: a steady
 * map of N entries (about 500 MB of dump for N = 1.5 M) whose entries churn each phase, and a
 * request log that keeps 50,000 more records each phase. One live dump per phase.
 *
 * Usage: java -Xmx3g GrowSeries N PHASES OUTDIR
 */
public class GrowSeries {
    static final Map<String, Object[]> table = new HashMap<>();
    static final List<Object> requestLog = new ArrayList<>();
    record Request(long id, String path, byte[] body) {}

    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        int phases = Integer.parseInt(a[1]);
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        Random random = new Random(7);
        long next = 0;
        for (int i = 0; i < n; i++) table.put("key-" + i, new Object[] { i, "v" + i, new int[i % 5] });
        for (int p = 1; p <= phases; p++) {
            for (int i = 0; i < n / 10; i++) {
                int k = random.nextInt(n);
                table.put("key-" + k, new Object[] { k, "w" + k + "-" + p, new int[k % 7] });
            }
            for (int i = 0; i < 50_000; i++, next++) requestLog.add(new Request(next, "/orders/" + (next % 1000), new byte[64]));
            bean.dumpHeap(String.format("%s/series-%02d.hprof", a[2], p), true);
        }
    }
}
