//! Concurrency: 8 processes record 1,000 events each (`claw-signals record --stdin`, one
//! transaction per event) into one database while `claw-watch follow` runs.
//!
//! Checked: no event lost or duplicated (every run id once, every shared dedupe key once),
//! sequences strictly increasing in each writer's output and unique overall, each head
//! equal to the last event of its session, and every expected notice delivered exactly
//! once — without acknowledgements one notice per (watcher, target) pair; with
//! `follow --drain` each notice once, follow-ups included, and every cursor idle at the end.
//!
//! `CLAWSTATE_CONCURRENCY_EVENTS=N` changes the events per process (default 1000).

mod signals_support;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use signals_support::{ok, Sandbox};

const WRITERS: usize = 8;
const TARGETS: usize = 8;
const MAIN: &str = "agent:main:main";

fn events_per_writer() -> usize {
    std::env::var("CLAWSTATE_CONCURRENCY_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

fn target(i: usize) -> String {
    format!("agent:main:subagent:t{i}")
}

fn watcher(i: usize) -> String {
    format!("agent:main:w{i}")
}

/// The NDJSON events writer `p` records: mostly human messages spread over the targets,
/// some log-only compactions, some self-caused goal changes, and shared dedupe keys.
fn batch(p: usize, n: usize) -> String {
    let mut s = String::new();
    for j in 0..n {
        let t = target((p + j) % TARGETS);
        let line = match j % 10 {
            0 => {
                serde_json::json!({"sessionKey": t, "kind": "compacted", "runId": format!("p{p}-e{j}"),
                "operationId": format!("p{p}-e{j}")})
            }
            1 => serde_json::json!({"sessionKey": t, "kind": "goal_changed", "actorType": "agent",
                "actorId": watcher((p + j) % TARGETS), "summary": "goal objective changed", "runId": format!("p{p}-e{j}")}),
            // Every writer records the same shared keys: one row each survives.
            2 if j < 200 => {
                serde_json::json!({"sessionKey": t, "kind": "compacted", "runId": format!("p{p}-e{j}"),
                "dedupeKey": format!("shared-{j}")})
            }
            _ => {
                serde_json::json!({"sessionKey": t, "kind": "human_direct_message", "via": "telegram",
                "actorId": format!("telegram:{p}"), "runId": format!("p{p}-e{j}")})
            }
        };
        s.push_str(&line.to_string());
        s.push('\n');
    }
    s
}

struct Follower {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Follower {
    fn start(sb: &Sandbox, drain: bool) -> Follower {
        let mut c = sb.cmd("claw-watch");
        c.args(["follow", "--ndjson"]);
        if drain {
            c.arg("--drain");
        }
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("follow starts");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follower { child, lines: rx }
    }

    /// Collects lines until none arrived for `quiet`.
    fn collect(&self, quiet: Duration) -> Vec<Value> {
        let mut v = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(quiet) {
            v.push(serde_json::from_str(&l).expect("notice JSON"));
        }
        v
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_writers(sb: &Sandbox, n: usize) -> Vec<Vec<Value>> {
    let mut children = Vec::new();
    for p in 0..WRITERS {
        let mut child = sb
            .cmd("claw-signals")
            .args(["record", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("writer starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let text = batch(p, n);
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
        children.push(child);
    }
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().expect("writer ends");
            assert!(
                out.status.success(),
                "writer failed ({:?}): {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).expect("event JSON"))
                .collect()
        })
        .collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn setup(sb: &Sandbox) {
    // The writers run on the system clock: cursors must be fresh, or the first record's
    // opportunistic prune expires them (30 days).
    let now = now_ms();
    for i in 0..TARGETS {
        ok(sb.watch(now, &["add", &watcher(i), &target(i)]));
        ok(sb.watch(now, &["add", MAIN, &target(i)]));
    }
}

/// The checks on the log itself, shared by both runs.
fn check_log(sb: &Sandbox, outputs: &[Vec<Value>], n: usize) {
    // Each writer's sequences strictly increase.
    for (p, evs) in outputs.iter().enumerate() {
        assert_eq!(evs.len(), n, "writer {p} printed {} events", evs.len());
        // A duplicate returns the existing row (maybe another writer's): inserted rows only.
        let inserted: Vec<i64> = evs
            .iter()
            .filter(|e| {
                e["runId"]
                    .as_str()
                    .is_some_and(|r| r.starts_with(&format!("p{p}-")))
            })
            .map(|e| e["sequence"].as_i64().expect("seq"))
            .collect();
        assert!(
            inserted.windows(2).all(|w| w[0] < w[1]),
            "writer {p}: sequences not strictly increasing"
        );
    }
    let listed = ok(sb.signals(now_ms(), &["list", "--ndjson"]));
    let events: Vec<Value> = listed
        .lines()
        .map(|l| serde_json::from_str(l).expect("event"))
        .collect();
    let seqs: Vec<i64> = events
        .iter()
        .map(|e| e["sequence"].as_i64().expect("seq"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "list is not strictly ascending"
    );
    let mut run_ids = HashSet::new();
    for e in &events {
        let r = e["runId"].as_str().expect("run id").to_string();
        assert!(run_ids.insert(r.clone()), "duplicate event {r}");
    }
    let shared = (0..n.min(200)).filter(|j| j % 10 == 2).count();
    let expected = WRITERS * n - (WRITERS - 1) * shared;
    assert_eq!(events.len(), expected, "events lost or duplicated");
    for p in 0..WRITERS {
        for j in 0..n {
            let id = format!("p{p}-e{j}");
            let is_shared_dup = j % 10 == 2 && j < 200;
            assert!(
                run_ids.contains(&id) || is_shared_dup,
                "event {id} was lost"
            );
        }
    }
    // Heads equal the last event of each session.
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    for e in &events {
        last.insert(
            e["sessionKey"].as_str().expect("key").to_string(),
            e["sequence"].as_i64().expect("seq"),
        );
    }
    let heads = ok(sb.signals(now_ms(), &["version", "--all", "--ndjson"]));
    let heads: BTreeMap<String, i64> = heads
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("head");
            (
                v["sessionKey"].as_str().expect("key").to_string(),
                v["stateVersion"].as_i64().expect("version"),
            )
        })
        .collect();
    assert_eq!(heads, last, "heads differ from the last events");
}

#[test]
fn eight_writers_while_following_without_acks() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(root.path());
    let n = events_per_writer();
    setup(&sb);
    let follower = Follower::start(&sb, false);
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let outputs = run_writers(&sb, n);
    let elapsed = t.elapsed();
    let notices = follower.collect(Duration::from_millis(1500));
    check_log(&sb, &outputs, n);
    // One notice per (watcher, target) pair, opened at the seed (0), exactly once.
    let mut pairs = BTreeSet::new();
    for v in &notices {
        let pair = (
            v["watcherSessionKey"].as_str().expect("w").to_string(),
            v["targetSessionKey"].as_str().expect("t").to_string(),
        );
        assert_eq!(v["changesSince"], 0, "{v}");
        assert!(
            pairs.insert(pair.clone()),
            "notice delivered twice: {pair:?}"
        );
    }
    let expected: BTreeSet<(String, String)> = (0..TARGETS)
        .flat_map(|i| [(watcher(i), target(i)), (MAIN.to_string(), target(i))])
        .collect();
    assert_eq!(pairs, expected, "missing notices");
    eprintln!(
        "{WRITERS} writers × {n} events in {:.2}s ({:.0} events/s), {} notices",
        elapsed.as_secs_f64(),
        (WRITERS * n) as f64 / elapsed.as_secs_f64(),
        notices.len()
    );
}

#[test]
fn eight_writers_while_following_with_drain() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(root.path());
    let n = events_per_writer();
    setup(&sb);
    let follower = Follower::start(&sb, true);
    std::thread::sleep(Duration::from_millis(300));
    let outputs = run_writers(&sb, n);
    let notices = follower.collect(Duration::from_millis(1500));
    check_log(&sb, &outputs, n);
    // Each notice once: per pair, changesSince strictly increases.
    let mut per_pair: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for v in &notices {
        per_pair
            .entry((
                v["watcherSessionKey"].as_str().expect("w").to_string(),
                v["targetSessionKey"].as_str().expect("t").to_string(),
            ))
            .or_default()
            .push(v["changesSince"].as_i64().expect("n"));
    }
    assert_eq!(per_pair.len(), 2 * TARGETS, "a pair never got a notice");
    for (pair, ns) in &per_pair {
        assert!(
            ns.windows(2).all(|w| w[0] < w[1]),
            "{pair:?}: a notice was repeated: {ns:?}"
        );
    }
    // Everything was acknowledged: every cursor idle, at the last material event.
    let cursors = ok(sb.watch(now_ms(), &["list", "--ndjson"]));
    for l in cursors.lines() {
        let c: Value = serde_json::from_str(l).expect("cursor");
        assert_eq!(c["state"], "idle", "{c}");
        assert_eq!(c["lastSeenSequence"], c["materialSequence"], "{c}");
    }
    let pending = ok(sb.watch(now_ms(), &["pending"]));
    assert!(pending.is_empty(), "{pending}");
    eprintln!(
        "with --drain: {} notices (follow-ups included) over {} pairs, all cursors idle",
        notices.len(),
        per_pair.len()
    );
}
