//! Crash recovery test (issue 22 item 14): `claw-sessions cleanup --enforce` killed with
//! SIGKILL at any step, then run again once, reaches the end state of an uninterrupted run
//! — the same files (names and sizes) and the same store bytes — including its own
//! leftovers (the store's and the journal's temp files, trajectory sidecars of archived
//! sessions).
//!
//! The oracle is the uninterrupted run on the same fixture (same path, same `--now`). The
//! kill points are deterministic: the run is traced with `strace`, which delivers SIGKILL
//! on entry to the N-th call of one file-changing system call (`write`, `fsync`,
//! `renameat`, `unlinkat`, …) in a thread, so that call is not made. The points are drawn
//! with a fixed seed from the calls an uninterrupted traced run makes. Without `strace`
//! (or ptrace) the test says so and passes.
//!
//! `CLAWSTATE_CRASH_RECOVERY_KILLS=N` sets the kill points per scenario (default 120).

mod support;

use std::collections::{BTreeMap, HashMap};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{json, Map, Value};
use support::Rng;

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;

/// The system calls a kill may be placed at: every call that changes a file, or opens one.
const CALLS: &[&str] = &[
    "openat",
    "write",
    "pwrite64",
    "fsync",
    "fdatasync",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "link",
    "linkat",
    "ftruncate",
    "mkdir",
    "mkdirat",
];

fn kills_per_scenario() -> usize {
    std::env::var("CLAWSTATE_CRASH_RECOVERY_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120)
}

/// `strace` when it is there and may trace here.
fn strace() -> Option<PathBuf> {
    let ok = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: strace is not available (or may not trace) here");
        return None;
    }
    Some(PathBuf::from("strace"))
}

/// Where the fixture lives: `/dev/shm` when it is there (kills test the order of the
/// calls, not durability).
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(t) = tempfile::tempdir_in(shm) {
            return t;
        }
    }
    tempfile::tempdir().unwrap()
}

fn set_mtime(p: &Path, ms: i64) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64))
        .unwrap();
}

/// An archive timestamp (`YYYY-MM-DDTHH-MM-SS.mmmZ`).
fn archive_ts(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}.{millis:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// One configuration of the maintenance and its fixture.
struct Scenario {
    name: &'static str,
    maintenance: Value,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "defaults",
            maintenance: json!({}),
        },
        Scenario {
            name: "cap+budget",
            maintenance: json!({"maxEntries": 8, "maxDiskBytes": "30kb", "highWaterBytes": "20kb"}),
        },
    ]
}

