import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

/**
 * A webapp for LeakyApps' tomcat-redeploy scenario, compiled into its own WEB-INF/classes so
 * that each deployment's WebappClassLoader defines it anew. On start it warms a static cache
 * and registers a JVM shutdown hook, which it never removes: the JDK's
 * ApplicationShutdownHooks.hooks then keeps the hook thread, its context class loader (this
 * deployment's loader), every class it defined and their statics alive after undeployment.
 */
public class LeakyWebapp {
    static final byte[] TEMPLATES = new byte[192 * 1024];

    public static class Listener implements ServletContextListener {
        @Override public void contextInitialized(ServletContextEvent e) {
            TEMPLATES[0] = 1;
            Runtime.getRuntime().addShutdownHook(new Thread(new Flush(), "flush-on-exit"));
        }
    }

    static class Flush implements Runnable {
        @Override public void run() { TEMPLATES[1] = 1; }
    }
}
