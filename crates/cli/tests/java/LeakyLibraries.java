import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.eventbus.EventBus;
import com.google.common.eventbus.Subscribe;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Leaks through real libraries' own structures, from Debian's packages and the JDK: one
 * warm-up phase, then PHASES phases of 1,500 clients each, with a live heap dump after each.
 * Every client carries 512 bytes of state, so what leaks is what a client holds.
 *
 * - jmx: an MBean is registered with the platform MBean server per client and never
 *   unregistered; the application keeps no reference to the server. The structure is the
 *   JDK's: com.sun.jmx.mbeanserver.Repository.domainTb.
 * - log4j: a Log4j 2 logger per client (LogManager.getLogger("client." + id)): Log4j's
 *   LoggerRegistry keeps every logger for the life of its context.
 * - guava-cache: a Guava Cache without a bound in the application's field Prices.cache.
 * - eventbus: a Guava EventBus in the application's field Events.bus; a listener registered
 *   per client and never unregistered.
 * - caffeine: a Caffeine cache without a bound in the application's field Sessions.store.
 *
 * Usage: java -cp JARS:. LeakyLibraries SCENARIO PHASES OUTDIR
 */
public class LeakyLibraries {
    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        int phases = Integer.parseInt(args[1]);
        String out = args[2];
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        Scenario s = switch (scenario) {
            case "jmx" -> new Jmx();
            case "log4j" -> new Log4j();
            case "guava-cache" -> new Prices();
            case "eventbus" -> new Events();
            case "caffeine" -> new Sessions();
            default -> throw new IllegalArgumentException(scenario);
        };
        int client = 0;
        for (int p = 0; p <= phases; p++) {
            for (int i = 0; i < 1500; i++, client++) s.client(client);
            if (p > 0) bean.dumpHeap(String.format("%s/%s-%02d.hprof", out, scenario, p), true);
        }
        System.out.println("DONE " + s);
    }

    interface Scenario {
        void client(int id) throws Exception;
    }

    /** What a client carries. */
    static final class ClientState {
        final byte[] bytes = new byte[512];
        final int id;

        ClientState(int id) {
            this.id = id;
        }
    }

    public interface ClientStatsMBean {
        int getId();
    }

    /** A client's MBean. */
    public static final class ClientStats implements ClientStatsMBean {
        final ClientState state;

        ClientStats(int id) {
            state = new ClientState(id);
        }

        public int getId() {
            return state.id;
        }
    }

    static final class Jmx implements Scenario {
        public void client(int id) throws Exception {
            ManagementFactory.getPlatformMBeanServer()
                .registerMBean(new ClientStats(id), new ObjectName("com.shop:type=Client,id=" + id));
        }
    }

    static final class Log4j implements Scenario {
        /** The loggers' state: what each client's logger is kept with, by name. */
        public void client(int id) {
            Logger log = LogManager.getLogger("com.shop.client." + id + "." + "x".repeat(200));
            log.debug("client {}", id);
        }
    }

    static final class Prices implements Scenario {
        final Cache<Integer, ClientState> cache = CacheBuilder.newBuilder().build();

        public void client(int id) {
            cache.put(id, new ClientState(id));
        }
    }

    /** A listener per client. */
    public static final class ClientListener {
        final ClientState state;

        ClientListener(int id) {
            state = new ClientState(id);
        }

        @Subscribe
        public void onPrice(String price) {}
    }

    static final class Events implements Scenario {
        final EventBus bus = new EventBus("prices");

        public void client(int id) {
            bus.register(new ClientListener(id));
        }
    }

    static final class Sessions implements Scenario {
        final com.github.benmanes.caffeine.cache.Cache<Integer, ClientState> store =
            com.github.benmanes.caffeine.cache.Caffeine.newBuilder().build();

        public void client(int id) {
            store.put(id, new ClientState(id));
        }
    }
}
