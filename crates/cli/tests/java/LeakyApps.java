import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.*;
import java.lang.management.ManagementFactory;
import java.net.*;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Services on real frameworks from Debian's packages that leak, and one that does not, driven
 * over HTTP on loopback; one warm-up phase, then PHASES phases with a live heap dump after each.
 *
 * - tomcat-sessions: embedded Tomcat 10; every request opens an HTTP session (no cookie is
 *   sent back) with a cart of bytes, and the application logs each request in a static
 *   ConcurrentHashMap. Two structures grow: StandardManager.sessions and Audit.LOG, and
 *   every session has a ConcurrentHashMap of its own for its attributes.
 * - jetty-cache: embedded Jetty 9; a handler caches each response in a static map keyed by
 *   the request's query, which is new on every request: a per-request cache never evicted.
 * - jetty-bounded: the same with a cache bounded to 300 entries (LRU): no leak.
 * - tomcat-redeploy: embedded Tomcat 10 redeploys a webapp (webapp/LeakyWebapp.java, in
 *   WEBAPP/WEB-INF/classes, the system property leakyapps.webapp) before every phase; each
 *   deployment registers a JVM shutdown hook and never removes it, so every old
 *   WebappClassLoader stays alive with its classes and their statics.
 *
 * Usage: java -cp JARS:. [-Dleakyapps.webapp=WEBAPP] LeakyApps SCENARIO PHASES OUTDIR
 */
