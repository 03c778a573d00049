//! A real openclaw@2026.7.1 gateway for the field suite, on a private state directory, a
//! private `HOME` and `TMPDIR`, and a free 127.0.0.1 port, using the [`FakeModel`] as its
//! only provider. Its process group is killed when the value is dropped (also on panic),
//! and the kernel kills it if the test process dies first (`PR_SET_PDEATHSIG`).
//!
//! Nothing leaves 127.0.0.1: no update check, no Bonjour, no channels, no plugins, no cron;
//! the environment is cleared (no proxy variables), `TZ=UTC`, `NO_COLOR=1`.

use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::http;
use super::model::FakeModel;

/// The gateway's shared-secret token (`gateway.auth.token`).
pub const TOKEN: &str = "field-suite-token";
/// How long a start may take before the suite gives up (a hang guard, not a speed check).
const START_LIMIT: Duration = Duration::from_secs(150);
/// How long a stop may take before the group is killed.
const STOP_LIMIT: Duration = Duration::from_secs(30);
/// How long one HTTP call or CLI run may take.
pub const CALL_LIMIT: Duration = Duration::from_secs(120);

/// One gateway installation: its directories, and the process while it runs.
pub struct Gateway {
    _dir: tempfile::TempDir,
    /// The root of everything this gateway uses.
    pub root: PathBuf,
    /// Its `HOME`.
    pub home: PathBuf,
    /// Its `OPENCLAW_STATE_DIR` (the config is `<state>/openclaw.json`).
    pub state: PathBuf,
    /// Its `TMPDIR` (where its `openclaw-<uid>/gateway.<hash>.lock` lives).
    pub tmp: PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
    peer: PathBuf,
    child: Option<Child>,
    starts: usize,
}

