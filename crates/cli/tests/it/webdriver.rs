//! Driving headless Chromium through ChromeDriver (Debian's `chromium-driver`) over the W3C
//! WebDriver protocol, and `leakscope serve` running in the background.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

/// `leakscope serve` on a free port, stopped when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Server {
    /// Starts `leakscope serve --port 0 ARGS...` and waits until it says where it listens.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_leakscope"))
            .args(["serve", "--port", "0", "--quiet"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run leakscope serve");
        let stderr = child.stderr.take().unwrap();
        let address = |line: &str| {
            let at = line.find("http://")?;
            Some(line[at..].split_whitespace().next()?.trim_end_matches('/').to_string())
        };
        let Some(base) = crate::support::await_line(stderr, "leakscope serve's address", address) else {
            panic!("leakscope serve stopped before listening: {:?}", child.wait())
        };
        Server { child, base }
    }

    /// GET `path`; the status and the body as JSON.
    pub fn get(&self, path: &str) -> (u16, Value) {
        match ureq::get(&format!("{}{path}", self.base)).call() {
            Ok(r) => (r.status(), r.into_json().expect("JSON body")),
            Err(ureq::Error::Status(code, r)) => (code, r.into_json().expect("JSON error body")),
            Err(e) => panic!("GET {path}: {e}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One ChromeDriver process and one browser session in it.
pub struct Browser {
    driver: Child,
    session: String,
    _profile: tempfile::TempDir,
}

/// W3C WebDriver's key for element references.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    /// Starts ChromeDriver and a headless Chromium session that keeps the console log.
    pub fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (apt-get install chromium-driver; scripts/test installs it)");
        let profile = tempfile::tempdir().unwrap();
        let mut b = Browser { driver, session: format!("http://127.0.0.1:{port}"), _profile: profile };
        let deadline = Instant::now() + Duration::from_secs(20);
        while ureq::get(&format!("{}/status", b.session)).call().is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,2000",
        ];
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", b._profile.path().display()));
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let created = b.call("POST", "/session", caps);
        b.session = format!("{}/session/{}", b.session, created["sessionId"].as_str().expect("session id"));
        b
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.session);
        let r = match method {
            "GET" => ureq::get(&url).call(),
            "DELETE" => ureq::delete(&url).call(),
            _ => ureq::request(method, &url).send_json(body),
        };
        match r {
            Ok(r) => r.into_json::<Value>().expect("WebDriver JSON")["value"].take(),
            Err(ureq::Error::Status(code, r)) => {
                panic!("WebDriver {method} {path}: {code} {}", r.into_string().unwrap_or_default())
            }
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    /// Opens `url`.
    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page and returns what it returns.
    pub fn eval(&self, script: &str) -> Value {
        self.call("POST", "/execute/sync", json!({ "script": script, "args": [] }))
    }

    /// Waits up to 30 s until `condition` (a JavaScript expression) is true.
    pub fn wait_for(&self, condition: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.eval(&format!("return !!({condition});")) != Value::Bool(true) {
            assert!(Instant::now() < deadline, "timed out waiting for {condition}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The first element matching a CSS selector.
    pub fn find(&self, css: &str) -> String {
        let found = self.call("POST", "/element", json!({"using": "css selector", "value": css}));
        found[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}")).to_string()
    }

    /// Clicks an element as a user would.
    pub fn click(&self, element: &str) {
        self.call("POST", &format!("/element/{element}/click"), json!({}));
    }

    /// Types `text` into an element.
    pub fn type_into(&self, element: &str, text: &str) {
        self.call("POST", &format!("/element/{element}/value"), json!({ "text": text }));
    }

    /// The rendered text of an element.
    pub fn text(&self, element: &str) -> String {
        self.call("GET", &format!("/element/{element}/text"), Value::Null).as_str().unwrap_or_default().to_string()
    }

    /// Console messages of level WARNING or SEVERE since the last call.
    pub fn console_problems(&self) -> Vec<String> {
        let log = self.call("POST", "/se/log", json!({"type": "browser"}));
        log.as_array()
            .into_iter()
            .flatten()
            .filter(|e| matches!(e["level"].as_str(), Some("SEVERE" | "WARNING")))
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Saves a screenshot of the window as `target/tmp/artifacts/NAME.png`.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("artifacts");
        std::fs::create_dir_all(&artifacts).unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode(self.call("GET", "/screenshot", Value::Null).as_str().expect("base64 PNG"))
            .expect("valid base64");
        assert!(png.len() > 10_000, "screenshot of {} bytes", png.len());
        let path = artifacts.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = ureq::delete(&self.session).call();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