/// The fixture's paths.
struct Fixture {
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

fn header(id: &str) -> String {
    json!({"type":"session","version":3,"id":id,"timestamp":"2026-05-28T20:00:00.000Z","cwd":"/srv"})
        .to_string()
        + "\n"
}

fn transcript(id: &str, messages: usize) -> String {
    let mut t = header(id);
    for k in 0..messages {
        t += &json!({"type":"message","id":format!("m{k}"),"message":{"role":"user","content":format!("{id} {k} {}", "x".repeat(200))}}).to_string();
        t.push('\n');
    }
    t
}

/// Builds the fixture under `root` (the same bytes and times every time): live and stale
/// entries, transcripts, trajectory sidecars (default runtime files and pointed ones in a
/// subdirectory, and sidecars of a stale session without a transcript), orphans old and
/// fresh, archives past and within their retention, and an old store temp file.
fn build(root: &Path, s: &Scenario) -> Fixture {
    let _ = std::fs::remove_dir_all(root);
    let home = root.join("home");
    let state = root.join("state");
    let sessions = state.join("agents/main/sessions");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    std::fs::create_dir_all(sessions.join("runtimes")).unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        json!({"session": {"maintenance": s.maintenance}}).to_string(),
    )
    .unwrap();
    let sessions = sessions.canonicalize().unwrap();
    let file = |name: &str, text: &str, mtime: i64| {
        let p = sessions.join(name);
        std::fs::write(&p, text).unwrap();
        set_mtime(&p, mtime);
    };
    let trajectory = |id: &str, runtime: &Path, mtime: i64| {
        let line = json!({"traceSchema": "openclaw-trajectory", "schemaVersion": 1, "source": "runtime", "sessionId": id});
        std::fs::write(runtime, format!("{line}\n")).unwrap();
        set_mtime(runtime, mtime);
        let pointer = json!({"traceSchema": "openclaw-trajectory-pointer", "schemaVersion": 1, "sessionId": id, "runtimeFile": runtime.to_string_lossy()});
        let p = sessions.join(format!("{id}.trajectory-path.json"));
        std::fs::write(&p, format!("{pointer:#}\n")).unwrap();
        set_mtime(&p, mtime);
    };
    let mut store = Map::new();
    store.insert(
        "agent:main:main".into(),
        json!({"sessionId": "fresh", "updatedAt": NOW - HOUR, "label": "keep"}),
    );
    file("fresh.jsonl", &transcript("fresh", 3), NOW - HOUR);
    for i in 0..10 {
        let id = format!("live{i}");
        store.insert(
            format!("agent:main:telegram:group:{i}"),
            json!({"sessionId": id, "updatedAt": NOW - (i as i64 + 2) * HOUR}),
        );
        file(&format!("{id}.jsonl"), &transcript(&id, 8), NOW - HOUR);
        if i % 3 == 0 {
            let runtime = sessions.join(format!("{id}.trajectory.jsonl"));
            trajectory(&id, &runtime, NOW - HOUR);
        }
    }
    for i in 0..12 {
        let id = format!("old{i}");
        store.insert(
            format!("agent:main:cron:job{i}"),
            json!({"sessionId": id, "updatedAt": NOW - 40 * DAY}),
        );
        let mtime = if i % 2 == 0 {
            NOW - HOUR
        } else {
            NOW - 40 * DAY
        };
        if i != 11 {
            file(&format!("{id}.jsonl"), &transcript(&id, 4), mtime);
        }
        match i % 3 {
            0 => trajectory(&id, &sessions.join(format!("{id}.trajectory.jsonl")), mtime),
            1 => trajectory(&id, &sessions.join(format!("runtimes/{id}.jsonl")), mtime),
            _ => {}
        }
    }
    file("orphan.jsonl", &header("orphan"), NOW - 40 * DAY);
    file("orphan2.trajectory.jsonl", "{}\n", NOW - 40 * DAY);
    file("young-orphan.jsonl", &header("young"), NOW - HOUR);
    file(
        &format!("gone.jsonl.deleted.{}", archive_ts(NOW - 60 * DAY)),
        &transcript("gone", 2),
        NOW - 60 * DAY,
    );
    file(
        &format!("kept.jsonl.deleted.{}", archive_ts(NOW - DAY)),
        &transcript("kept", 2),
        NOW - DAY,
    );
    file(
        "sessions.json.4242.123e4567-e89b-42d3-a456-426614174000.tmp",
        "{}",
        NOW - HOUR,
    );
    let text = serde_json::to_string_pretty(&Value::Object(store)).unwrap();
    file("sessions.json", &text, NOW - HOUR);
    Fixture {
        home,
        state,
        sessions,
    }
}

