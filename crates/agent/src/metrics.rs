//! What the agent knows, for the fleet's monitoring: Prometheus/OpenMetrics text at
//! `/metrics` and OTLP/HTTP export to an OpenTelemetry collector. The worker publishes one set
//! of [`Readings`] after each snapshot; both exporters read it from threads of their own (the
//! HTTP server's, the OTLP reader's), never from the VM's.
//!
//! The series are few and bounded: the top [`TOP_CLASSES`] classes by estimated live bytes,
//! plus the growth candidates (at most [`MAX_CANDIDATES`]), and a handful of agent figures.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

/// Classes given a live-bytes series, most live bytes first.
pub(crate) const TOP_CLASSES: usize = 20;
/// Growth candidates given series, most likely leak first.
pub(crate) const MAX_CANDIDATES: usize = 10;

/// A growth candidate as the online ranking sees it (the model `top` shows).
pub(crate) type Candidate = report::TopCandidate;

/// The agent's figures as of its last snapshot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Readings {
    /// `running`, `ended` or `disabled`.
    pub status: String,
    /// The JVM's version, for the info series.
    pub jvm: String,
    /// Estimated live bytes of the sampled objects (after a collection or a walk when there is one).
    pub live_bytes: u64,
    /// The top classes by estimated live bytes.
    pub classes: Vec<(String, u64)>,
    /// Whether the run has been observed long enough for growth to be judged.
    pub judged: bool,
    /// Current candidates, most likely leak first (none before `judged`).
    pub candidates: Vec<Candidate>,
    pub walks: u64,
    /// Walks not taken (predicted over `max_pause`) or stopped at `max_pause`.
    pub walks_skipped: u64,
    pub longest_pause_s: f64,
    pub last_pause_s: f64,
    /// Bytes the newest walk reached from the GC roots (exact).
    pub walked_bytes: u64,
    /// The pause a whole heap walk would cause now, as last predicted (over `max_pause`, no
    /// walk is taken).
    pub walk_predicted_pause_s: f64,
    pub samples: u64,
}

/// Readings shared between the worker and the exporters.
pub(crate) type Shared = Arc<Mutex<Readings>>;

fn read(shared: &Shared) -> Readings {
    shared.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

impl Readings {
    /// The classes that get per-class series: the top ones and every candidate, once each.
    fn labelled_classes(&self) -> Vec<String> {
        let mut names: Vec<String> = self.classes.iter().map(|(n, _)| n.clone()).collect();
        for c in &self.candidates {
            if !names.contains(&c.class) {
                names.push(c.class.clone());
            }
        }
        names
    }

    fn candidate(&self, class: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.class == class)
    }

    fn live(&self, class: &str) -> u64 {
        self.classes.iter().find(|(n, _)| n == class).map_or(0, |c| c.1)
    }
}

type Labels = Vec<(String, String)>;

fn class_label(class: &str) -> Labels {
    vec![("class".to_string(), class.to_string())]
}

