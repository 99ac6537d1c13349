//! The test server: the real `tollgate` binary, started on `127.0.0.1:0`
//! with a temporary data directory, spoken to over real HTTP and through
//! the real admin socket. Its stderr (the log) is kept in a file so tests
//! can check what was logged.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

pub mod anthropic;
pub mod azure;
pub mod bedrock;
pub mod gemini;
pub mod media;
pub mod receiver;
pub mod rng;
pub mod scripted;
pub mod upstream;
pub mod vertex;

pub const BIN: &str = env!("CARGO_BIN_EXE_tollgate");

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub child: Option<Child>,
    pub base_url: String,
    /// Lines printed on stdout before "listening" (first-start secrets).
    pub banner: Vec<String>,
    pub config: Option<PathBuf>,
    pub env: Vec<(String, String)>,
}

impl TestServer {
    /// Starts on the embedded demo configuration (a demo key is printed).
    pub fn start() -> TestServer {
        Self::start_with(None, &[])
    }

    /// Starts with a config file's text (its `listen` and `data_dir` are
    /// overridden) and extra environment.
    pub fn start_with(config_text: Option<&str>, env: &[(&str, &str)]) -> TestServer {
        let mut server = Self::unstarted();
        server.config = config_text.map(|text| {
            let path = server.dir.path().join("tollgate.toml");
            std::fs::write(&path, text).expect("writing config");
            path
        });
        server.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        server.launch().expect("server starts");
        server
    }

    /// A server not yet started, on a fresh temporary directory: a test
    /// prepares its data directory (a fixture's store, seeded records),
    /// then calls `launch`.
    pub fn unstarted() -> TestServer {
        TestServer {
            dir: tempfile::tempdir().expect("temp dir"),
            child: None,
            base_url: String::new(),
            banner: Vec::new(),
            config: None,
            env: Vec::new(),
        }
    }

    /// A server not yet started whose data directory holds a copy of the
    /// store file of the fixture directory `from`.
    pub fn unstarted_on_fixture(from: &str) -> TestServer {
        let server = Self::unstarted();
        std::fs::create_dir_all(server.data_dir()).expect("data dir");
        std::fs::copy(
            format!("{from}/tollgate.redb"),
            server.data_dir().join("tollgate.redb"),
        )
        .expect("copying the fixture's store");
        server
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn base_command(&self) -> Command {
        // `TOLLGATE_TEST_BIN`: another build (fixture writers run an old one).
        let mut command = Command::new(std::env::var("TOLLGATE_TEST_BIN").unwrap_or(BIN.into()));
        command.env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command.arg("--data-dir").arg(self.data_dir());
        if let Some(config) = &self.config {
            command.arg("--config").arg(config);
        }
        command
    }

    /// Starts the process; returns the banner error text when it exits
    /// before listening.
    pub fn launch(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("log file");
        let mut child = self
            .base_command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawning tollgate");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut banner = Vec::new();
        loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(rest) = line.strip_prefix("tollgate listening on ") {
                        self.base_url = rest.split_whitespace().next().expect("url").to_owned();
                        break;
                    }
                    banner.push(line);
                }
                _ => {
                    let status = child.wait().expect("wait");
                    let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
                    return Err(format!("server exited ({status}) before listening: {log}"));
                }
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        if !banner.is_empty() {
            self.banner = banner;
        }
        self.child = Some(child);
        Ok(())
    }

    /// The value of a "label: value" banner line.
    pub fn banner_value(&self, label: &str) -> Option<String> {
        self.banner
            .iter()
            .find(|l| l.contains(label))
            .and_then(|l| l.rsplit(": ").next())
            .map(|s| s.trim().to_owned())
    }

    pub fn demo_key(&self) -> String {
        self.banner_value("Demo API key")
            .expect("demo key in banner")
    }

    pub fn owner_password(&self) -> String {
        self.banner_value("Owner password")
            .expect("owner password in banner")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Runs a CLI command against this server's data directory.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.base_command()
            .args(args)
            .output()
            .expect("running the CLI")
    }

