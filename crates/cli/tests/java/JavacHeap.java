import com.sun.source.util.JavacTask;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * A compiler's heap: javac parses and attributes a generated source tree and the task is
 * kept alive. Symbol tables, types and trees make a deep, heavily shared object graph,
 * the case that tells exact dominators from approximate ones (HPROF-NOTES.md).
 */
public class JavacHeap {
    static Object KEEP;

    public static void main(String[] args) throws Exception {
        // Built in another method, so that no local of this frame holds the compiler.
        KEEP = compile(args.length > 0 ? Integer.parseInt(args[0]) : 400);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }

    static Object compile(int n) throws Exception {
        Path dir = Files.createTempDirectory("leakscope-javac");
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            StringBuilder sb = new StringBuilder("package gen;\nimport java.util.*;\npublic class C" + i + " {\n");
            for (int f = 0; f < 8; f++) {
                sb.append("  List<C").append((i + f) % n).append("> f").append(f).append(" = new ArrayList<>();\n");
            }
            for (int m = 0; m < 8; m++) {
                sb.append("  public int m").append(m).append("(Map<String, C").append((i * 7 + m) % n)
                  .append("> x) { int s = 0; for (String k : x.keySet()) { s += k.length() * ").append(m)
                  .append("; } return s + f").append(m).append(".size(); }\n");
            }
            sb.append("}\n");
            Path p = dir.resolve("C" + i + ".java");
            Files.writeString(p, sb);
            files.add(p);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        JavacTask task = (JavacTask) javac.getTask(null, fm, null, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
        Iterable<?> units = task.parse();
        task.analyze();
        return new Object[] { task, units, fm };
    }
}
