//! How a person names a growing structure (decision 0019).
//!
//! The structure a finding is about is found deep in the heap: the innermost place that is
//! neither multiplied nor a collection's internals, such as the per-domain `HashMap` inside the
//! MBean server's repository. People do not say `java.util.HashMap$Node.value`; they say the
//! field they can find in code they know: the nearest field, outwards, of a class that is not a
//! collection (`Repository.domainTb`), and when that class is a library's and an application
//! object owns the library's structure through a few of the library's own objects (a Guava
//! cache in a service's field), the application's field (`Service.cache`), with the library's
//! place beside it.

use crate::platform::is_platform_class;

/// One step outwards from a structure: the class that holds the step before (`class NAME` for a
/// class's statics, an empty string for a GC root) and its field (`static NAME`, `[]`, or a
/// root's kind).
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The holding class.
    pub owner: &'a str,
    /// The field that holds the step before.
    pub field: &'a str,
}

/// A structure's name as a person says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonName {
    /// `Owner.field` (`Class.FIELD` for a static field).
    pub name: String,
    /// The library's own place, when `name` is the application field that owns it.
    pub library: Option<String>,
    /// What users of the library call it, when the place is a well-known one.
    pub known_as: Option<&'static str>,
}

/// Library objects an application field may reach its library structure through and still be
/// said to own it: a Guava `Cache` is a facade, its `LocalCache` and the segments (1); an
/// `EventBus` holds its `SubscriberRegistry` (1); the platform MBean server is `JmxMBeanServer`
/// → `DefaultMBeanServerInterceptor` → `Repository` (2). An embedded Tomcat's sessions are
/// five or more of Tomcat's objects below the application's `tomcat` field (server, service,
/// engine, host, context): there the library's own name is what a person knows.
const MAX_FACADE: usize = 3;

/// Packages of collection libraries: their classes are a structure's parts, like `java.util`'s.
const COLLECTION_LIBRARIES: [&str; 6] = [
    "com.google.common.collect.",
    "it.unimi.dsi.fastutil.",
    "org.eclipse.collections.",
    "gnu.trove.",
    "org.apache.commons.collections",
    "org.jctools.",
];

/// Well-known library places and what their users call them (a place is `Class.field`; a
/// class's prefix names every field of it).
const KNOWN: [(&str, &str); 13] = [
    ("com.sun.jmx.mbeanserver.Repository.domainTb", "the MBean server's registered MBeans"),
    ("org.apache.catalina.session.ManagerBase.sessions", "Tomcat's HTTP sessions"),
    ("org.apache.catalina.session.StandardManager.sessions", "Tomcat's HTTP sessions"),
    ("org.eclipse.jetty.server.session.", "Jetty's HTTP sessions"),
    ("com.google.common.eventbus.SubscriberRegistry.subscribers", "a Guava EventBus's subscribers"),
    ("com.google.common.cache.LocalCache.", "a Guava cache"),
    ("com.github.benmanes.caffeine.cache.", "a Caffeine cache"),
    ("org.apache.logging.log4j.spi.LoggerRegistry.", "Log4j's loggers"),
    ("org.apache.logging.log4j.core.LoggerContext.", "Log4j's loggers"),
    ("java.util.logging.LogManager", "java.util.logging's loggers"),
    ("java.lang.ApplicationShutdownHooks.hooks", "the JVM's shutdown hooks"),
    ("java.lang.Thread.threadLocals", "a thread's ThreadLocals"),
    ("EventEmitter._events", "an EventEmitter's listeners"),
];

/// Whether a class is part of a collection rather than a place a person names: an array, any
/// class of `java.util` and `java.util.concurrent` (and `.atomic`), a nested class of the JDK
/// or of a library (`LocalCache$Segment`), a collection library's class, or in a V8 heap a
/// built-in collection or V8's internals ([`crate::v8::is_collection_part`]).
pub fn is_collection_part(class: &str) -> bool {
    if class.starts_with("class ") {
        return false;
    }
    let package = class.rsplit_once('.').map_or("", |(p, _)| p);
    class.ends_with("[]")
        || matches!(package, "java.util" | "java.util.concurrent" | "java.util.concurrent.atomic")
        || (is_platform_class(class) && class.contains('$'))
        || COLLECTION_LIBRARIES.iter().any(|p| class.starts_with(p))
        || crate::v8::is_collection_part(class)
}

/// Whether a holding class is the application's: neither the JDK's nor a known library's,
/// nor an array.
fn is_application(class: &str) -> bool {
    let class = class.strip_prefix("class ").unwrap_or(class);
    !class.is_empty() && !class.ends_with("[]") && !is_platform_class(class)
}

/// `Owner.field` of one step (a closure's variable as [`crate::v8::context_variable`] says it), without the `class ` and `static ` markers of statics; the owner
/// alone when its field is not known.
fn place(s: &Step<'_>) -> String {
    let owner = s.owner.strip_prefix("class ").unwrap_or(s.owner);
    match s.field.strip_prefix("static ").unwrap_or(s.field) {
        "" | "[]" => owner.to_string(),
        field if crate::v8::is_context(owner) => crate::v8::context_variable(field),
        field => format!("{owner}.{field}"),
    }
}

