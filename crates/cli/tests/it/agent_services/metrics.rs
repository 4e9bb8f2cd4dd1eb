//! The agent's metrics read by other projects' code: a Prometheus server scraping them, an
//! OTLP receiver and the OpenMetrics parser of `prometheus_client`.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nobody listens on now.
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs one of `tests/python/`'s scripts with `args`.
pub(super) fn python(script: &str) -> Command {
    let mut c = Command::new("python3");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(script));
    c
}

/// An OTLP/HTTP receiver built on the OpenTelemetry project's protobuf definitions
/// (`tests/python/otlp_receiver.py`), writing each data point it receives to `out` as JSON.
pub(super) struct OtlpReceiver {
    pub(super) child: Child,
    pub(super) port: u16,
    pub(super) out: PathBuf,
}

impl OtlpReceiver {
    pub(super) fn start(dir: &Path) -> Option<OtlpReceiver> {
        let out = dir.join("otlp.jsonl");
        let mut child = python("otlp_receiver.py").arg(&out).stdout(Stdio::piped()).spawn().ok()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).ok()?;
        let Ok(port) = line.trim().parse() else {
            let _ = child.kill();
            return None;
        };
        Some(OtlpReceiver { child, port, out })
    }

    /// Every data point received: metric name, unit, attributes, value, resource.
    pub(super) fn points(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Prometheus server (Debian's) scraping the agent at `target` every 5 s, with the alert
/// rule the guide documents.
pub(super) struct Prometheus {
    pub(super) child: Child,
    pub(super) port: u16,
}

impl Prometheus {
    pub(super) fn start(dir: &Path, target: u16) -> Option<Prometheus> {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/GUIDE.md")).unwrap();
        let rule =
            readme.split("```yaml\n").nth(1).and_then(|r| r.split("```").next()).expect("the guide's alert rule");
        std::fs::write(dir.join("rules.yml"), rule).unwrap();
        let config = format!(
            "global: {{scrape_interval: 5s, evaluation_interval: 5s}}\nrule_files: [rules.yml]\nscrape_configs:\n  - job_name: leakscope\n    static_configs: [{{targets: ['127.0.0.1:{target}'], labels: {{namespace: test, pod: registry}}}}]\n"
        );
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let p = Prometheus { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while ureq::get(&format!("http://127.0.0.1:{port}/-/ready")).call().is_err() {
            assert!(Instant::now() < deadline, "Prometheus did not get ready (is the guide's rule valid?)");
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(p)
    }

    /// The result of an instant query at Unix time `at`.
    pub(super) fn query(&self, q: &str, at: f64) -> Vec<Value> {
        let url = format!("http://127.0.0.1:{}/api/v1/query", self.port);
        let r: Value =
            ureq::get(&url).query("query", q).query("time", &at.to_string()).call().unwrap().into_json().unwrap();
        assert_eq!(r["status"], "success", "{q}: {r}");
        r["data"]["result"].as_array().unwrap().clone()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The samples of an OpenMetrics text as the Prometheus project's Python parser reads it
/// (`tests/python/openmetrics_parse.py`), which rejects text that breaks the format.
pub(super) fn parse_openmetrics(text: &str) -> Vec<Value> {
    let mut child = python("openmetrics_parse.py")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = crate::support::wait_bounded(child, "openmetrics_parse.py");
    assert!(out.status.success(), "{}\n{text}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}
