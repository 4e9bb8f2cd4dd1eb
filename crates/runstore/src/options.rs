//! The agent's options: `key:value` pairs separated by commas, as in
//! `-agentpath:libleakscope_agent.so=out:/tmp/run.db,budget:1`.
//!
//! `key=value` is accepted too, but `jcmd PID JVMTI.agent_load` would take `key=value` for
//! one of its own arguments, so `leakscope attach` always writes `key:value`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// What the agent does, and within which budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The run store to write; `%p` in it stands for the process id.
    pub out: PathBuf,
    /// Mean bytes allocated between two samples (JVMTI heap sampling interval).
    pub interval: u32,
    /// Frames recorded per sample: the allocation site.
    pub depth: usize,
    /// Shortest time between two recorded sample snapshots.
    pub period: Duration,
    /// Share of wall time the heap walks may take, in percent.
    pub budget_percent: f64,
    /// A walk predicted to stop the JVM longer than this is skipped.
    pub max_pause: Duration,
    /// Whether class points-from walks run at all.
    pub walks: bool,
    /// Longest time between two walks while no class is a candidate (the budget permitting).
    pub walk_every: Duration,
    /// Reference rules (`A>B>C`) whose objects are watched for staleness: the last element's
    /// classes are instrumented and their instances' accesses recorded.
    pub watch: Vec<Vec<String>>,
    /// Where to serve Prometheus/OpenMetrics text at `/metrics` (loopback unless an address
    /// is given).
    pub metrics: Option<SocketAddr>,
    /// OTLP/HTTP collector to push metrics to (`http://host:4318`).
    pub otlp: Option<String>,
    /// Time between two OTLP exports.
    pub otlp_every: Duration,
    /// Take a live heap dump beside the run store when a growth candidate is confirmed.
    pub capture_on_leak: bool,
    /// Shortest time between two such dumps.
    pub capture_every: Duration,
    /// No dump while the live heap is bigger than this many bytes (the dump is about as big,
    /// and writing it stops the JVM for about a second per gigabyte).
    pub capture_max_heap: u64,
    /// Test only: panic in this callback (`alloc`, `gc`, `walk`) to prove the JVM survives.
    pub test_panic: Option<String>,
    /// Benchmarks only (`benches/walk-cost.sh`): before each walk, walk once with no callback
    /// at all, HotSpot's own traversal (the floor of any walk's pause), and record its pause.
    pub walk_floor: bool,
    /// A whole walk that would not fit `max_pause` runs on a forked copy of the JVM instead
    /// (Linux, not on ZGC, with memory left for the copy): the JVM stops for the fork only.
    /// On by default, but off with `watch` unless given (a forked walk learns no watched
    /// object's path); `fork_walks:off` plans such walks as stop-the-world ones.
    pub fork_walks: bool,
    /// A forked walk's child is killed after this long.
    pub fork_timeout: Duration,
    /// A forked walk's child is killed once its copy (its private memory) passes this many
    /// bytes; at most half of what the JVM's cgroup (else the machine) has left at the fork.
    pub fork_max_copy: Option<u64>,
    /// Test only: a forked walk's child stops in its walk, as on a lock held at the fork.
    pub test_fork_hang: bool,
    /// Test only: a thread takes HotSpot's chunk pool lock as each fork is made and holds it
    /// 50 ms, and each forked child stops if it finds it held.
    pub test_hold_fork_lock: bool,
}

impl Options {
    /// The defaults for the JVM with process id `pid`.
    pub fn defaults(pid: u32) -> Options {
        Options {
            out: std::env::temp_dir().join(format!("leakscope-{pid}.db")),
            interval: 256 * 1024,
            depth: 16,
            period: Duration::from_secs(1),
            budget_percent: 1.0,
            max_pause: Duration::from_millis(1000),
            walks: true,
            walk_every: Duration::from_secs(15),
            watch: Vec::new(),
            metrics: None,
            otlp: None,
            otlp_every: Duration::from_secs(60),
            capture_on_leak: false,
            capture_every: Duration::from_secs(3600),
            capture_max_heap: 1 << 30,
            test_panic: None,
            walk_floor: false,
            fork_walks: true,
            fork_timeout: Duration::from_secs(120),
            fork_max_copy: None,
            test_fork_hang: false,
            test_hold_fork_lock: false,
        }
    }

