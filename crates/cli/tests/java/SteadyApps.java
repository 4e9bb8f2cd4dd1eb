import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.*;
import java.lang.management.ManagementFactory;
import java.net.*;
import java.sql.*;
import java.util.*;

/**
 * Real applications from Debian's packages under steady load, which do not leak: H2 (an
 * in-memory SQL database with a rolling window of rows), Lucene 4.10 (an index with documents
 * added and expired), Tomcat 10 (an embedded server answering HTTP requests). One warm-up
 * phase, then PHASES phases with a live heap dump after each.
 *
 * Usage: java -cp JARS:. SteadyApps h2|lucene|tomcat PHASES OUTDIR
 */
public class SteadyApps {
    public static void main(String[] args) throws Exception {
        String app = args[0];
        int phases = Integer.parseInt(args[1]);
        String out = args[2];
        HotSpotDiagnosticMXBean bean = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        Load load = switch (app) {
            case "h2" -> new H2Load();
            case "lucene" -> new LuceneLoad();
            case "tomcat" -> new TomcatLoad();
            default -> throw new IllegalArgumentException(app);
        };
        for (int p = 0; p <= phases; p++) {
            load.phase(p);
            if (p > 0) bean.dumpHeap(String.format("%s/%s-%02d.hprof", out, app, p), true);
        }
        load.close();
        System.out.println("DONE");
        // A server thread that outlives close() must not keep the JVM, and the test, waiting.
        System.exit(0);
    }

    interface Load {
        void phase(int p) throws Exception;
        void close() throws Exception;
    }

    static final class H2Load implements Load {
        final Connection c;
        long next = 0;
        H2Load() throws Exception {
            c = DriverManager.getConnection("jdbc:h2:mem:orders");
            try (Statement s = c.createStatement()) {
                s.execute("create table orders(id bigint primary key, customer varchar(40), total decimal(12,2), note varchar(200))");
                s.execute("create index by_customer on orders(customer)");
            }
        }
        public void phase(int p) throws Exception {
            try (PreparedStatement ins = c.prepareStatement("insert into orders values(?,?,?,?)")) {
                for (int i = 0; i < 4000; i++, next++) {
                    ins.setLong(1, next);
                    ins.setString(2, "customer-" + (next % 500));
                    ins.setBigDecimal(3, java.math.BigDecimal.valueOf(next % 10000, 2));
                    ins.setString(4, "note " + next);
                    ins.executeUpdate();
                }
            }
            try (PreparedStatement q = c.prepareStatement("select customer, sum(total), count(*) from orders where customer = ? group by customer")) {
                for (int i = 0; i < 300; i++) {
                    q.setString(1, "customer-" + i);
                    try (ResultSet r = q.executeQuery()) { while (r.next()) r.getBigDecimal(2); }
                }
            }
            try (PreparedStatement del = c.prepareStatement("delete from orders where id < ?")) {
                del.setLong(1, next - 8000); // a rolling window of the last 8000 orders
                del.executeUpdate();
            }
        }
        public void close() throws Exception { c.close(); }
    }

    static final class LuceneLoad implements Load {
        final org.apache.lucene.store.RAMDirectory dir = new org.apache.lucene.store.RAMDirectory();
        final org.apache.lucene.index.IndexWriter writer;
        org.apache.lucene.index.DirectoryReader reader;
        long next = 0;
        LuceneLoad() throws Exception {
            var analyzer = new org.apache.lucene.analysis.standard.StandardAnalyzer(org.apache.lucene.util.Version.LUCENE_4_10_4);
            var config = new org.apache.lucene.index.IndexWriterConfig(org.apache.lucene.util.Version.LUCENE_4_10_4, analyzer);
            writer = new org.apache.lucene.index.IndexWriter(dir, config);
            writer.commit();
            reader = org.apache.lucene.index.DirectoryReader.open(dir);
        }
        public void phase(int p) throws Exception {
            for (int i = 0; i < 3000; i++, next++) {
                var d = new org.apache.lucene.document.Document();
                d.add(new org.apache.lucene.document.StringField("id", Long.toString(next), org.apache.lucene.document.Field.Store.YES));
                d.add(new org.apache.lucene.document.StringField("batch", Long.toString(next / 3000), org.apache.lucene.document.Field.Store.NO));
                d.add(new org.apache.lucene.document.TextField("body", "order " + next + " for customer " + (next % 700) + " shipped to city " + (next % 90), org.apache.lucene.document.Field.Store.YES));
                writer.addDocument(d);
            }
            writer.deleteDocuments(new org.apache.lucene.index.Term("batch", Long.toString(next / 3000 - 3)));
            writer.forceMergeDeletes();
            writer.commit();
            var changed = org.apache.lucene.index.DirectoryReader.openIfChanged(reader);
            if (changed != null) { reader.close(); reader = changed; }
            var searcher = new org.apache.lucene.search.IndexSearcher(reader);
            for (int i = 0; i < 200; i++) {
                searcher.search(new org.apache.lucene.search.TermQuery(new org.apache.lucene.index.Term("body", Integer.toString(i % 90))), 10);
            }
        }
        public void close() throws Exception { reader.close(); writer.close(); }
    }

    static final class TomcatLoad implements Load {
        final org.apache.catalina.startup.Tomcat tomcat = new org.apache.catalina.startup.Tomcat();
        final int port;
        TomcatLoad() throws Exception {
            File base = java.nio.file.Files.createTempDirectory("tomcat").toFile();
            tomcat.setBaseDir(base.getPath());
            tomcat.setPort(0);
            var ctx = tomcat.addContext("", base.getPath());
            org.apache.catalina.startup.Tomcat.addServlet(ctx, "orders", new jakarta.servlet.http.HttpServlet() {
                @Override protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) throws IOException {
                    StringBuilder sb = new StringBuilder();
                    for (int i = 0; i < 50; i++) sb.append(req.getParameter("q")).append(i).append('\n');
                    resp.setContentType("text/plain");
                    resp.getWriter().write(sb.toString());
                }
            });
            ctx.addServletMappingDecoded("/orders", "orders");
            tomcat.getConnector();
            tomcat.start();
            port = tomcat.getConnector().getLocalPort();
        }
        public void phase(int p) throws Exception {
            for (int i = 0; i < 600; i++) {
                var conn = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/orders?q=" + (i % 97)).openConnection();
                // A request that never gets an answer fails the run instead of hanging it.
                conn.setConnectTimeout(60_000);
                conn.setReadTimeout(60_000);
                try (InputStream in = conn.getInputStream()) { in.readAllBytes(); }
            }
        }
        public void close() throws Exception { tomcat.stop(); tomcat.destroy(); }
    }
}
