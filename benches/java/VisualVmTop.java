import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

/** VisualVM's heap library computing the N biggest retained sizes: the peer of `leakscope dominators`. */
public class VisualVmTop {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        List<Instance> top = heap.getBiggestObjectsByRetainedSize(n);
        for (Instance i : top) {
            System.out.println(i.getRetainedSize() + " " + i.getJavaClass().getName() + " 0x" + Long.toHexString(i.getInstanceId()));
        }
    }
}