    /// Parses an option string over the defaults for `pid`.
    pub fn parse(text: &str, pid: u32) -> Result<Options, OptionError> {
        let mut o = Options::defaults(pid);
        let mut fork_given = false;
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = match item.find([':', '=']) {
                Some(i) => (&item[..i], &item[i + 1..]),
                None => return Err(OptionError::NoValue { item: item.to_owned() }),
            };
            let bad = |what: &str| OptionError::Bad { key: key.to_owned(), why: format!("`{value}` is not {what}") };
            match key {
                "out" => o.out = PathBuf::from(value.replace("%p", &pid.to_string())),
                "interval" => {
                    o.interval = parse_bytes(value)
                        .ok()
                        .and_then(|b| u32::try_from(b).ok())
                        .filter(|&b| b > 0)
                        .ok_or_else(|| bad("a size such as 256k"))?
                }
                "depth" => o.depth = value.parse().ok().filter(|d| (1..=32).contains(d)).ok_or_else(|| bad("1..32"))?,
                "period" => o.period = parse_duration(value).ok_or_else(|| bad("a duration such as 1s"))?,
                "budget" => {
                    o.budget_percent = value
                        .trim_end_matches('%')
                        .parse()
                        .ok()
                        .filter(|b: &f64| (0.0..=100.0).contains(b))
                        .ok_or_else(|| bad("a percentage 0..100"))?
                }
                "max_pause" => o.max_pause = parse_duration(value).ok_or_else(|| bad("a duration such as 500ms"))?,
                "walks" => o.walks = parse_switch(value).ok_or_else(|| bad("on or off"))?,
                "capture_on_leak" => o.capture_on_leak = parse_switch(value).ok_or_else(|| bad("on or off"))?,
                "capture_every" => {
                    o.capture_every = parse_duration(value)
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(|| bad("a duration of 1s or more"))?
                }
                "capture_max_heap" => {
                    o.capture_max_heap =
                        parse_bytes(value).ok().filter(|&b| b > 0).ok_or_else(|| bad("a size such as 2g"))?
                }
                "walk_every" => o.walk_every = parse_duration(value).ok_or_else(|| bad("a duration such as 10m"))?,
                "watch" => {
                    for rule in value.split(';').map(str::trim).filter(|r| !r.is_empty()) {
                        o.watch.push(parse_rule(rule).ok_or_else(|| bad("a reference rule such as Registry>Session"))?);
                    }
                }
                "metrics" => {
                    o.metrics =
                        Some(parse_listen(value).ok_or_else(|| bad("a port or an address such as 0.0.0.0:9464"))?)
                }
                "otlp" => {
                    o.otlp = Some(parse_otlp(value).map_err(|why| OptionError::Bad { key: key.to_owned(), why })?)
                }
                "otlp_every" => {
                    o.otlp_every = parse_duration(value)
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(|| bad("a duration of 1s or more"))?
                }
                "test_panic" => o.test_panic = Some(value.to_string()),
                "walk_floor" => o.walk_floor = parse_switch(value).ok_or_else(|| bad("on or off"))?,
                "fork_walks" => {
                    o.fork_walks = parse_switch(value).ok_or_else(|| bad("on or off"))?;
                    fork_given = true;
                }
                "fork_timeout" => {
                    o.fork_timeout = parse_duration(value)
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(|| bad("a duration of 1s or more"))?
                }
                "fork_max_copy" => o.fork_max_copy = Some(parse_bytes(value).map_err(|_| bad("a size (512M, 2G)"))?),
                "test_fork_hang" => o.test_fork_hang = parse_switch(value).ok_or_else(|| bad("on or off"))?,
                "test_hold_fork_lock" => o.test_hold_fork_lock = parse_switch(value).ok_or_else(|| bad("on or off"))?,
                _ => return Err(OptionError::Unknown { key: key.to_owned() }),
            }
        }
        // A forked walk learns no watched object's path (its links stay in the copy): with
        // `watch`, walks stay in the JVM unless forks are asked for by name.
        if !o.watch.is_empty() && !fork_given {
            o.fork_walks = false;
        }
        Ok(o)
    }
}

pub use heap::names::parse_rule;

/// Why an option string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// An item without `key:value`.
    #[error("option `{item}` has no value (write key:value)")]
    NoValue {
        /// The item as written.
        item: String,
    },
    /// A known option whose value cannot be used.
    #[error("option `{key}`: {why}")]
    Bad {
        /// The option's key (`max_pause`).
        key: String,
        /// What is wrong with its value.
        why: String,
    },
    /// No option of that key.
    #[error("unknown option `{key}` (known: out, interval, depth, period, budget, max_pause, walks, walk_every, watch, metrics, otlp, otlp_every, capture_on_leak, capture_every, capture_max_heap, fork_walks, fork_timeout, fork_max_copy)")]
    Unknown {
        /// The key as written.
        key: String,
    },
}