public class LeakyApps {
    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        int phases = Integer.parseInt(args[1]);
        String out = args[2];
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        Service service = switch (scenario) {
            case "tomcat-sessions" -> new TomcatSessions();
            case "jetty-cache" -> new JettyCache(false);
            case "jetty-bounded" -> new JettyCache(true);
            case "tomcat-redeploy" -> new TomcatRedeploy(System.getProperty("leakyapps.webapp"));
            default -> throw new IllegalArgumentException(scenario);
        };
        int request = 0;
        for (int p = 0; p <= phases; p++) {
            service.phase(p);
            for (int i = 0; i < 400; i++, request++) service.request(request);
            if (p > 0) bean.dumpHeap(String.format("%s/%s-%02d.hprof", out, scenario, p), true);
        }
        service.close();
        System.out.println("DONE");
        // A server thread that outlives close() must not keep the JVM, and the test, waiting.
        System.exit(0);
    }

    interface Service {
        default void phase(int p) throws Exception {}
        void request(int n) throws Exception;
        void close() throws Exception;
    }

    static byte[] get(int port, String path) throws IOException {
        var conn = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        // A request that never gets an answer fails the run instead of hanging it.
        conn.setConnectTimeout(60_000);
        conn.setReadTimeout(60_000);
        try (InputStream in = conn.getInputStream()) {
            return in.readAllBytes();
        }
    }

    /** What the application audits: one entry per request, never removed. */
    static final class AuditEntry {
        final String what;
        final long at;
        AuditEntry(String what, long at) { this.what = what; this.at = at; }
    }

    static final class Audit {
        static final ConcurrentHashMap<Long, AuditEntry> LOG = new ConcurrentHashMap<>();
    }

    /** A shopping cart kept in each HTTP session. */
    static final class Cart implements Serializable {
        final byte[] items = new byte[1536];
        final String owner;
        Cart(String owner) { this.owner = owner; }
    }

    static final class TomcatSessions implements Service {
        final org.apache.catalina.startup.Tomcat tomcat = new org.apache.catalina.startup.Tomcat();
        final int port;
        TomcatSessions() throws Exception {
            File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
            tomcat.setBaseDir(base.getPath());
            tomcat.setPort(0);
            var ctx = tomcat.addContext("", base.getPath());
            org.apache.catalina.startup.Tomcat.addServlet(ctx, "shop", new jakarta.servlet.http.HttpServlet() {
                @Override protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) throws IOException {
                    var session = req.getSession(true);
                    String user = "user-" + req.getParameter("n");
                    session.setAttribute("cart", new Cart(user));
                    session.setAttribute("user", user);
                    Audit.LOG.put(Long.parseLong(req.getParameter("n")), new AuditEntry("GET /shop " + user, System.nanoTime()));
                    resp.setContentType("text/plain");
                    resp.getWriter().write("ok " + session.getId());
                }
            });
            ctx.addServletMappingDecoded("/shop", "shop");
            tomcat.getConnector();
            tomcat.start();
            port = tomcat.getConnector().getLocalPort();
        }
        public void request(int n) throws Exception { get(port, "/shop?n=" + n); }
        public void close() throws Exception { tomcat.stop(); tomcat.destroy(); }
    }

    static final class TomcatRedeploy implements Service {
        final org.apache.catalina.startup.Tomcat tomcat = new org.apache.catalina.startup.Tomcat();
        final String webapp;
        org.apache.catalina.Context ctx;
        final int port;
        TomcatRedeploy(String webapp) throws Exception {
            this.webapp = webapp;
            File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
            tomcat.setBaseDir(base.getPath());
            tomcat.setPort(0);
            tomcat.getConnector();
            tomcat.getHost().setAutoDeploy(false);
            tomcat.start();
            port = tomcat.getConnector().getLocalPort();
        }
        /** Undeploys the webapp and deploys it again, as a redeploy from a CI pipeline does. */
        public void phase(int p) throws Exception {
            if (ctx != null) {
                tomcat.getHost().removeChild(ctx);
            }
            var context = new org.apache.catalina.core.StandardContext();
            context.setName("/app");
            context.setPath("/app");
            context.setDocBase(webapp);
            context.addLifecycleListener(new org.apache.catalina.startup.Tomcat.FixContextListener());
            context.addApplicationListener("LeakyWebapp$Listener");
            context.setClearReferencesStopThreads(false);
            tomcat.getHost().addChild(context);
            ctx = context;
            org.apache.catalina.startup.Tomcat.addServlet(ctx, "hello", new jakarta.servlet.http.HttpServlet() {
                @Override protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) throws IOException {
                    resp.getWriter().write("hello");
                }
            });
            ctx.addServletMappingDecoded("/hello", "hello");
        }
        public void request(int n) throws Exception { get(port, "/app/hello"); }
        public void close() throws Exception { tomcat.stop(); tomcat.destroy(); }
    }

    /** A rendered response, as the cache keeps it. */
    static final class CachedResponse {
        final byte[] body;
        final long renderedAt = System.nanoTime();
        CachedResponse(byte[] body) { this.body = body; }
    }

    /** Responses cached by query. */
    static final class ResponseCache {
        static Map<String, CachedResponse> ENTRIES;
    }

    static final class JettyCache implements Service {
        final org.eclipse.jetty.server.Server server = new org.eclipse.jetty.server.Server(0);
        final int port;
        JettyCache(boolean bounded) throws Exception {
            ResponseCache.ENTRIES = bounded
                ? Collections.synchronizedMap(new LinkedHashMap<>(512, 0.75f, true) {
                    @Override protected boolean removeEldestEntry(Map.Entry<String, CachedResponse> e) { return size() > 300; }
                })
                : new ConcurrentHashMap<>();
            server.setHandler(new org.eclipse.jetty.server.handler.AbstractHandler() {
                @Override public void handle(String target, org.eclipse.jetty.server.Request base,
                        javax.servlet.http.HttpServletRequest req, javax.servlet.http.HttpServletResponse resp) throws IOException {
                    String q = req.getQueryString();
                    byte[] body = ResponseCache.ENTRIES.computeIfAbsent(q, k -> new CachedResponse(render(k))).body;
                    resp.setContentType("text/plain");
                    resp.getOutputStream().write(body);
                    base.setHandled(true);
                }
            });
            server.start();
            port = ((org.eclipse.jetty.server.ServerConnector) server.getConnectors()[0]).getLocalPort();
        }
        static byte[] render(String q) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 40; i++) sb.append(q).append(' ').append(i).append('\n');
            return sb.toString().getBytes();
        }
        public void request(int n) throws Exception { get(port, "/report?id=" + n); }
        public void close() throws Exception { server.stop(); }
    }
}