/// The readings as OpenMetrics text (a fresh registry each time, so that a class that left
/// the top or stopped being a candidate leaves no stale series).
pub(crate) fn openmetrics(r: &Readings) -> String {
    let mut reg = Registry::with_prefix("leakscope");
    let up = Gauge::<i64>::default();
    up.set(i64::from(r.status == "running"));
    reg.register("agent_up", "1 while the agent records, 0 once it ended or disabled itself", up);
    let info = Info::new(vec![
        ("status".to_string(), r.status.clone()),
        ("version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("jvm".to_string(), r.jvm.clone()),
    ]);
    reg.register("agent", "The agent's status and versions", info);
    let live = Gauge::<i64>::default();
    live.set(r.live_bytes as i64);
    reg.register_with_unit("live", "Estimated live bytes of the sampled objects", Unit::Bytes, live);
    let judged = Gauge::<i64>::default();
    judged.set(i64::from(r.judged));
    reg.register(
        "growth_judged",
        "1 once the run has been observed long enough to judge growth (before that, no candidate means not enough data, not no leak)",
        judged,
    );
    let by_class = Family::<Labels, Gauge>::default();
    let candidate = Family::<Labels, Gauge>::default();
    let holder = Family::<Labels, Gauge>::default();
    let rank = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
    let growth = Family::<Labels, Gauge>::default();
    for class in r.labelled_classes() {
        let labels = class_label(&class);
        by_class.get_or_create(&labels).set(r.live(&class) as i64);
        let c = r.candidate(&class);
        candidate.get_or_create(&labels).set(i64::from(c.is_some()));
        if let Some(c) = c {
            rank.get_or_create(&labels).set(c.rank);
            growth.get_or_create(&labels).set(c.growth_bytes as i64);
            if let Some(h) = &c.held_by {
                let labels = vec![("class".to_string(), class.clone()), ("holder".to_string(), h.clone())];
                holder.get_or_create(&labels).set(1);
            }
        }
    }
    reg.register_with_unit(
        "class_live",
        "Estimated live bytes per class (the top classes and the growth candidates)",
        Unit::Bytes,
        by_class,
    );
    reg.register("growth_candidate", "1 when the class is a growth candidate (a likely leak), else 0", candidate);
    reg.register(
        "growth_holder",
        "1 for a candidate class and what holds it, as far as the heap walks have followed",
        holder,
    );
    reg.register("growth_rank", "Growth rank of a candidate class: higher is more likely a leak", rank);
    reg.register_with_unit("growth", "Bytes a candidate class grew by over the ranked snapshots", Unit::Bytes, growth);
    reg.register("walks", "Heap walks taken", ConstCounter::new(r.walks));
    reg.register("walks_skipped", "Heap walks skipped or stopped for max_pause", ConstCounter::new(r.walks_skipped));
    let longest = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    longest.set(r.longest_pause_s);
    reg.register_with_unit("walk_longest_pause", "Longest pause a heap walk caused", Unit::Seconds, longest);
    let last = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    last.set(r.last_pause_s);
    reg.register_with_unit("walk_last_pause", "Pause the newest heap walk caused", Unit::Seconds, last);
    let walked = Gauge::<i64>::default();
    walked.set(r.walked_bytes as i64);
    reg.register_with_unit("heap_walked", "Bytes the newest heap walk reached from the GC roots", Unit::Bytes, walked);
    let predicted = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
    predicted.set(r.walk_predicted_pause_s);
    reg.register_with_unit(
        "walk_predicted_pause",
        "Pause a whole heap walk would cause now; over max_pause, no walk is taken (raise --max-pause, or use --capture-on-leak)",
        Unit::Seconds,
        predicted,
    );
    reg.register("samples", "Sampled allocations recorded", ConstCounter::new(r.samples));
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = encode(&mut out, &reg);
    out
}

/// Serves `/metrics` on `addr` from a thread of its own; returns the bound address.
pub(crate) fn serve(addr: std::net::SocketAddr, shared: Shared) -> Result<std::net::SocketAddr, String> {
    let server = tiny_http::Server::http(addr).map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().unwrap_or(addr);
    std::thread::Builder::new()
        .name("leakscope-metrics".into())
        .spawn(move || {
            for request in server.incoming_requests() {
                let response = match (request.method(), request.url()) {
                    (tiny_http::Method::Get, "/metrics") => {
                        let header = tiny_http::Header::from_bytes(
                            &b"Content-Type"[..],
                            &b"application/openmetrics-text; version=1.0.0; charset=utf-8"[..],
                        )
                        .expect("a valid header");
                        tiny_http::Response::from_string(openmetrics(&read(&shared))).with_header(header)
                    }
                    _ => tiny_http::Response::from_string("leakscope agent: metrics are at /metrics\n")
                        .with_status_code(404),
                };
                let _ = request.respond(response);
            }
        })
        .map_err(|e| format!("cannot start the metrics thread: {e}"))?;
    Ok(bound)
}

/// Pushes the readings to an OTLP/HTTP collector every `every`, from the SDK's reader thread.
pub(crate) fn otlp(
    endpoint: &str,
    every: Duration,
    shared: Shared,
    resource: Vec<(&'static str, String)>,
) -> Result<opentelemetry_sdk::metrics::SdkMeterProvider, String> {
    use opentelemetry::metrics::MeterProvider;
    use opentelemetry::KeyValue;
    use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};

    // 2 s: the last export, at the JVM's exit, must fit in the 3 s the exit waits for the worker.
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(Ureq(ureq::AgentBuilder::new().timeout(Duration::from_secs(2)).build()))
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| format!("cannot export OTLP to {endpoint}: {e}"))?;
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(exporter).with_interval(every).build();
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("leakscope-agent")
        .with_attributes(resource.into_iter().map(|(k, v)| KeyValue::new(k, v)))
        .build();
    let provider =
        opentelemetry_sdk::metrics::SdkMeterProvider::builder().with_reader(reader).with_resource(resource).build();
    let meter = provider.meter("leakscope");
    let class = |c: &str| [KeyValue::new("class", c.to_string())];
    let s = shared.clone();
    meter
        .u64_observable_gauge("leakscope.class.live")
        .with_unit("By")
        .with_description("Estimated live bytes per class (the top classes and the growth candidates)")
        .with_callback(move |o| {
            let r = read(&s);
            for c in r.labelled_classes() {
                o.observe(r.live(&c), &class(&c));
            }
        })
        .build();
    let s = shared.clone();
    meter
        .u64_observable_gauge("leakscope.growth.candidate")
        .with_description("1 when the class is a growth candidate (a likely leak), else 0")
        .with_callback(move |o| {
            let r = read(&s);
            for c in r.labelled_classes() {
                o.observe(u64::from(r.candidate(&c).is_some()), &class(&c));
            }
        })
        .build();
    let s = shared.clone();
    meter
        .u64_observable_gauge("leakscope.growth.holder")
        .with_description("1 for a candidate class and what holds it, as far as the heap walks have followed")
        .with_callback(move |o| {
            for c in read(&s).candidates {
                if let Some(h) = c.held_by {
                    o.observe(1, &[KeyValue::new("class", c.class), KeyValue::new("holder", h)]);
                }
            }
        })
        .build();
    let s = shared.clone();
    meter
        .f64_observable_gauge("leakscope.growth.rank")
        .with_description("Growth rank of a candidate class: higher is more likely a leak")
        .with_callback(move |o| {
            for c in read(&s).candidates {
                o.observe(c.rank, &class(&c.class));
            }
        })
        .build();
    let s = shared.clone();
    meter
        .u64_observable_gauge("leakscope.growth")
        .with_unit("By")
        .with_description("Bytes a candidate class grew by over the ranked snapshots")
        .with_callback(move |o| {
            for c in read(&s).candidates {
                o.observe(c.growth_bytes, &class(&c.class));
            }
        })
        .build();
    let whole = |name: &'static str, unit: &'static str, what: &'static str, f: fn(&Readings) -> u64| {
        let s = shared.clone();
        meter
            .u64_observable_gauge(name)
            .with_unit(unit)
            .with_description(what)
            .with_callback(move |o| o.observe(f(&read(&s)), &[]))
            .build()
    };
    whole("leakscope.live", "By", "Estimated live bytes of the sampled objects", |r| r.live_bytes);
    whole("leakscope.agent.up", "1", "1 while the agent records, 0 once it ended or disabled itself", |r| {
        u64::from(r.status == "running")
    });
    whole("leakscope.growth.judged", "1", "1 once the run has been observed long enough to judge growth", |r| {
        u64::from(r.judged)
    });
    whole("leakscope.heap.walked", "By", "Bytes the newest heap walk reached from the GC roots", |r| r.walked_bytes);
    let seconds = |name: &'static str, unit: &'static str, what: &'static str, f: fn(&Readings) -> f64| {
        let s = shared.clone();
        meter
            .f64_observable_gauge(name)
            .with_unit(unit)
            .with_description(what)
            .with_callback(move |o| o.observe(f(&read(&s)), &[]))
            .build()
    };
    seconds("leakscope.walk.longest_pause", "s", "Longest pause a heap walk caused", |r| r.longest_pause_s);
    seconds("leakscope.walk.last_pause", "s", "Pause the newest heap walk caused", |r| r.last_pause_s);
    seconds(
        "leakscope.walk.predicted_pause",
        "s",
        "Pause a whole heap walk would cause now; over max_pause, no walk is taken",
        |r| r.walk_predicted_pause_s,
    );
    let counter = |name: &'static str, unit: &'static str, what: &'static str, f: fn(&Readings) -> u64| {
        let s = shared.clone();
        meter
            .u64_observable_counter(name)
            .with_unit(unit)
            .with_description(what)
            .with_callback(move |o| o.observe(f(&read(&s)), &[]))
            .build()
    };
    counter("leakscope.walks", "{walk}", "Heap walks taken", |r| r.walks);
    counter("leakscope.walks.skipped", "{walk}", "Heap walks skipped or stopped for max_pause", |r| r.walks_skipped);
    counter("leakscope.samples", "{sample}", "Sampled allocations recorded", |r| r.samples);
    Ok(provider)
}

