import java.io.*;
import java.net.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Services that run for a fixed time under a steady request rate, for the agent's tests: the
 * agent must name a leak within minutes and call a steady service steady at every moment.
 *
 * - tomcat-sessions: embedded Tomcat 10 (Debian's package); every request opens an HTTP
 *   session (the client keeps no cookie) with a cart of bytes: StandardManager.sessions grows.
 * - tomcat-steady: the same server answering pages it renders per request, with no session:
 *   garbage only, no leak.
 * - registry (ours): a service keeps every UserSession it creates in a static registry and
 *   never uses it again after construction, besides per-request garbage.
 * - steady (ours): a bounded LRU cache of UserSessions that fills within seconds, besides the
 *   same per-request garbage: no leak.
 * - tomcat-shop: embedded Tomcat 10 serving a shop; every request opens a session with a cart
 *   of items, whose session listener registers a CartPriceListener with the application's
 *   PriceService and never removes it when the session ends (each request ends its own): the
 *   CopyOnWriteArrayList PriceService.listeners grows, holding every cart and its items.
 * - tomcat-shop-steady: the same shop, whose listener is removed when its session ends, with a
 *   catalog of as many items loaded at start as the leak reaches (-Dservices.catalog=N): a big
 *   heap that does not grow.
 *
 * - jetty-shop: embedded Jetty 9 (Debian's package) serving reports; each request keeps its
 *   report (-Dservices.report=BYTES of rows, default 4096) under a server attribute while it
 *   is made, and never removes it: Jetty 9.4's Server._attributes (AttributeContainerMap)
 *   grows, its map and the CopyOnWriteArrayList of beans it keeps each value in too (arrays
 *   of a few MB at most while they hold a gigabyte).
 * - jetty-shop-steady: the same, removing each attribute once answered, with a catalog of
 *   -Dservices.catalog=N items: a big heap that does not grow.
 *
 * -Dservices.items=N sets the items per cart (default 8). -Dservices.leakAfter=S makes
 * tomcat-shop and jetty-shop undo their leak for their first S seconds of load, then stop: a
 * leak that begins under traffic, after a warm-up (with -Dservices.catalog=N, a heap already
 * big).
 *
 * Prints "READY" once it serves, then "done" after SECONDS of load. With
 * -Dservices.wait=true it waits for a line on stdin between the two (a test attaches first).
 *
 * Usage: java -cp JARS:. Services SCENARIO SECONDS [REQUESTS_PER_SECOND]
 */
public class Services {
    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        long seconds = Long.parseLong(args[1]);
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 300;
        Service service = switch (scenario) {
            case "tomcat-sessions" -> new Tomcat(true);
            case "tomcat-steady" -> new Tomcat(false);
            case "registry" -> new Registry(false);
            case "steady" -> new Registry(true);
            case "tomcat-shop" -> new Shop(true);
            case "tomcat-shop-steady" -> new Shop(false);
            case "jetty-shop" -> new JettyShop(true);
            case "jetty-shop-steady" -> new JettyShop(false);
            default -> throw new IllegalArgumentException(scenario);
        };
        System.out.println("READY");
        System.out.flush();
        if (Boolean.getBoolean("services.wait")) {
            new BufferedReader(new InputStreamReader(System.in)).readLine();
        }
        drive(service, seconds, rate);
        // The service is not stopped, as a killed one is not: stopping Tomcat expires its
        // sessions (the leak shrinks at the end) and allocates while it shuts down, neither of
        // which the verdicts read after the end should judge.
        System.out.println("done");
        System.out.flush();
        System.exit(0);
    }

    /** Calls the service `rate` times a second from two client threads for `seconds`. */
    static void drive(Service service, long seconds, int rate) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        AtomicLong next = new AtomicLong();
        long start = System.nanoTime();
        Runnable client = () -> {
            try {
                while (true) {
                    long n = next.getAndIncrement();
                    long due = start + n * 1_000_000_000L / rate;
                    long now = System.nanoTime();
                    if (due >= end) return;
                    if (due > now) Thread.sleep((due - now) / 1_000_000, (int) ((due - now) % 1_000_000));
                    service.request(n);
                }
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(3);
            }
        };
        Thread a = new Thread(client, "client-1"), b = new Thread(client, "client-2");
        a.start(); b.start();
        a.join(); b.join();
    }

    interface Service {
        int port();
        void request(long n) throws Exception;
    }

    static byte[] get(int port, String path) throws IOException {
        var conn = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
        // A request that never gets an answer fails the run instead of hanging it.
        conn.setConnectTimeout(60_000);
        conn.setReadTimeout(60_000);
        try (InputStream in = conn.getInputStream()) {
            return in.readAllBytes();
        }
    }

    /**
     * When a leak begins: its first request's time plus -Dservices.leakAfter seconds (System.nanoTime()).
     */
    static final class LeakStart {
        volatile long at = Long.MAX_VALUE;
        /** Called by every request: the first one starts the clock. */
        void request() {
            if (at == Long.MAX_VALUE) at = System.nanoTime() + Long.getLong("services.leakAfter", 0L) * 1_000_000_000L;
        }
        boolean begun() { return System.nanoTime() >= at; }
    }

    /** A catalog of -Dservices.catalog=N items: a big heap that does not grow. */
    static void loadCatalog(Map<String, Item> catalog) {
        for (int i = 0, n = Integer.getInteger("services.catalog", 0); i < n; i++) {
            catalog.put("sku-" + i, new Item("sku-" + i, 64 + i % 64, 1));
        }
    }

    /** A page as a request renders it: strings and a buffer, garbage once answered. */
    static byte[] render(long n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 60; i++) sb.append("<li>item ").append(n).append('-').append(i).append("</li>\n");
        return sb.toString().getBytes();
    }

    /** A shopping cart kept in each HTTP session. */
    static final class Cart implements Serializable {
        final byte[] items = new byte[1536];
        final String owner;
        Cart(String owner) { this.owner = owner; }
    }

    static final class Tomcat implements Service {
        final org.apache.catalina.startup.Tomcat tomcat = new org.apache.catalina.startup.Tomcat();
        final int port;
        Tomcat(boolean sessions) throws Exception {
            File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
            tomcat.setBaseDir(base.getPath());
            tomcat.setPort(0);
            var ctx = tomcat.addContext("", base.getPath());
            org.apache.catalina.startup.Tomcat.addServlet(ctx, "shop", new jakarta.servlet.http.HttpServlet() {
                @Override protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) throws IOException {
                    String n = req.getParameter("n");
                    resp.setContentType("text/html");
                    if (sessions) {
                        var session = req.getSession(true);
                        session.setAttribute("cart", new Cart("user-" + n));
                        resp.getWriter().write("ok " + session.getId());
                    } else {
                        resp.getOutputStream().write(render(Long.parseLong(n)));
                    }
                }
            });
            ctx.addServletMappingDecoded("/shop", "shop");
            tomcat.getConnector();
            tomcat.start();
            port = tomcat.getConnector().getLocalPort();
        }
        public int port() { return port; }
        public void request(long n) throws Exception { get(port, "/shop?n=" + n); }
    }

    /** A user's session as our service keeps it: created, registered, never used again. */
    static final class UserSession {
        final String user;
        final long created = System.currentTimeMillis();
        final byte[] preferences = new byte[1024];
        final Map<String, String> attributes = new HashMap<>();
        UserSession(String user) {
            this.user = user;
            attributes.put("locale", "en");
        }
    }

    static final class Registry implements Service {
        static final Map<String, UserSession> SESSIONS = new ConcurrentHashMap<>();
        static final Map<String, UserSession> RECENT = Collections.synchronizedMap(new LinkedHashMap<>(1024, 0.75f, true) {
            @Override protected boolean removeEldestEntry(Map.Entry<String, UserSession> e) { return size() > 2000; }
        });
        final boolean bounded;
        volatile long sink;
        Registry(boolean bounded) { this.bounded = bounded; }
        public int port() { return 0; }
        public void request(long n) {
            String user = "user-" + n;
            (bounded ? RECENT : SESSIONS).put(user, new UserSession(user));
            sink += render(n).length;
        }
    }

    /** An item in a cart: what the shop sells, with its description's bytes. */
    static final class Item {
        final String sku;
        final byte[] description;
        final int quantity;
        Item(String sku, int size, int quantity) {
            this.sku = sku;
            this.description = new byte[size];
            this.quantity = quantity;
        }
    }

    /** A cart of items, priced by the PriceService while its session lives. */
    static final class ShopCart {
        final List<Item> items = new ArrayList<>();
        long total;
    }

    /** What PriceService calls when prices change. */
    interface PriceListener {
        void pricesChanged(long version);
    }

    /** Reprices one cart when prices change. */
    static final class CartPriceListener implements PriceListener {
        final ShopCart cart;
        CartPriceListener(ShopCart cart) { this.cart = cart; }
        public void pricesChanged(long version) { cart.total = version * cart.items.size(); }
    }

    /** The shop's price service: listeners are told of every price change. */
    static final class PriceService {
        final List<PriceListener> listeners = new CopyOnWriteArrayList<>();
        final Map<String, Item> catalog = new HashMap<>();
        void add(PriceListener l) { listeners.add(l); }
        void remove(PriceListener l) { listeners.remove(l); }
    }

    static final class Shop implements Service {
        final org.apache.catalina.startup.Tomcat tomcat = new org.apache.catalina.startup.Tomcat();
        final PriceService prices = new PriceService();
        final int port;
        final int items = Integer.getInteger("services.items", 8);
        /** The listeners are removed before it. */
        final LeakStart leak = new LeakStart();
        Shop(boolean leaks) throws Exception {
            loadCatalog(prices.catalog);
            File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
            tomcat.setBaseDir(base.getPath());
            tomcat.setPort(0);
            var ctx = tomcat.addContext("", base.getPath());
            ctx.getServletContext().setAttribute("prices", prices);
            ctx.addServletContainerInitializer((classes, sc) -> sc.addListener(new jakarta.servlet.http.HttpSessionListener() {
                @Override public void sessionCreated(jakarta.servlet.http.HttpSessionEvent e) {
                    ShopCart cart = new ShopCart();
                    CartPriceListener l = new CartPriceListener(cart);
                    e.getSession().setAttribute("cart", cart);
                    e.getSession().setAttribute("pricing", l);
                    prices.add(l);
                }
                @Override public void sessionDestroyed(jakarta.servlet.http.HttpSessionEvent e) {
                    // The leak: the listener is not removed when its session ends.
                    if (!leaks || !leak.begun()) prices.remove((PriceListener) e.getSession().getAttribute("pricing"));
                }
            }), null);
            org.apache.catalina.startup.Tomcat.addServlet(ctx, "shop", new jakarta.servlet.http.HttpServlet() {
                @Override protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) throws IOException {
                    long n = Long.parseLong(req.getParameter("n"));
                    var session = req.getSession(true);
                    ShopCart cart = (ShopCart) session.getAttribute("cart");
                    for (int i = 0; i < items; i++) cart.items.add(new Item("sku-" + (n * 7 + i) % 100_000, 48 + (int) (n % 64), 1 + i));
                    resp.setContentType("text/html");
                    resp.getOutputStream().write(render(n));
                    // Checked out: the session ends with the request.
                    session.invalidate();
                }
            });
            ctx.addServletMappingDecoded("/shop", "shop");
            tomcat.getConnector();
            tomcat.start();
            port = tomcat.getConnector().getLocalPort();
        }
        public int port() { return port; }
        public void request(long n) throws Exception {
            leak.request();
            get(port, "/shop?n=" + n);
        }
    }

    /** A report a request makes: its rows. */
    static final class Report {
        final String id;
        final byte[] rows;
        Report(String id, int size) {
            this.id = id;
            this.rows = new byte[size];
        }
    }

    static final class JettyShop implements Service {
        final org.eclipse.jetty.server.Server server = new org.eclipse.jetty.server.Server(0);
        final Map<String, Item> catalog = new HashMap<>();
        final int port;
        /** The attributes are removed before it. */
        final LeakStart leak = new LeakStart();
        JettyShop(boolean leaks) throws Exception {
            loadCatalog(catalog);
            int size = Integer.getInteger("services.report", 4096);
            server.setHandler(new org.eclipse.jetty.server.handler.AbstractHandler() {
                @Override public void handle(String target, org.eclipse.jetty.server.Request base,
                        javax.servlet.http.HttpServletRequest req, javax.servlet.http.HttpServletResponse resp) throws IOException {
                    long n = Long.parseLong(req.getParameter("n"));
                    String key = "report-" + n;
                    server.setAttribute(key, new Report(key, size + (int) (n % 512)));
                    resp.setContentType("text/html");
                    resp.getOutputStream().write(render(n));
                    // The leak: the answered report's attribute is not removed.
                    if (!leaks || !leak.begun()) server.removeAttribute(key);
                    base.setHandled(true);
                }
            });
            server.start();
            port = ((org.eclipse.jetty.server.ServerConnector) server.getConnectors()[0]).getLocalPort();
        }
        public int port() { return port; }
        public void request(long n) throws Exception {
            leak.request();
            get(port, "/report?n=" + n);
        }
    }
}