impl Gateway {
    /// A gateway installation (not started) whose provider is `model`, with `patch` merged
    /// into the suite's config (objects merged key by key, `null` removes).
    pub fn new(peer: &Path, model: &FakeModel, patch: &Value) -> Gateway {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
        let (home, state, tmp) = (
            root.join("home"),
            root.join("state"),
            root.join("gateway-tmp"),
        );
        for d in [&home, &state, &tmp, &root.join("workspace")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let port = free_port();
        let config = json!({
            "gateway": {
                "mode": "local", "port": port, "bind": "loopback",
                "auth": {"mode": "token", "token": TOKEN},
                "http": {"endpoints": {"chatCompletions": {"enabled": true}}}
            },
            "update": {"checkOnStart": false},
            // sessions_history through /tools/invoke may read any session (as the CLI does).
            "tools": {"sessions": {"visibility": "all"}},
            "plugins": {"enabled": false},
            "logging": {"file": root.join("gateway-file.log")},
            "agents": {"defaults": {
                "model": {"primary": format!("fake/{}", super::model::MODEL_ID)},
                "workspace": root.join("workspace"),
            }},
            "models": {"mode": "replace", "providers": {"fake": {
                "baseUrl": model.base_url(), "apiKey": "field", "api": "openai-completions",
                "models": [{"id": super::model::MODEL_ID, "name": "Fake", "reasoning": false, "input": ["text"],
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "contextWindow": 32000, "maxTokens": 1024}]
            }}}
        });
        let mut config = config;
        merge(&mut config, patch);
        std::fs::write(
            state.join("openclaw.json"),
            serde_json::to_string_pretty(&config).expect("config"),
        )
        .expect("write config");
        Gateway {
            _dir: dir,
            root,
            home,
            state,
            tmp,
            port,
            peer: peer.to_path_buf(),
            child: None,
            starts: 0,
        }
    }

    /// The environment the gateway and the peer CLI run with (on a cleared environment).
    fn peer_command(&self) -> Command {
        let mut c = Command::new(&self.peer);
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("OPENCLAW_PEER_HOME", &self.home)
            .env("OPENCLAW_STATE_DIR", &self.state)
            .env("TMPDIR", &self.tmp)
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .env("OPENCLAW_DISABLE_BONJOUR", "1")
            .env("OPENCLAW_SKIP_CHANNELS", "1")
            .env("OPENCLAW_SKIP_CRON", "1")
            .env("OPENCLAW_SKIP_GMAIL_WATCHER", "1")
            .env("OPENCLAW_SKIP_CANVAS_HOST", "1")
            .stdin(Stdio::null());
        c
    }

    /// Starts the gateway and waits until it logs `[gateway] ready`.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "the gateway is already running");
        self.starts += 1;
        let log = self.log_path();
        let out = File::create(&log).expect("gateway log");
        let err = out.try_clone().expect("gateway log");
        let mut c = self.peer_command();
        c.args(["gateway", "run", "--port", &self.port.to_string()])
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; it only asks for SIGKILL when the spawning
        // thread ends, so a killed test run leaves no gateway behind.
        unsafe {
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        self.child = Some(c.spawn().expect("the gateway spawns"));
        let deadline = Instant::now() + START_LIMIT;
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("[gateway] ready") {
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                panic!("the gateway exited ({status}) before it was ready:\n{text}");
            }
            if Instant::now() > deadline {
                panic!("the gateway was not ready after {START_LIMIT:?}:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the gateway: SIGTERM to its process group, SIGKILL after [`STOP_LIMIT`].
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let group = child.id() as libc::pid_t;
        // SAFETY: signals to the gateway's own process group (it was spawned as its leader).
        unsafe { libc::kill(-group, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_LIMIT;
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever is left of the group goes.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = child.wait();
    }

    /// Waits until the gateway is idle: it finishes a turn's bookkeeping (the store's
    /// `status`, `endedAt`, usage; trajectory files) after the HTTP reply, so a check that
    /// compares files waits for the sessions directory to stop changing (no entry
    /// `running`, the same names, sizes and store bytes over one second). A hang guard of
    /// 60 s, not a speed check.
    pub fn settle(&self) {
        let fingerprint = || {
            let mut names: Vec<(String, u64)> = std::fs::read_dir(self.sessions_dir())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| {
                    let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), len)
                })
                .collect();
            names.sort();
            let store =
                std::fs::read(self.sessions_dir().join("sessions.json")).unwrap_or_default();
            (names, store)
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let (mut last, mut stable) = (fingerprint(), 0);
        while stable < 5 {
            if Instant::now() > deadline {
                panic!("the gateway never went idle:\n{}", self.log_tail());
            }
            std::thread::sleep(Duration::from_millis(200));
            let now = fingerprint();
            let running = String::from_utf8_lossy(&now.1).contains("\"status\": \"running\"");
            stable = if now == last && !running {
                stable + 1
            } else {
                0
            };
            last = now;
        }
    }

    /// Waits (at most 60 s) until the store entry `key` has `status` equal to `status`.
    pub fn wait_for_status(&self, key: &str, status: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.store()[key]["status"] != json!(status) {
            if Instant::now() > deadline {
                panic!("{key} never became {status:?}: {}", self.store()[key]);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The gateway's pid while it runs.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the gateway runs").id()
    }

    /// The stdout/stderr log of the current (or last) start.
    pub fn log_path(&self) -> PathBuf {
        self.root.join(format!("gateway-{}.out", self.starts))
    }

    /// The main agent's sessions directory.
    pub fn sessions_dir(&self) -> PathBuf {
        self.state.join("agents/main/sessions")
    }

    /// The main agent's store, parsed.
    pub fn store(&self) -> Value {
        let text = std::fs::read_to_string(self.sessions_dir().join("sessions.json"))
            .expect("the gateway wrote its store");
        serde_json::from_str(&text).expect("the store is JSON")
    }

    /// The transcript file the store names for `key` (`sessionFile`).
    pub fn session_file(&self, key: &str) -> PathBuf {
        let store = self.store();
        let file = store[key]["sessionFile"]
            .as_str()
            .unwrap_or_else(|| panic!("no sessionFile for {key}: {}", store[key]));
        PathBuf::from(file)
    }

    /// One HTTP call with the gateway's token.
    pub fn http(
        &self,
        method: &str,
        path: &str,
        extra: &[(&str, &str)],
        body: Option<&Value>,
    ) -> http::Reply {
        let auth = format!("Bearer {TOKEN}");
        let mut headers = vec![("Authorization", auth.as_str())];
        headers.extend_from_slice(extra);
        let body = body.map(Value::to_string);
        http::request(
            self.port,
            method,
            path,
            &headers,
            body.as_deref(),
            CALL_LIMIT,
        )
        .unwrap_or_else(|e| panic!("{method} {path}: {e}\n{}", self.log_tail()))
    }

    /// One turn through `/v1/chat/completions` on session `key`: the reply's status and body.
    pub fn chat_raw(&self, key: &str, text: &str, stream: bool) -> http::Reply {
        let body = json!({"model": "openclaw/default", "stream": stream,
            "messages": [{"role": "user", "content": text}]});
        self.http(
            "POST",
            "/v1/chat/completions",
            &[("x-openclaw-session-key", key)],
            Some(&body),
        )
    }

    /// One successful turn on session `key`: the assistant's reply text.
    pub fn chat(&self, key: &str, text: &str) -> String {
        let r = self.chat_raw(key, text, false);
        assert_eq!(r.status, 200, "turn {text:?} on {key}: {}", r.body);
        let doc: Value = serde_json::from_str(&r.body).expect("a JSON reply");
        doc["choices"][0]["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// One successful streamed turn on session `key`: the concatenated content deltas.
    pub fn chat_streamed(&self, key: &str, text: &str) -> String {
        let r = self.chat_raw(key, text, true);
        assert_eq!(r.status, 200, "streamed turn {text:?} on {key}: {}", r.body);
        let mut out = String::new();
        for line in r.body.lines() {
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            if data == "[DONE]" {
                break;
            }
            if let Ok(v) = serde_json::from_str::<Value>(data) {
                if let Some(t) = v["choices"][0]["delta"]["content"].as_str() {
                    out.push_str(t);
                }
            }
        }
        out
    }

    /// A tool through `/tools/invoke`, as session `requester` (its visibility applies):
    /// the result's `details`.
    pub fn tool(&self, requester: &str, tool: &str, args: Value) -> Value {
        let body = json!({"tool": tool, "sessionKey": requester, "args": args});
        let r = self.http("POST", "/tools/invoke", &[], Some(&body));
        assert_eq!(r.status, 200, "{tool}: {}", r.body);
        let doc: Value = serde_json::from_str(&r.body).expect("a JSON reply");
        assert_eq!(doc["ok"], json!(true), "{tool}: {doc}");
        doc["result"]["details"].clone()
    }

    /// The peer CLI with the gateway's environment.
    pub fn openclaw(&self, args: &[&str]) -> Output {
        let mut c = self.peer_command();
        c.args(args);
        run_bounded(c, CALL_LIMIT)
    }

    /// A gateway RPC through `openclaw gateway call` (explicit URL and token, so nothing
    /// else on this machine is ever reached): its JSON result.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        let url = format!("ws://127.0.0.1:{}", self.port);
        let params = params.to_string();
        let o = self.openclaw(&[
            "gateway", "call", method, "--params", &params, "--json", "--url", &url, "--token",
            TOKEN,
        ]);
        assert!(
            o.status.success(),
            "gateway call {method}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        super::json_tail(&o.stdout)
    }

    /// A clawstate command on this state dir (`OPENCLAW_STATE_DIR`), with the suite's HOME.
    pub fn claw(&self, bin: &str) -> assert_cmd::Command {
        let mut c = crate::support::claw(bin, &self.home);
        c.env("OPENCLAW_STATE_DIR", &self.state)
            .env("NO_COLOR", "1");
        c
    }

    /// The last lines of the gateway's log (for failure messages).
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if std::thread::panicking() && self.child.is_some() {
            eprintln!("gateway log (last lines):\n{}", self.log_tail());
        }
        self.stop();
    }
}

/// RFC 7386 merge of `patch` into `target`.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let t = target.as_object_mut().expect("object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Runs `c` to completion with its output captured; kills it after `limit`.
pub fn run_bounded(mut c: Command, limit: Duration) -> Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = so.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = se.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}
