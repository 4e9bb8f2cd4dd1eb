import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.Supplier;

/** A quiescent heap with a variety of shapes, for comparing leakscope's histogram with jcmd's. */
public class Quiescent {
    static final List<Object> KEEP = new ArrayList<>();

    static class Node { Node next; int value; long stamp; byte flag; }
    static class Wide extends Node { double d; short s; char c; boolean b; Object ref; }

    public static void main(String[] args) throws Throwable {
        Node head = null;
        for (int i = 0; i < 5000; i++) {
            Node n = (i % 3 == 0) ? new Wide() : new Node();
            n.next = head; n.value = i; head = n;
        }
        KEEP.add(head);
        Map<String, int[]> map = new HashMap<>();
        for (int i = 0; i < 3000; i++) map.put("k" + i, new int[i % 13]);
        KEEP.add(map);
        KEEP.add(new long[7][3]);
        KEEP.add(new Object[][] { new String[5], new Integer[2] });
        KEEP.add(new char[100]); KEEP.add(new boolean[9]); KEEP.add(new short[3]);
        KEEP.add(new float[4]); KEEP.add(new double[5]); KEEP.add(new byte[1 << 20]);
        ConcurrentHashMap<Integer, String> chm = new ConcurrentHashMap<>();
        for (int i = 0; i < 500; i++) chm.put(i, "v" + i);
        KEEP.add(chm);
        Supplier<String> lambda = () -> "hidden class instance";
        int captured = args.length;
        Runnable capturing = () -> System.out.print(captured);
        KEEP.add(lambda); KEEP.add(capturing);
        MethodHandle mh = MethodHandles.lookup().findVirtual(String.class, "length", MethodType.methodType(int.class));
        KEEP.add(mh);
        KEEP.add(new java.lang.ref.WeakReference<>(head));
        CountDownLatch never = new CountDownLatch(1);
        for (int i = 0; i < 3; i++) {
            Thread t = new Thread(() -> { try { never.await(); } catch (InterruptedException e) { } }, "worker-" + i);
            t.setDaemon(true); t.start(); KEEP.add(t);
        }
        System.gc();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