/// What users of a library call `place`, when it is a well-known one.
pub fn known_as(place: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(p, _)| place.starts_with(p)).map(|&(_, what)| what)
}

/// The name of the structure held by `steps` (innermost first; GC roots have an empty owner):
/// the nearest field of a class that is no collection's part (the class alone when the field is
/// not known); when that class is a library's,
/// the application's field that owns it through at most [`MAX_FACADE`] of the library's
/// objects. None when every step is a collection's part or a root.
pub fn person_name(steps: &[Step<'_>]) -> Option<PersonName> {
    let named = |s: &&Step<'_>| !s.owner.is_empty() && !s.field.is_empty() && s.field != "[]";
    let at = steps.iter().take_while(|s| !s.owner.is_empty()).position(|s| !is_collection_part(s.owner))?;
    let own = &steps[at];
    let library = place(own);
    if is_application(own.owner) {
        return Some(PersonName { known_as: known_as(&library), name: library, library: None });
    }
    let mut facade = 0;
    for s in &steps[at + 1..] {
        if s.owner.is_empty() {
            break;
        }
        if is_application(s.owner) {
            if named(&s) {
                let known = known_as(&library);
                return Some(PersonName { name: place(s), library: Some(library), known_as: known });
            }
            break;
        }
        if !is_collection_part(s.owner) {
            facade += 1;
            if facade > MAX_FACADE {
                break;
            }
        }
    }
    Some(PersonName { known_as: known_as(&library), name: library, library: None })
}

#[cfg(test)]
mod tests {
    use super::{person_name, Step};

    fn steps<'a>(s: &[(&'a str, &'a str)]) -> Vec<Step<'a>> {
        s.iter().map(|&(owner, field)| Step { owner, field }).collect()
    }

    #[test]
    fn a_library_structure_is_named_by_its_own_field_past_the_collections_inside() {
        // The platform MBean server's repository: a domain's HashMap inside domainTb's HashMap.
        let jmx = steps(&[
            ("java.util.HashMap$Node", "value"),
            ("java.util.HashMap$Node[]", "[]"),
            ("java.util.HashMap", "table"),
            ("com.sun.jmx.mbeanserver.Repository", "domainTb"),
            ("com.sun.jmx.interceptor.DefaultMBeanServerInterceptor", "repository"),
            ("com.sun.jmx.mbeanserver.JmxMBeanServer", "mbsInterceptor"),
            ("class java.lang.management.ManagementFactory", "static platformMBeanServer"),
        ]);
        let n = person_name(&jmx).unwrap();
        assert_eq!(n.name, "com.sun.jmx.mbeanserver.Repository.domainTb");
        assert_eq!((n.library, n.known_as), (None, Some("the MBean server's registered MBeans")));
    }

    #[test]
    fn an_application_field_owning_a_library_structure_names_it() {
        let cache = steps(&[
            ("com.google.common.cache.LocalCache$Segment", "table"),
            ("com.google.common.cache.LocalCache$Segment[]", "[]"),
            ("com.google.common.cache.LocalCache", "segments"),
            ("com.google.common.cache.LocalCache$LocalManualCache", "localCache"),
            ("com.shop.Prices", "cache"),
        ]);
        let n = person_name(&cache).unwrap();
        assert_eq!(n.name, "com.shop.Prices.cache");
        assert_eq!(n.library.as_deref(), Some("com.google.common.cache.LocalCache.segments"));
        assert_eq!(n.known_as, Some("a Guava cache"));
        // The application's own structure needs nothing beside it.
        let own =
            steps(&[("java.util.concurrent.CopyOnWriteArrayList", "array"), ("com.shop.PriceService", "listeners")]);
        let n = person_name(&own).unwrap();
        assert_eq!((n.name.as_str(), n.library), ("com.shop.PriceService.listeners", None));
        let statics = steps(&[("class Registry", "static SESSIONS")]);
        assert_eq!(person_name(&statics).unwrap().name, "Registry.SESSIONS");
    }

    #[test]
    fn an_application_far_above_a_framework_does_not_own_its_structure() {
        // An embedded Tomcat in the application's field: the sessions are Tomcat's.
        let tomcat = steps(&[
            ("org.apache.catalina.session.StandardManager", "sessions"),
            ("org.apache.catalina.core.StandardContext", "manager"),
            ("java.util.HashMap$Node", "value"),
            ("java.util.HashMap$Node[]", "[]"),
            ("java.util.HashMap", "table"),
            ("org.apache.catalina.core.StandardHost", "children"),
            ("org.apache.catalina.core.StandardEngine", "children"),
            ("org.apache.catalina.core.StandardService", "engine"),
            ("org.apache.catalina.core.StandardServer", "services"),
            ("org.apache.catalina.startup.Tomcat", "server"),
            ("LeakyApps$TomcatSessions", "tomcat"),
        ]);
        let n = person_name(&tomcat).unwrap();
        assert_eq!(n.name, "org.apache.catalina.session.StandardManager.sessions");
        assert_eq!((n.library, n.known_as), (None, Some("Tomcat's HTTP sessions")));
    }

    #[test]
    fn only_collections_and_roots_give_no_name() {
        assert_eq!(person_name(&steps(&[("java.lang.Object[]", "[]"), ("", "JNI global")])), None);
        assert_eq!(person_name(&[]), None);
    }
}
