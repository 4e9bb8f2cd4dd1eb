//! Which classes are the platform's, the JDK's and the frameworks' and libraries' an
//! application runs on, rather than the application's own: the vocabulary of the JVM that the
//! growth engine names structures, elements and allocation sites by (decision 0019).

/// Whether a class belongs to the JDK (`java.`, `javax.`, `jdk.`, `sun.`, `com.sun.`).
pub fn is_jdk_class(name: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."].iter().any(|p| name.starts_with(p))
}

/// Packages of frameworks and libraries an application runs on: a stack's first frame outside
/// them and the JDK is where the application itself allocates.
pub const FRAMEWORKS: &[&str] = &[
    "jakarta.",
    "org.apache.catalina.",
    "org.apache.coyote.",
    "org.apache.tomcat.",
    "org.apache.jasper.",
    "org.apache.naming.",
    "org.apache.commons.",
    "org.apache.logging.",
    "org.eclipse.jetty.",
    "io.netty.",
    "io.undertow.",
    "io.vertx.",
    "io.micronaut.",
    "io.quarkus.",
    "org.springframework.",
    "org.glassfish.",
    "org.jboss.",
    "org.hibernate.",
    "com.fasterxml.jackson.",
    "com.google.gson.",
    "com.google.common.",
    "ch.qos.logback.",
    "org.slf4j.",
    "org.w3c.",
    "org.xml.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "groovy.",
    "com.github.benmanes.caffeine.",
    "org.ehcache.",
    "net.sf.ehcache.",
    "com.zaxxer.hikari.",
    "io.micrometer.",
    "io.grpc.",
    "reactor.",
    "com.google.protobuf.",
    "io.leakscope.",
];

/// Whether a class belongs to the JDK or to a framework or library the application runs on
/// (Tomcat, Jetty, Netty, Spring, Jackson, logging, language runtimes; see [`FRAMEWORKS`]).
pub fn is_platform_class(name: &str) -> bool {
    is_jdk_class(name) || FRAMEWORKS.iter().any(|p| name.starts_with(p))
}

/// The index of a stack's first frame (innermost first, `pkg.Class.method(File.java:12)`)
/// whose class is neither the JDK's nor a known framework's: where the application allocates.
pub fn application_frame(frames: &[String]) -> Option<usize> {
    frames.iter().position(|f| {
        let method = f.split('(').next().unwrap_or(f);
        method.rsplit_once('.').is_some_and(|(class, _)| !class.is_empty() && !is_platform_class(class))
    })
}

#[cfg(test)]
mod tests {
    use super::application_frame;

    fn frames(f: &[&str]) -> Vec<String> {
        f.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_application_frame_is_the_first_outside_the_jdk_and_frameworks() {
        // Tomcat's stack of a session id (issue 17): four frames never reach the servlet.
        let tomcat = frames(&[
            "java.lang.StringLatin1.newString(StringLatin1.java:769)",
            "java.lang.StringBuilder.toString(StringBuilder.java:453)",
            "org.apache.catalina.util.StandardSessionIdGenerator.generateSessionId(StandardSessionIdGenerator.java:72)",
            "org.apache.catalina.session.ManagerBase.createSession(ManagerBase.java:704)",
            "org.apache.catalina.connector.Request.doGetSession(Request.java:3070)",
            "jakarta.servlet.http.HttpServletRequestWrapper.getSession(HttpServletRequestWrapper.java:226)",
            "com.example.shop.CartServlet.doGet(CartServlet.java:41)",
            "jakarta.servlet.http.HttpServlet.service(HttpServlet.java:564)",
        ]);
        assert_eq!(application_frame(&tomcat), Some(6));
        assert_eq!(application_frame(&tomcat[..4]), None);
        // Nested and hidden classes of the application count; unknown frames do not.
        let own = frames(&["(unloaded method)", "Services$Registry.request(Services.java:150)"]);
        assert_eq!(application_frame(&own), Some(1));
        assert_eq!(application_frame(&frames(&["App.main(App.java:3)"])), Some(0));
        assert_eq!(application_frame(&[]), None);
    }
}