/// `on`/`true`/`yes` or `off`/`false`/`no`.
fn parse_switch(s: &str) -> Option<bool> {
    match s {
        "on" | "true" | "yes" => Some(true),
        "off" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// A port (on the loopback: metrics are not published beyond the host unless asked) or an
/// address with a port.
pub fn parse_listen(s: &str) -> Option<SocketAddr> {
    match s.parse::<u16>() {
        Ok(port) => Some(SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => s.parse().ok(),
    }
}

/// An OTLP/HTTP endpoint: `http://host:port`, to which `/v1/metrics` is added unless the path
/// already names it. Plain HTTP only: the agent carries no TLS stack, so a collector on the
/// host or in the pod (the usual deployment) receives it.
pub fn parse_otlp(s: &str) -> Result<String, String> {
    if s.starts_with("https://") {
        return Err(format!("`{s}`: the agent sends plain HTTP only; point it at a collector on the host or in the pod (http://localhost:4318)"));
    }
    let Some(rest) = s.strip_prefix("http://").filter(|r| !r.is_empty() && !r.starts_with('/')) else {
        return Err(format!("`{s}` is not an OTLP/HTTP endpoint such as http://localhost:4318"));
    };
    let base = rest.trim_end_matches('/');
    Ok(if base.ends_with("/v1/metrics") { format!("http://{base}") } else { format!("http://{base}/v1/metrics") })
}

/// Parses a size such as `512K`, `2M`, `1.5GiB` or `4096` (bytes).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("{s:?} is not a size such as 512K, 2M or 4096"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    Ok((n * mult as f64) as u64)
}

/// `500ms`, `2s`, `10m`, `1h`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let n: f64 = s[..split].parse().ok()?;
    let secs = match &s[split..] {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_separators_and_rejects_unknown_keys() {
        let o = Options::parse("out:/tmp/a:b.db,interval=64k,budget:2.5%,max_pause:250ms,walks:off", 7).unwrap();
        assert_eq!(o.out, PathBuf::from("/tmp/a:b.db"));
        assert_eq!(o.interval, 64 * 1024);
        assert_eq!(o.budget_percent, 2.5);
        assert_eq!(o.max_pause, Duration::from_millis(250));
        assert!(!o.walks);
        assert_eq!(Options::parse("colour:red", 7).unwrap_err(), OptionError::Unknown { key: "colour".into() });
        let o = Options::parse("capture_on_leak:on,capture_every:30m,capture_max_heap:2g", 7).unwrap();
        assert!(o.capture_on_leak && o.capture_every == Duration::from_secs(1800) && o.capture_max_heap == 2 << 30);
        assert!(!Options::parse("", 7).unwrap().capture_on_leak, "off by default");
        assert!(Options::parse("", 7).unwrap().fork_walks, "on by default");
        assert!(!Options::parse("fork_walks:off", 7).unwrap().fork_walks);
        assert!(!Options::parse("watch:A>B", 7).unwrap().fork_walks, "off with watch");
        assert!(Options::parse("watch:A>B,fork_walks:on", 7).unwrap().fork_walks);
        assert!(
            matches!(Options::parse("capture_every:0s", 7), Err(OptionError::Bad { key, .. }) if key == "capture_every")
        );
        assert!(Options::parse("interval:lots", 7)
            .unwrap_err()
            .to_string()
            .starts_with("option `interval`: `lots` is not"));
        assert_eq!(Options::parse("", 7).unwrap(), Options::defaults(7));
        assert_eq!(Options::parse("out:/tmp/run-%p.db", 7).unwrap().out, PathBuf::from("/tmp/run-7.db"));
        let w = Options::parse("watch:rule:Registry>Session;Cache > Entry", 7).unwrap().watch;
        assert_eq!(w, vec![vec!["Registry".to_string(), "Session".into()], vec!["Cache".into(), "Entry".into()]]);
        assert!(Options::parse("watch:A>>B", 7).unwrap_err().to_string().contains("reference rule"));
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("512K"), Ok(512 << 10));
        assert_eq!(parse_bytes("2mb"), Ok(2 << 20));
        assert_eq!(parse_bytes("1.5MiB"), Ok(3 << 19));
        assert!(parse_bytes("12X").is_err());
        assert_eq!(
            (parse_bytes("1M"), parse_bytes("512MiB"), parse_bytes("8gb")),
            (Ok(1 << 20), Ok(512 << 20), Ok(8 << 30))
        );
        assert!(parse_bytes("lots").is_err() && parse_bytes("-1G").is_err());
        assert!(parse_bytes("").is_err());
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_duration("soon"), None);
    }

    #[test]
    fn metrics_listen_on_the_loopback_unless_told_and_otlp_is_plain_http() {
        let o = Options::parse("metrics:9464,otlp:http://collector:4318/,otlp_every:5s", 7).unwrap();
        assert_eq!(o.metrics, Some(SocketAddr::from(([127, 0, 0, 1], 9464))));
        assert_eq!(o.otlp.as_deref(), Some("http://collector:4318/v1/metrics"));
        assert_eq!(o.otlp_every, Duration::from_secs(5));
        assert_eq!(parse_listen("0.0.0.0:9464"), Some(SocketAddr::from(([0, 0, 0, 0], 9464))));
        assert_eq!(parse_listen("[::1]:80"), "[::1]:80".parse().ok());
        assert_eq!(parse_listen("everywhere"), None);
        assert_eq!(parse_otlp("http://h:4318/v1/metrics"), Ok("http://h:4318/v1/metrics".into()));
        assert!(parse_otlp("https://h:4318").unwrap_err().contains("plain HTTP"));
        assert!(parse_otlp("h:4318").unwrap_err().contains("not an OTLP/HTTP endpoint"));
        assert!(Options::parse("otlp_every:10ms", 7).unwrap_err().to_string().contains("1s or more"));
    }
}
