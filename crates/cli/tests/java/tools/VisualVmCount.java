import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.HeapSummary;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/** Opens a dump with VisualVM's heap library (Debian's visualvm package) and prints what it
 *  counts: instances and bytes in all, classes, and the instances of java.lang.String. */
public class VisualVmCount {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        HeapSummary s = heap.getSummary();
        JavaClass string = heap.getJavaClassByName("java.lang.String");
        System.out.println("instances " + s.getTotalLiveInstances());
        System.out.println("bytes " + s.getTotalLiveBytes());
        System.out.println("classes " + heap.getAllClasses().size());
        System.out.println("strings " + (string == null ? 0 : string.getInstancesCount()));
    }
}