fn cleanup(f: &Fixture) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("claw-sessions"));
    c.env_clear()
        .env("HOME", &f.home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", f.home.join("tmp"))
        .arg("--state-dir")
        .arg(&f.state)
        .args(["--now", &NOW.to_string(), "cleanup", "--enforce"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// `cmd` under `strace` with `args` (the command's own environment kept).
fn traced(strace: &Path, cmd: &Command, args: &[String]) -> Command {
    let mut c = Command::new(strace);
    c.args(["-f", "-qq"]).args(args).arg("--");
    c.arg(cmd.get_program()).args(cmd.get_args());
    c.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// The end state: every file under the sessions directory (relative path → size; this
/// run's archive timestamps normalised) and the store's bytes.
fn end_state(f: &Fixture) -> (BTreeMap<String, u64>, Vec<u8>) {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, u64>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                walk(root, &e.path(), out);
                continue;
            }
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let rel = rel.replace(&archive_ts(NOW), "<TS>");
            out.insert(rel, m.len());
        }
    }
    let mut files = BTreeMap::new();
    walk(&f.sessions, &f.sessions, &mut files);
    let store = std::fs::read(f.sessions.join("sessions.json")).unwrap();
    (files, store)
}

/// For each system call of [`CALLS`], the most calls one thread made in a traced
/// uninterrupted run.
fn call_counts(strace: &Path, f: &Fixture) -> BTreeMap<String, usize> {
    let log = f.home.join("strace.log");
    let args = vec![
        "-e".to_string(),
        format!("trace={}", CALLS.join(",")),
        "-o".to_string(),
        log.to_string_lossy().into_owned(),
    ];
    let out = traced(strace, &cleanup(f), &args).output().unwrap();
    assert!(out.status.success(), "traced run: {out:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut per_thread: HashMap<(String, String), usize> = HashMap::new();
    for line in text.lines() {
        let mut it = line.splitn(2, ' ');
        let (Some(tid), Some(rest)) = (it.next(), it.next()) else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(name) = rest.split('(').next() else {
            continue;
        };
        // Resumed calls (`<... write resumed>`) were counted when they started.
        if rest.starts_with('<') || !CALLS.contains(&name) {
            continue;
        }
        *per_thread
            .entry((tid.to_string(), name.to_string()))
            .or_default() += 1;
    }
    std::fs::remove_file(&log).unwrap();
    let mut counts = BTreeMap::new();
    for ((_, name), n) in per_thread {
        let c = counts.entry(name).or_insert(0);
        *c = (*c).max(n);
    }
    counts
}

#[test]
fn cleanup_after_a_kill_at_any_step_reaches_the_uninterrupted_end_state() {
    let Some(strace) = strace() else { return };
    let tmp = scratch();
    let root = tmp.path().join("w");
    for (k, s) in scenarios().iter().enumerate() {
        // The oracle: one uninterrupted run.
        let f = build(&root, s);
        let out = cleanup(&f).output().unwrap();
        assert!(out.status.success(), "{}: {out:?}", s.name);
        let oracle = end_state(&f);
        let f = build(&root, s);
        let counts = call_counts(&strace, &f);
        assert_eq!(end_state(&f), oracle, "{}: the traced run", s.name);
        let points: Vec<(&String, usize)> = counts.iter().map(|(n, c)| (n, *c)).collect();
        let total: usize = points.iter().map(|(_, c)| c).sum();
        let mut rng = Rng::new(1409 + k as u64);
        let (mut killed, mut finished) = (0, 0);
        let mut differed: Vec<String> = Vec::new();
        for _ in 0..kills_per_scenario() {
            // A call drawn in proportion to how often it is made, then one of its calls.
            let mut at = rng.below(total as u64) as usize;
            let (name, count) = *points
                .iter()
                .find(|(_, c)| {
                    let hit = at < *c;
                    if !hit {
                        at -= c;
                    }
                    hit
                })
                .unwrap();
            let n = 1 + rng.below(count as u64);
            let f = build(&root, s);
            let args = vec![
                "-o".to_string(),
                "/dev/null".to_string(),
                "-e".to_string(),
                format!("trace={name}"),
                "-e".to_string(),
                format!("inject={name}:signal=KILL:when={n}"),
            ];
            let out = traced(&strace, &cleanup(&f), &args).output().unwrap();
            let was_killed = out.status.signal() == Some(libc::SIGKILL)
                || out.status.code() == Some(128 + libc::SIGKILL);
            if was_killed {
                killed += 1;
            } else {
                assert!(out.status.success(), "{}: {name} #{n}: {out:?}", s.name);
                finished += 1;
            }
            let left = end_state(&f).0;
            let out = cleanup(&f).output().unwrap();
            assert!(
                out.status.success(),
                "{}: the run after a kill at {name} #{n}: {}",
                s.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let got = end_state(&f);
            if got != oracle {
                let extra: Vec<_> = got
                    .0
                    .iter()
                    .filter(|(p, v)| oracle.0.get(*p) != Some(v))
                    .collect();
                let missing: Vec<_> = oracle
                    .0
                    .iter()
                    .filter(|(p, v)| got.0.get(*p) != Some(v))
                    .collect();
                differed.push(format!(
                    "kill at {name} #{n}: store {}, extra {extra:?}, missing {missing:?} (the kill left {} files)",
                    if got.1 == oracle.1 { "same" } else { "differs" },
                    left.len()
                ));
            }
        }
        eprintln!(
            "crash recovery {}: {killed} kills, {finished} runs past the point, calls {counts:?}",
            s.name
        );
        assert!(
            differed.is_empty(),
            "{}: {} of {} reruns did not reach the uninterrupted end state:\n{}",
            s.name,
            differed.len(),
            kills_per_scenario(),
            differed.join("\n")
        );
        assert!(
            killed > kills_per_scenario() / 2,
            "{}: {killed} kills",
            s.name
        );
    }
}