/// The OTLP exporter's HTTP client: `ureq`, blocking on the reader's own thread (the SDK's
/// periodic reader runs the export there), so no async runtime comes into the JVM.
#[derive(Debug)]
struct Ureq(ureq::Agent);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Ureq {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        use std::io::Read;
        let (parts, body) = request.into_parts();
        let mut req = self.0.request(parts.method.as_str(), &parts.uri.to_string());
        for (name, value) in &parts.headers {
            if let Ok(value) = value.to_str() {
                req = req.set(name.as_str(), value);
            }
        }
        let response = match req.send_bytes(&body) {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(e) => return Err(Box::new(e)),
        };
        let status = response.status();
        let mut buf = Vec::new();
        response.into_reader().take(1 << 20).read_to_end(&mut buf)?;
        Ok(http::Response::builder().status(status).body(bytes::Bytes::from(buf))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings() -> Readings {
        Readings {
            status: "running".into(),
            jvm: "17.0.15".into(),
            live_bytes: 5_000_000,
            judged: true,
            classes: vec![("byte[]".into(), 3_000_000), ("Registry$Session".into(), 1_000_000)],
            candidates: vec![
                Candidate {
                    class: "Registry$Session".into(),
                    rank: 7.5,
                    growth_bytes: 900_000,
                    held_by: Some("Registry.sessions".into()),
                    held_by_walked_ms: Some(1_000),
                },
                Candidate {
                    class: "java.util.HashMap$Node".into(),
                    rank: 2.0,
                    growth_bytes: 300_000,
                    held_by: None,
                    held_by_walked_ms: None,
                },
            ],
            walks: 3,
            walks_skipped: 1,
            longest_pause_s: 0.25,
            last_pause_s: 0.125,
            walked_bytes: 9_000_000,
            walk_predicted_pause_s: 1.5,
            samples: 1234,
        }
    }

    #[test]
    fn every_candidate_and_top_class_has_its_series_and_names_carry_units() {
        let text = openmetrics(&readings());
        for line in [
            "leakscope_agent_up 1",
            "leakscope_growth_judged 1",
            "leakscope_live_bytes 5000000",
            "leakscope_class_live_bytes{class=\"byte[]\"} 3000000",
            "leakscope_class_live_bytes{class=\"java.util.HashMap$Node\"} 0",
            "leakscope_growth_candidate{class=\"byte[]\"} 0",
            "leakscope_growth_candidate{class=\"Registry$Session\"} 1",
            "leakscope_growth_rank{class=\"Registry$Session\"} 7.5",
            "leakscope_growth_bytes{class=\"java.util.HashMap$Node\"} 300000",
            "leakscope_growth_holder{class=\"Registry$Session\",holder=\"Registry.sessions\"} 1",
            "leakscope_walks_total 3",
            "leakscope_walks_skipped_total 1",
            "leakscope_walk_longest_pause_seconds 0.25",
            "leakscope_heap_walked_bytes 9000000",
            "leakscope_walk_predicted_pause_seconds 1.5",
            "leakscope_samples_total 1234",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert!(!text.contains("growth_rank{class=\"byte[]\"}"), "a class that is no candidate has no rank");
    }

    #[test]
    fn an_ended_agent_is_down() {
        let text = openmetrics(&Readings { status: "ended".into(), ..readings() });
        assert!(text.lines().any(|l| l == "leakscope_agent_up 0"), "{text}");
        assert!(text.contains("status=\"ended\""), "{text}");
    }
}
