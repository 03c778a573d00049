//! `claw-migrate import` killed with SIGKILL at random points, over and over: after each
//! kill no legacy byte is lost (every original file is in place or in the import archive,
//! byte for byte), each agent DB is either absent or whole (atomic per agent), and the
//! next run completes to the same canonical dump as an import never interrupted.

mod migrate_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use migrate_support::{canonical_dump, write_legacy, Shape, AGENTS};
use support::Rng;

const KILLS: usize = 100;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("claw-migrate")
}

fn import(home: &Path) -> Command {
    let mut c = Command::new(bin());
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.join("tmp"))
        .args(["import", "--all-agents"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::fs::create_dir_all(home.join("tmp")).ok();
    c
}

fn copy_tree(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let Ok(b) = std::fs::read(&p) {
                out.insert(p.strip_prefix(base).unwrap().to_string_lossy().into(), b);
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Every original legacy file is in place or, byte for byte, in its agent's archive.
fn assert_nothing_lost(original: &BTreeMap<String, Vec<u8>>, home: &Path, at: &str) {
    let now = files(&home.join(".openclaw"));
    for (rel, bytes) in original {
        if now.get(rel) == Some(bytes) {
            continue;
        }
        let agent = rel.split('/').nth(1).unwrap_or_default();
        let archive = format!("agents/{agent}/session-sqlite-import-archive/");
        assert!(
            now.iter()
                .any(|(p, b)| p.starts_with(&archive) && b == bytes),
            "{at}: {rel} is neither in place nor in the archive"
        );
    }
}

fn db(home: &Path, agent: &str) -> PathBuf {
    home.join(".openclaw/agents")
        .join(agent)
        .join("agent/openclaw-agent.sqlite")
}

#[test]
fn kill_9_at_random_points_then_the_next_run_completes_to_the_same_db() {
    let base = tempfile::tempdir().unwrap();
    let legacy = base.path().join("legacy");
    let shape = Shape {
        sessions: 5,
        max_turns: 3,
        image_bytes: 20_000,
        tool_output: 1600,
        edge_cases: true,
    };
    write_legacy(&legacy, 9, shape);
    let original: BTreeMap<String, Vec<u8>> = files(&legacy.join(".openclaw"))
        .into_iter()
        .filter(|(k, _)| k.contains("/sessions/"))
        .collect();
    // The reference: an import never interrupted.
    let reference = base.path().join("reference");
    copy_tree(&legacy, &reference);
    let t0 = Instant::now();
    assert!(import(&reference).status().unwrap().success());
    let span = t0.elapsed().max(Duration::from_millis(5));
    let want: Vec<_> = AGENTS
        .iter()
        .map(|a| canonical_dump(&db(&reference, a)))
        .collect();

    // Two workers on their own copies (the runs wait on fsync more than on the CPU).
    let workers = 2;
    let results: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (legacy, original, want, base) = (&legacy, &original, &want, base.path());
                scope.spawn(move || {
                    worker(
                        w,
                        legacy,
                        original,
                        want,
                        &base.join(format!("home{w}")),
                        span,
                        KILLS.div_ceil(workers),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let kills: usize = results.iter().map(|r| r.0).sum();
    let interrupted: usize = results.iter().map(|r| r.1).sum();
    // Every counted kill landed inside a run, or the test proves little.
    assert!(
        interrupted >= KILLS,
        "only {interrupted} of {kills} kills interrupted a run"
    );
}

/// One worker: rounds of copy, kill (once or twice), complete, check; returns (kills,
/// kills that interrupted a run).
fn worker(
    w: usize,
    legacy: &Path,
    original: &BTreeMap<String, Vec<u8>>,
    want: &[BTreeMap<String, Vec<String>>],
    home: &Path,
    span: Duration,
    kills_wanted: usize,
) -> (usize, usize) {
    let mut rng = Rng::new(0x26 + w as u64);
    let (mut kills_done, mut interrupted) = (0, 0);
    let mut round = 0;
    // Kill delays are drawn below this; a run that finished before its kill lowers it, so
    // the kills land inside runs however fast or loaded the machine is.
    let mut span_us = span.as_micros() as u64;
    while interrupted < kills_wanted && kills_done < 4 * kills_wanted {
        round += 1;
        let round = format!("worker {w} round {round}");
        copy_tree(legacy, home);
        // Kill once, sometimes twice (the second time during the resumed run).
        let kills = if rng.chance(40) { 2 } else { 1 };
        for k in 0..kills {
            kills_done += 1;
            let mut child = import(home).spawn().unwrap();
            let us = rng.below(span_us + 1);
            std::thread::sleep(Duration::from_micros(us));
            let finished = child.try_wait().unwrap().is_some();
            let _ = child.kill();
            let _ = child.wait();
            interrupted += usize::from(!finished);
            if finished {
                span_us = (us * 3 / 4).max(1);
            }
            let at = format!("round {round} kill {k} after {us} µs");
            assert_nothing_lost(original, home, &at);
            for (i, agent) in AGENTS.iter().enumerate() {
                let p = db(home, agent);
                if p.exists() {
                    assert_eq!(
                        canonical_dump(&p),
                        want[i],
                        "{at}: {agent}'s DB is there but not whole"
                    );
                }
            }
        }
        let st = import(home).status().unwrap();
        assert!(
            st.success(),
            "round {round}: the run after the kill failed: {st}"
        );
        for (i, agent) in AGENTS.iter().enumerate() {
            assert_eq!(
                canonical_dump(&db(home, agent)),
                want[i],
                "round {round}: {agent}"
            );
        }
        assert_nothing_lost(original, home, &format!("round {round} completed"));
        // The completed run leaves no legacy transcript or store in place.
        for agent in AGENTS {
            let dir = home.join(".openclaw/agents").join(agent).join("sessions");
            let left: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.contains(".jsonl.reset.") && !n.contains(".jsonl.deleted."))
                .collect();
            assert!(left.is_empty(), "round {round}: {agent} left {left:?}");
            let runs = home.join(".openclaw/session-sqlite-migration-runs");
            for m in std::fs::read_dir(&runs).unwrap() {
                let m = m.unwrap().path();
                let v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
                assert!(
                    v.get("completedAt").is_some(),
                    "round {round}: a manifest left unfinished: {}",
                    m.display()
                );
            }
        }
    }
    (kills_done, interrupted)
}
