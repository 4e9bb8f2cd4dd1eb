import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A heap that is mostly arrays, for benches/redact-vs-cp.sh: a service's cache of payloads
 * (binary byte[] from 64 B to 256 KiB), the text it rendered (Strings of printable ASCII and
 * of other Unicode) and a few int[] and long[] buffers, SIZE_MB of them, then READY.
 *
 * Usage: java -Xmx4g ArrayHeavy SIZE_MB   (dump it with jcmd PID GC.heap_dump FILE)
 */
public class ArrayHeavy {
    static final List<Object> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        long target = Long.parseLong(args[0]) << 20;
        Random r = new Random(42);
        long held = 0;
        StringBuilder sb = new StringBuilder();
        while (held < target) {
            switch (r.nextInt(4)) {
                case 0, 1 -> {
                    byte[] b = new byte[64 << r.nextInt(13)];
                    r.nextBytes(b);
                    KEEP.add(b);
                    held += b.length;
                }
                case 2 -> {
                    sb.setLength(0);
                    int n = 16 << r.nextInt(10);
                    boolean wide = r.nextInt(5) == 0;
                    for (int i = 0; i < n; i++) {
                        sb.append(wide ? (char) (0x400 + r.nextInt(200)) : (char) (' ' + r.nextInt(95)));
                    }
                    KEEP.add(sb.toString());
                    held += wide ? 2L * n : n;
                }
                default -> {
                    int[] a = new int[256 << r.nextInt(6)];
                    for (int i = 0; i < a.length; i++) a[i] = r.nextInt();
                    KEEP.add(a);
                    held += 4L * a.length;
                }
            }
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
