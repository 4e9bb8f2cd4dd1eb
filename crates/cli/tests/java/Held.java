import java.util.ArrayList;
import java.util.List;

/**
 * Holds OBJECTS small objects and waits to be killed: a heap whose dump takes a while to
 * write, for copying one while jcmd writes it.
 *
 * Usage: java Held OBJECTS
 */
public class Held {
    static final List<Object> KEPT = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        for (int i = 0; i < n; i++) KEPT.add(new int[] {i});
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