    pub fn cli_with_stdin(&self, args: &[&str], input: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .base_command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("running the CLI");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("writing stdin");
        child.wait_with_output().expect("CLI output")
    }

    /// Runs a CLI command with `--json` and parses its output.
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let output = self.cli(&all);
        assert!(
            output.status.success(),
            "tollgate {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("JSON output")
    }

    /// Creates a key through the CLI and returns (id, value).
    pub fn create_key(&self, extra: &[&str]) -> (String, String) {
        let mut args = vec!["keys", "create", "--name", "test"];
        args.extend_from_slice(extra);
        let created = self.cli_json(&args);
        (
            created["id"].as_str().unwrap().to_owned(),
            created["key"].as_str().unwrap().to_owned(),
        )
    }

    /// SIGKILL: no chance to flush anything.
    pub fn kill_9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("kill -9");
            child.wait().expect("reaping");
        }
    }

    /// SIGTERM, then wait for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running server");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        child.wait().expect("waiting for exit")
    }

    pub fn restart(&mut self) {
        self.kill_9();
        self.launch().expect("restart");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill_9();
    }
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// Asserts the documented error shape and returns its code.
pub async fn error_code(response: reqwest::Response, status: u16) -> String {
    assert_eq!(response.status().as_u16(), status, "unexpected status");
    let body: Value = response.json().await.expect("JSON error body");
    let error = &body["error"];
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "message in {body}"
    );
    assert!(error["type"].is_string(), "type in {body}");
    assert!(error.get("param").is_some(), "param in {body}");
    error["code"].as_str().expect("code").to_owned()
}

/// Serves `app` on a loopback port for the life of the test: the address
/// and the task (kept by the caller so the server lives as long as it).
pub async fn serve(app: axum::Router) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (addr, task)
}

/// `POST /v1/chat/completions` with an API key.
pub async fn chat_post(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A chat completion that must succeed; its JSON body.
pub async fn chat_json(server: &TestServer, key: &str, body: Value) -> Value {
    let response = chat_post(server, key, &body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The `data:` events of a streamed chat completion that must start with
/// 200; `[DONE]` (or anything not JSON) as a JSON string.
pub async fn chat_events(server: &TestServer, key: &str, mut body: Value) -> Vec<Value> {
    body["stream"] = Value::Bool(true);
    let response = chat_post(server, key, &body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_owned())))
        .collect()
}

/// `GET path` with a session token; asserts 200 and returns the JSON body.
pub async fn get_json(server: &TestServer, token: &str, path: &str) -> Value {
    let response = client()
        .get(server.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "GET {path}");
    response.json().await.unwrap()
}

/// The `/metrics` exposition text (no token).
pub async fn scrape_metrics(server: &TestServer) -> String {
    let response = client().get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

/// Signs in through the dashboard API and returns the session token.
pub async fn login_as(server: &TestServer, email: &str, password: &str) -> String {
    let response = client()
        .post(server.url("/api/v1/auth/login"))
        .json(&serde_json::json!({ "email": email, "password": password }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "signing in as {email}");
    let body: Value = response.json().await.unwrap();
    body["token"].as_str().unwrap().to_owned()
}

/// Signs in as the owner created at first start.
pub async fn login(server: &TestServer) -> String {
    login_as(server, "owner@localhost", &server.owner_password()).await
}

/// Creates a dashboard account with `role` in `tenant` and signs it in.
pub async fn account(server: &TestServer, tenant: &str, email: &str, role: &str) -> String {
    let password = "a-long-test-password";
    let out = server.cli_with_stdin(
        &[
            "users",
            "create",
            "--email",
            email,
            "--role",
            role,
            "--tenant",
            tenant,
            "--password-stdin",
        ],
        password,
    );
    assert!(out.status.success(), "creating {email}: {}", stderr(&out));
    login_as(server, email, password).await
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn file_contains(path: &Path, needle: &[u8]) -> bool {
    let bytes = std::fs::read(path).expect("reading file");
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// Raises the soft open-file limit to the hard one and returns it; a
/// server started afterwards inherits it (tests with thousands of sockets).
pub fn raise_open_files() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}
