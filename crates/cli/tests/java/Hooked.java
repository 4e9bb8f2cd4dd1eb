import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Bytecode shapes that an entry hook must not break: switches (whose padding depends on the
 * offset), loops back to the first instruction, exception handlers and finally blocks, wide
 * locals, varargs, pattern-free instanceof, lambdas capturing this, synchronized methods, and
 * an interface default method; and constructors, hooked before each return: delegation with
 * a conditional argument (frames holding uninitializedThis), a `new` on the stack across a
 * branch (frames holding Uninitialized(offset), also in a method), an early return, a loop, a handler, and a
 * switch (a constructor the rewrite leaves alone). Each instance method and constructor is
 * called a known number of times; the last line prints how many calls the hook saw.
 */
public class Hooked {
    static final class Account {
        private long balance;
        private final List<String> log = new ArrayList<>();

        Account(long b) { balance = b; }

        long balance() { return balance; }

        void deposit(long v) {
            if (v <= 0) throw new IllegalArgumentException("v");
            balance += v;
            log.add("d" + v);
        }

        String kind(int k) {
            switch (k) {
                case 0: return "zero";
                case 1: return "one";
                case 2: return "two";
                default: return "many";
            }
        }

        int sparse(int k) {
            switch (k) {
                case 10: return 1;
                case 1000: return 2;
                case 100000: return 3;
                default: return 0;
            }
        }

        long loop(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                if ((i & 1) == 0) s += i; else s -= 1;
            }
            return s;
        }

        int guarded(String s) {
            try {
                return Integer.parseInt(s);
            } catch (NumberFormatException e) {
                return -1;
            } finally {
                log.add("g");
            }
        }

        double mixed(double d, long l, int... xs) {
            double t = d;
            for (int x : xs) t += x * l;
            return t;
        }

        String kindOf(Object o) {
            String r;
            if (o instanceof String) {
                String s = (String) o;
                r = "s" + s.length();
            } else {
                r = "o";
            }
            return r;
        }

        Supplier<Long> later() { return () -> balance + 1; }

        synchronized int sync() { return log.size(); }

        String tagged(boolean b) { return new StringBuilder(b ? "t" : "f").append(balance).toString(); }

        int whileTop(int n) {
            int i = 0;
            while (true) {
                if (i++ > n) return i;
            }
        }

        static int twice(int x) { return 2 * x; }
    }

    static final class Built {
        final String kind;
        int total;

        Built(String kind) { this.kind = kind; }

        Built(int n) {
            this(n < 0 ? "neg" : (n == 0 ? "zero" : "pos"));
            if (n > 100) return;
            for (int i = 0; i < n; i++) total += i;
            try {
                total += Integer.parseInt(n % 2 == 0 ? "2" : "x");
            } catch (NumberFormatException e) {
                total -= 1;
            }
        }

        Built(long big) {
            this(new StringBuilder(big > 0 ? "p" : "n").append(big > 9 ? big : -big).toString());
        }

        Built(char c) {
            this("c");
            switch (c) {
                case 'a': total = 1; break;
                case 'b': total = 2; break;
                default: total = 3;
            }
        }
    }

    interface Named {
        default String name() { return "named"; }
    }

    static final class Person implements Named {}

    public static void main(String[] args) {
        Account a = new Account(10);                                  // 1 (its constructor)
        StringBuilder out = new StringBuilder();
        out.append(a.balance()).append('\n');                         // 1
        a.deposit(5);                                                 // 2
        try {
            a.deposit(-1);                                            // 3
        } catch (IllegalArgumentException e) {
            out.append("rejected\n");
        }
        for (int k = 0; k < 4; k++) out.append(a.kind(k)).append('\n');      // 4..7
        for (int k : new int[] {10, 1000, 100000, 7}) out.append(a.sparse(k)).append('\n'); // 8..11
        out.append(a.loop(100)).append('\n');                         // 12
        out.append(a.guarded("42")).append(a.guarded("x")).append('\n');      // 13, 14
        out.append(a.mixed(1.5, 3L, 1, 2, 3)).append('\n');           // 15
        out.append(a.kindOf("abc")).append(a.kindOf(7)).append('\n');         // 16, 17
        out.append(a.later().get()).append('\n');                     // 18 later(), 19 the lambda
        out.append(a.sync()).append('\n');                            // 20
        out.append(a.whileTop(5)).append('\n');                       // 21
        out.append(Account.twice(4)).append('\n');                    // static: not hooked
        out.append(new Person().name()).append('\n');                 // 22 (default method), and its constructor
        out.append(a.balance()).append('\n');                         // 23
        out.append(a.tagged(true)).append('\n');                      // 24: a `new` across a branch
        // Built(String) runs inside every other constructor of Built.
        Built b = new Built(5);                                       // 2: Built(String), Built(int)
        out.append(b.kind).append(b.total).append('\n');
        b = new Built(200);                                           // 2: the early return
        out.append(b.kind).append(b.total).append('\n');
        b = new Built(-12L);                                          // 2
        out.append(b.kind).append('\n');
        b = new Built('b');                                           // 1: the switch constructor is left alone
        out.append(b.kind).append(b.total).append('\n');
        System.out.print(out);
        System.out.println("touched " + io.leakscope.LeakScope.calls);
    }
}
