import java.util.*;
public class Big {
  static Map<String, Object> map = new HashMap<>();
  static List<long[]> arrays = new ArrayList<>();
  public static void main(String[] a) throws Exception {
    int n = Integer.parseInt(a[0]);
    for (int i = 0; i < n; i++) {
      map.put("key-" + i, new Object[]{ Integer.valueOf(i), "v" + i, new int[i % 5] });
      if (i % 10 == 0) arrays.add(new long[i % 100]);
    }
    System.out.println("READY"); System.out.flush();
    Thread.sleep(600000);
  }
}
