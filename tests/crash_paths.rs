//! Crash tests for the write paths that `crash_patch.rs` (`claw-sessions patch`) and
//! `crash_compact.rs` (`claw-compact run --rotate`) do not cover: `claw-sessions cleanup
//! --enforce` and `reset`, `claw-transcript append` and `repair`, `claw-signals record` and
//! `prune`, and `claw-watch drain`, each killed with SIGKILL at 200 random instants.
//!
//! Kill instants come from the operation's measured behaviour: the median duration of its
//! latest completed runs and the median time of its first write (the first change of a
//! probe: the sessions directory's listing, or the database's WAL). Three unkilled runs
//! calibrate; then one attempt in 40 runs to completion (proving that the next run copes
//! with what the kills left); of the others a quarter are killed within 2 ms of the first
//! write the test sees, the rest at a delay drawn from the run (a third anywhere in it, two
//! thirds from shortly before the first write to just before the end). After every kill:
//! every store parses and equals the state before or after the operation, every transcript
//! line is whole, `PRAGMA integrity_check` is ok and no event or acknowledgement is
//! half-recorded. Each test asserts that kills left the state before the operation and that
//! kills landed after its first write, and prints where they landed.
//!
//! Lock files left by a kill are kept for the next run, which must reclaim them. A lock file
//! created (`O_EXCL`) but killed before its payload was written is empty; the gateway's
//! protocol reclaims such a file only once its mtime is 30 s old, so the test ages it by 60 s
//! (and counts it) instead of waiting.
//!
//! For `cleanup --enforce` the run after every kill must also reach the end state of an
//! uninterrupted run (the same names: its temp files and the journal gone); see also
//! `crash_cleanup_recovery.rs`, which kills at every kind of system call.
//!
//! `CLAWSTATE_CRASH_KILLS=N` sets the kills per path (default 200); `CLAWSTATE_CRASH_DIR`
//! the file system (default `/dev/shm`, see [`scratch`]).

mod support;

use std::collections::{BTreeMap, VecDeque};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use clawstate::signals::rusqlite::types::Value as SqlValue;
use clawstate::signals::rusqlite::{params, params_from_iter, Connection};
use serde_json::{json, Map, Value};
use support::Rng;

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;
const SID: &str = "0b7c6a52-3f7e-4a56-9d3b-1f2e3d4c5b6a";
const MAIN: &str = "agent:main:main";
const C1: &str = "agent:main:subagent:c1";

fn kills_per_path() -> usize {
    std::env::var("CLAWSTATE_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// A private HOME/TMPDIR and a state dir with one agent's sessions directory.
struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

/// Where the fixtures live: `/dev/shm` when it is there. A kill tests the order of the
/// writer's system calls, not durability (what a killed process wrote is in the page cache
/// either way), and without fsync waits on a busy disk the runs are shorter, so more kills
/// fit in the time. `CLAWSTATE_CRASH_DIR=DIR` puts them on another file system (a disk,
/// where kills also land in the fsyncs).
fn scratch() -> tempfile::TempDir {
    if let Some(d) = std::env::var_os("CLAWSTATE_CRASH_DIR") {
        return tempfile::tempdir_in(d).unwrap();
    }
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
    let sessions = state.join("agents/main/sessions");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    std::fs::create_dir_all(&sessions).unwrap();
    // The binaries see the sessions directory through its real path.
    let sessions = sessions.canonicalize().unwrap();
    Env {
        _tmp: tmp,
        home,
        state,
        sessions,
    }
}

impl Env {
    fn cmd(&self, bin: &str) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin(bin));
        c.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("TMPDIR", self.home.join("tmp"))
            .arg("--state-dir")
            .arg(&self.state);
        c
    }

    fn db(&self) -> PathBuf {
        self.state.join("state/openclaw.sqlite")
    }

    fn names(&self) -> Vec<String> {
        names(&self.sessions)
    }

    fn store(&self) -> Value {
        let text = std::fs::read_to_string(self.sessions.join("sessions.json")).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("torn store ({e}): {text}"))
    }

    fn write_store(&self, v: &Value) {
        std::fs::write(
            self.sessions.join("sessions.json"),
            serde_json::to_string_pretty(v).unwrap(),
        )
        .unwrap();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn epoch(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)
}

/// Removes the temp files (`<name>.<pid>.<uuid>.tmp`) killed writers left; returns how many.
fn remove_temp_files(dir: &Path) -> usize {
    let mut n = 0;
    for name in names(dir) {
        if name.ends_with(".tmp") {
            std::fs::remove_file(dir.join(&name)).unwrap();
            n += 1;
        }
    }
    n
}

/// Counts the transcript write locks left in `dir`: a whole payload names the killed
/// process (the next run reclaims it at once as `dead-pid`); an empty or partial one (killed
/// between the `O_EXCL` create and the payload write) is aged past the 30 s mtime grace.
/// Returns how many were whole and how many were aged.
fn inspect_locks(dir: &Path) -> (usize, usize) {
    let (mut whole, mut aged) = (0, 0);
    for name in names(dir) {
        if !name.ends_with(".lock") {
            continue;
        }
        let p = dir.join(&name);
        let raw = std::fs::read(&p).unwrap_or_default();
        match serde_json::from_slice::<Value>(&raw)
            .ok()
            .and_then(|v| v["pid"].as_u64())
        {
            // The writer that left it has been killed and reaped: its pid is dead (or
            // recycled, which the payload's starttime tells apart).
            Some(_) => whole += 1,
            None => {
                let fresh = std::fs::metadata(&p)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t + Duration::from_secs(30) > SystemTime::now());
                if fresh {
                    set_mtime(&p, SystemTime::now() - Duration::from_secs(60));
                    aged += 1;
                }
            }
        }
    }
    (whole, aged)
}

/// The lock and temp files in `dir` with their contents.
fn lock_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".lock") || n.ends_with(".tmp"))
        .map(|n| {
            let c = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, c)
        })
        .collect()
}

/// The names in `dir`, hashed.
fn names_hash(dir: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    names(dir).hash(&mut h);
    h.finish()
}

/// When to kill a run.
#[derive(Clone, Copy)]
enum Plan {
    /// Never: let it finish.
    Complete,
    /// After this long.
    At(Duration),
    /// This long after the probe first changes, or at the deadline if it has not by then.
    AfterFirstWrite(Duration, Duration),
}

/// Kills runs of one operation at instants drawn from its measured duration.
struct Killer<'a> {
    name: &'static str,
    rng: Rng,
    /// Polled while a run is going: its first change marks the run's first write.
    probe: Box<dyn Fn() -> u64 + 'a>,
    /// The durations of the latest runs that completed, in µs.
    recent: VecDeque<u64>,
    /// When the latest runs made their first write, in µs from the spawn.
    first_write: VecDeque<u64>,
    attempts: usize,
    kills: usize,
    completed: usize,
    /// Where each killed run left the state (completed runs are not counted).
    sides: BTreeMap<&'static str, usize>,
    /// Whether the last attempt was killed.
    killed: bool,
    /// Kills that landed after the operation began to write (a lock, temp file or WAL
    /// frames it left, or a state past the commit).
    inside: usize,
    temp_files: usize,
    locks_left: usize,
    locks_aged: usize,
    started: Instant,
}

fn push15(q: &mut VecDeque<u64>, v: u64) {
    if q.len() == 15 {
        q.pop_front();
    }
    q.push_back(v);
}

fn median(q: &VecDeque<u64>) -> Option<u64> {
    let mut v: Vec<u64> = q.iter().copied().collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

impl<'a> Killer<'a> {
    fn new(name: &'static str, seed: u64, probe: impl Fn() -> u64 + 'a) -> Killer<'a> {
        Killer {
            name,
            rng: Rng::new(seed),
            probe: Box::new(probe),
            recent: VecDeque::new(),
            first_write: VecDeque::new(),
            attempts: 0,
            kills: 0,
            completed: 0,
            sides: BTreeMap::new(),
            killed: false,
            inside: 0,
            temp_files: 0,
            locks_left: 0,
            locks_aged: 0,
            started: Instant::now(),
        }
    }

    /// The median duration of the latest completed runs, in µs.
    fn full_us(&self) -> u64 {
        median(&self.recent).unwrap_or(20_000)
    }

    /// Whether this attempt should run to completion (three calibration runs, then one in
    /// every 40).
    fn unkilled_turn(&self) -> bool {
        self.attempts < 3 || self.attempts % 40 == 39
    }

    /// A third of the kills anywhere in a run of median length; the rest from shortly
    /// before the median first write to just before the median end, where the writes
    /// happen (later than that, most runs have already finished).
    fn delay(&mut self) -> Duration {
        let f = self.full_us().max(2_000);
        let w = median(&self.first_write).unwrap_or(f / 2).min(f);
        let us = if self.rng.chance(33) {
            self.rng.below(f)
        } else {
            let from = w * 7 / 10;
            let to = (f * 95 / 100).max(from + 1);
            from + self.rng.below(to - from)
        };
        Duration::from_micros(us)
    }

    /// Spawns `cmd`; kills it as `plan` says unless it finished first. Measures how long a
    /// finished run took and, for unkilled runs and kills placed after the first write,
    /// when the probe first changed.
    fn run(&mut self, mut cmd: Command, plan: Plan) -> std::process::Output {
        self.attempts += 1;
        self.killed = false;
        // The probe (a directory listing or a stat) is read only where its first change
        // matters: unkilled runs and kills placed after the first write.
        let probing = !matches!(plan, Plan::At(_));
        let initial = (self.probe)();
        let t = Instant::now();
        let complete = matches!(plan, Plan::Complete);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(if complete {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let reader = child.stdout.take().map(|mut stdout| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = std::io::Read::read_to_end(&mut stdout, &mut v);
                v
            })
        });
        let mut wrote = None;
        let mut finished = None;
        loop {
            if probing && wrote.is_none() && (self.probe)() != initial {
                wrote = Some(t.elapsed());
            }
            if child.try_wait().unwrap().is_some() {
                finished = Some(t.elapsed());
                break;
            }
            let el = t.elapsed();
            let left = match plan {
                Plan::Complete => Duration::from_millis(1),
                Plan::At(d) => d.saturating_sub(el),
                Plan::AfterFirstWrite(extra, deadline) => match wrote {
                    Some(w) => (w + extra).saturating_sub(el),
                    None => deadline.saturating_sub(el).min(Duration::from_micros(200)),
                },
            };
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_micros(700)));
        }
        if finished.is_none() {
            let _ = child.kill();
        }
        let mut out = child.wait_with_output().unwrap();
        if let Some(r) = reader {
            out.stdout = r.join().unwrap();
        }
        if let Some(w) = wrote {
            push15(&mut self.first_write, w.as_micros() as u64);
        }
        if out.status.signal() == Some(libc::SIGKILL) {
            self.kills += 1;
            self.killed = true;
            return out;
        }
        assert!(
            out.status.success(),
            "{}: a run failed on its own after {} kills ({:?}): {}",
            self.name,
            self.kills,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(d) = finished {
            push15(&mut self.recent, d.as_micros() as u64);
        }
        self.completed += 1;
        out
    }

    /// Runs `cmd` to completion; it must succeed.
    fn complete(&mut self, cmd: Command) -> std::process::Output {
        self.run(cmd, Plan::Complete)
    }

    /// One attempt: (one in 40) run to completion, which proves that the next run copes
    /// with what the kills left; else killed at a random instant drawn from the measured
    /// duration, or (one in four) within 2 ms of the first write the test sees (at 1.5 times
    /// the median run if it sees none by then), so that some kills land in the short window
    /// between the first write and the exit whatever the machine's load does to the
    /// timings. True when it was killed.
    fn attempt(&mut self, cmd: Command) -> bool {
        let plan = if self.unkilled_turn() {
            Plan::Complete
        } else if self.rng.chance(25) {
            let deadline = Duration::from_micros(self.full_us() * 3 / 2);
            Plan::AfterFirstWrite(Duration::from_micros(self.rng.below(2_000)), deadline)
        } else {
            Plan::At(self.delay())
        };
        self.run(cmd, plan);
        self.killed
    }

    /// Counts the last run, when killed, as having landed after its first write.
    fn landed_inside(&mut self, evidence: bool) {
        if self.killed && evidence {
            self.inside += 1;
        }
    }

    /// Records where a killed run left the state.
    fn side(&mut self, s: &'static str) {
        if self.killed {
            *self.sides.entry(s).or_default() += 1;
        }
    }

    fn locks(&mut self, dir: &Path) {
        let (whole, aged) = inspect_locks(dir);
        self.locks_left += whole;
        self.locks_aged += aged;
    }

    fn done(&self, before: &[&str], after: &[&str]) {
        eprintln!(
            "crash {}: {} kills ({} after the first write), {} completed runs, sides {:?}, {} temp files, {} lock files left (reclaimed by the next run), {} empty lock files aged; median run {} µs; {:.1} s",
            self.name,
            self.kills,
            self.inside,
            self.completed,
            self.sides,
            self.temp_files,
            self.locks_left,
            self.locks_aged,
            self.full_us(),
            self.started.elapsed().as_secs_f64()
        );
        let count = |names: &[&str]| {
            names
                .iter()
                .map(|n| self.sides.get(n).copied().unwrap_or(0))
                .sum::<usize>()
        };
        assert!(
            count(before) > 0,
            "{}: no kill left the state before the operation: {:?}",
            self.name,
            self.sides
        );
        assert!(
            self.inside > 0,
            "{}: no kill landed after the operation began to write ({:?})",
            self.name,
            self.sides
        );
        let _ = after;
    }
}

fn message_row(id: &str, parent: Option<&str>, role: &str, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-05-28T20:00:00.000Z",
        "message":{"role":role,"content":[{"type":"text","text":text}],"timestamp":NOW}})
}

fn header(id: &str) -> String {
    json!({"type":"session","version":3,"id":id,"timestamp":"2026-05-28T20:00:00.000Z","cwd":"/srv"})
        .to_string()
        + "\n"
}

/// Every line of a transcript: complete (newline-terminated) and JSON.
fn whole_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{}: torn last line: {:?}",
        path.display(),
        &text[text.len().saturating_sub(200)..]
    );
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: not whole ({e}): {l}", path.display(), i + 1))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// claw-sessions cleanup --enforce

const STALE: usize = 4;

fn cleanup_store() -> Value {
    let mut m = Map::new();
    m.insert(
        MAIN.into(),
        json!({"sessionId": "fresh", "updatedAt": NOW - HOUR, "label": "keep"}),
    );
    for i in 0..STALE {
        m.insert(
            format!("agent:main:cron:job{i}"),
            json!({"sessionId": format!("old{i}"), "updatedAt": NOW - 40 * DAY, "label": "x".repeat(300)}),
        );
    }
    Value::Object(m)
}

fn old_transcript(i: usize) -> String {
    header(&format!("old{i}"))
        + &message_row("a1", None, "user", &format!("job {i}")).to_string()
        + "\n"
}

fn restore_cleanup(e: &Env, k: &mut Killer) {
    k.temp_files += remove_temp_files(&e.sessions);
    for name in e.names() {
        std::fs::remove_file(e.sessions.join(name)).unwrap();
    }
    e.write_store(&cleanup_store());
    let fresh = e.sessions.join("fresh.jsonl");
    std::fs::write(&fresh, header("fresh")).unwrap();
    set_mtime(&fresh, epoch(NOW - HOUR));
    for i in 0..STALE {
        let p = e.sessions.join(format!("old{i}.jsonl"));
        std::fs::write(&p, old_transcript(i)).unwrap();
        set_mtime(&p, epoch(NOW - 40 * DAY));
    }
    let orphan = e.sessions.join("orphan.jsonl");
    std::fs::write(&orphan, header("orphan")).unwrap();
    set_mtime(&orphan, epoch(NOW - 40 * DAY));
}

/// Each stale transcript exists exactly once, live or archived, with its bytes; returns
/// how many are archived.
fn stale_transcripts_once(e: &Env) -> usize {
    let names = e.names();
    let mut archived = 0;
    for i in 0..STALE {
        let live = format!("old{i}.jsonl");
        let archives: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(&format!("old{i}.jsonl.deleted.")))
            .collect();
        let found: Vec<&String> = names
            .iter()
            .filter(|n| **n == live)
            .chain(archives.iter().copied())
            .collect();
        assert_eq!(found.len(), 1, "old{i}: {names:?}");
        assert_eq!(
            std::fs::read_to_string(e.sessions.join(found[0])).unwrap(),
            old_transcript(i)
        );
        archived += archives.len();
    }
    archived
}

#[test]
fn sigkill_during_cleanup_enforce() {
    let e = env();
    let mut k = Killer::new("cleanup --enforce", 101, || names_hash(&e.sessions));
    let cmd = || {
        let mut c = e.cmd("claw-sessions");
        c.args(["--now", &NOW.to_string(), "cleanup", "--enforce"]);
        c
    };
    let before = cleanup_store();
    let after = json!({MAIN: before[MAIN].clone()});
    // The oracle of the next run after a kill: the names an uninterrupted run leaves.
    restore_cleanup(&e, &mut k);
    let out = cmd().output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let uninterrupted = e.names();
    let n = kills_per_path();
    let mut recovered = 0;
    while k.kills < n {
        restore_cleanup(&e, &mut k);
        let killed = k.attempt(cmd());
        let store = e.store();
        let archived = stale_transcripts_once(&e);
        k.landed_inside(archived > 0 || !lock_files(&e.sessions).is_empty());
        assert_eq!(
            std::fs::read_to_string(e.sessions.join("fresh.jsonl")).unwrap(),
            header("fresh")
        );
        let journal = e.sessions.join("sessions.json.pending-archives.json");
        for name in e.names() {
            assert!(
                name == "sessions.json"
                    || name == "fresh.jsonl"
                    || name == "orphan.jsonl"
                    || name == "sessions.json.pending-archives.json"
                    || (name.starts_with("old") && name.contains(".jsonl"))
                    || (name.starts_with("sessions.json.") && name.ends_with(".tmp")),
                "unexpected file {name}"
            );
        }
        if store == before {
            // Nothing is renamed before the store is written (unlike the gateway, which
            // archives first: a kill in between left entries whose transcripts were gone).
            assert_eq!(archived, 0, "archived before the store was written");
            k.side("before");
        } else if store == after {
            if archived == STALE {
                k.side("after");
            } else {
                // Killed between the store write and the renames: the store references
                // none of the live stale transcripts, the journal lists them, and the next
                // run archives them (rather than pruning them as unreferenced).
                assert!(
                    journal.exists(),
                    "committed with live stale transcripts and no journal"
                );
                k.side("committed-archives-pending");
            }
        } else {
            panic!("store is neither before nor after: {store}");
        }
        if killed {
            // The next run reaches the uninterrupted run's end state, its own temp files
            // (a store or journal write killed) gone too.
            k.temp_files += e.names().iter().filter(|n| n.ends_with(".tmp")).count();
            let out = cmd().output().unwrap();
            assert!(out.status.success(), "{out:?}");
            assert_eq!(e.store(), after);
            assert_eq!(stale_transcripts_once(&e), STALE);
            assert!(!journal.exists());
            assert_eq!(e.names(), uninterrupted, "the run after a kill");
            recovered += 1;
        }
    }
    eprintln!("crash cleanup --enforce: {recovered} runs after a kill reached the uninterrupted end state");
    // The next run converges from whatever a kill left.
    k.complete(cmd());
    assert_eq!(e.store(), after);
    assert_eq!(stale_transcripts_once(&e), STALE);
    assert!(!e.sessions.join("orphan.jsonl").exists());
    assert!(!e
        .sessions
        .join("sessions.json.pending-archives.json")
        .exists());
    k.done(&["before"], &["after", "committed-archives-pending"]);
}

// ---------------------------------------------------------------------------------------
// claw-sessions reset

fn reset_store() -> Value {
    let mut m = Map::new();
    m.insert(
        MAIN.into(),
        json!({"sessionId": SID, "updatedAt": NOW - 1000, "thinkingLevel": "high", "totalTokens": 900, "label": "main"}),
    );
    for i in 0..30 {
        m.insert(
            format!("agent:main:telegram:group:{i}"),
            json!({"sessionId": format!("g{i}"), "updatedAt": NOW - 5000 - i, "chatType": "group", "label": "y".repeat(200)}),
        );
    }
    Value::Object(m)
}

fn sid_transcript() -> String {
    let mut t = header(SID);
    let mut parent: Option<String> = None;
    for i in 0..20 {
        let id = format!("m{i:03}");
        t +=
            &(message_row(&id, parent.as_deref(), "user", &format!("turn {i}")).to_string() + "\n");
        parent = Some(id);
    }
    t
}

/// Restores the store and transcript; lock files the last kill left stay for the next run.
fn restore_reset(e: &Env, k: &mut Killer) {
    k.temp_files += remove_temp_files(&e.sessions);
    k.locks(&e.sessions);
    for name in e.names() {
        if !name.ends_with(".lock") {
            std::fs::remove_file(e.sessions.join(name)).unwrap();
        }
    }
    e.write_store(&reset_store());
    std::fs::write(e.sessions.join(format!("{SID}.jsonl")), sid_transcript()).unwrap();
}

fn without_ids(entry: &Value) -> Value {
    let mut m = entry.as_object().unwrap().clone();
    m.remove("sessionId");
    m.remove("sessionFile");
    Value::Object(m)
}

#[test]
fn sigkill_during_reset() {
    let e = env();
    let mut k = Killer::new("reset", 202, || names_hash(&e.sessions));
    let cmd = || {
        let mut c = e.cmd("claw-sessions");
        c.args(["--now", &NOW.to_string(), "reset", "main"]);
        c
    };
    let before = reset_store();
    // The reset entry, learned from an unkilled run (its sessionId is random).
    restore_reset(&e, &mut k);
    k.complete(cmd());
    let reset_entry = without_ids(&e.store()[MAIN]);
    let old = format!("{SID}.jsonl");
    let n = kills_per_path();
    while k.kills < n {
        restore_reset(&e, &mut k);
        let locks = lock_files(&e.sessions);
        k.attempt(cmd());
        k.landed_inside(lock_files(&e.sessions) != locks);
        let store = e.store();
        let names = e.names();
        let mut others = store.as_object().unwrap().clone();
        let entry = others.remove(MAIN).expect("the main entry");
        let mut before_others = before.as_object().unwrap().clone();
        before_others.remove(MAIN);
        assert_eq!(others, before_others, "other entries changed");
        let archives: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with(&format!("{old}.reset.")))
            .collect();
        let old_live = names.contains(&old);
        let new_files: Vec<&String> = names
            .iter()
            .filter(|n| n.ends_with(".jsonl") && **n != old)
            .collect();
        for f in archives.iter().chain(old_live.then_some(&old).iter()) {
            assert_eq!(
                std::fs::read_to_string(e.sessions.join(f)).unwrap(),
                sid_transcript()
            );
        }
        if entry == before[MAIN] {
            assert!(
                old_live && archives.is_empty() && new_files.is_empty(),
                "{names:?}"
            );
            k.side("before");
            continue;
        }
        assert_eq!(without_ids(&entry), reset_entry);
        let new_id = entry["sessionId"].as_str().unwrap();
        assert_ne!(new_id, SID);
        let new_file = e.sessions.join(format!("{new_id}.jsonl"));
        assert_eq!(entry["sessionFile"], new_file.to_str().unwrap());
        assert_eq!(
            old_live as usize + archives.len(),
            1,
            "the old transcript exactly once: {names:?}"
        );
        assert!(new_files.len() <= 1, "{names:?}");
        // The new transcript: not yet created, created but empty (killed between the O_EXCL
        // create and the write; an empty transcript gets its header on the first append),
        // or exactly the header.
        match std::fs::read_to_string(&new_file) {
            Err(_) => k.side("after:no-header"),
            Ok(t) if t.is_empty() => k.side("after:empty-header"),
            Ok(_) => {
                let rows = whole_lines(&new_file);
                assert_eq!(rows.len(), 1);
                assert_eq!(rows[0]["id"], new_id);
                k.side(if old_live {
                    // Committed, not yet archived: the old transcript (and its lock) stay
                    // behind unreferenced, as they would after a gateway crash at this point.
                    "after:not-archived"
                } else {
                    "after"
                });
            }
        }
    }
    // The next run reclaims any lock the kills left on the old transcript.
    restore_reset(&e, &mut k);
    k.complete(cmd());
    assert!(
        !e.names().iter().any(|n| n.ends_with(".lock")),
        "{:?}",
        e.names()
    );
    k.done(
        &["before"],
        &["after", "after:not-archived", "after:no-header"],
    );
}

// ---------------------------------------------------------------------------------------
// claw-transcript append

/// Whether the transcript ends in a cut-off line; if so, the fragment must be the start of
/// a message row (the one being appended).
fn torn_tail(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    if text.is_empty() || text.ends_with('\n') {
        return false;
    }
    let frag = &text[text.rfind('\n').map_or(0, |i| i + 1)..];
    let row = "{\"type\":\"message\",\"id\":\"";
    assert!(
        frag.starts_with(row) || row.starts_with(frag),
        "a torn line that is not the appended row: {frag:?}"
    );
    assert!(serde_json::from_str::<Value>(frag).is_err());
    true
}

/// The texts of the messages in a transcript (all lines whole, one linear chain).
fn chain_texts(path: &Path) -> Vec<String> {
    if !path.exists() {
        return Vec::new();
    }
    let rows = whole_lines(path);
    if rows.is_empty() {
        return Vec::new();
    }
    assert_eq!(rows[0]["type"], "session");
    let mut texts = Vec::new();
    let mut prev: Option<&Value> = None;
    for r in &rows[1..] {
        assert_eq!(r["type"], "message");
        assert_eq!(
            r["parentId"],
            prev.map_or(Value::Null, |p| p["id"].clone()),
            "broken chain at {r}"
        );
        prev = Some(r);
        let t = r["message"]["content"][0]["text"].as_str().unwrap();
        texts.push(t.split(' ').next().unwrap().to_string());
    }
    texts
}

#[test]
fn sigkill_during_transcript_append() {
    let e = env();
    e.write_store(&json!({MAIN: {"sessionId": SID, "updatedAt": NOW}}));
    let path = e.sessions.join(format!("{SID}.jsonl"));
    let mut k = Killer::new("transcript append", 303, || names_hash(&e.sessions));
    let mut label = 0usize;
    let n = kills_per_path();
    while k.kills < n {
        k.temp_files += remove_temp_files(&e.sessions);
        k.locks(&e.sessions);
        let next = label + 1;
        // Every fifth message is long (3 KB).
        let text = if next.is_multiple_of(5) {
            format!("m{next} {}", "w".repeat(3000))
        } else {
            format!("m{next}")
        };
        let mut c = e.cmd("claw-transcript");
        c.args(["--now", &NOW.to_string(), "append", "main", "--text", &text]);
        let locks = lock_files(&e.sessions);
        k.attempt(c);
        if torn_tail(&path) {
            // SIGKILL can stop write(2) between two pages of a line (the kernel checks for
            // fatal signals per page; the gateway's appender has the same window): only the
            // line being appended may be cut, and `repair --trim-torn-tail` removes it.
            k.side("torn-tail");
            k.landed_inside(true);
            k.locks(&e.sessions);
            let mut c = e.cmd("claw-transcript");
            c.args(["repair", "main", "--trim-torn-tail"]);
            assert!(c.output().unwrap().status.success());
        }
        let texts = chain_texts(&path);
        k.landed_inside(lock_files(&e.sessions) != locks || texts.len() == next);
        let expected: Vec<String> = (1..=texts.len()).map(|i| format!("m{i}")).collect();
        assert_eq!(texts, expected, "lost, repeated or reordered messages");
        assert!(
            texts.len() == label || texts.len() == next,
            "{} messages, expected {label} or {next}",
            texts.len()
        );
        k.side(if texts.len() == next {
            "after"
        } else {
            "before"
        });
        label = texts.len();
    }
    k.locks(&e.sessions);
    let mut c = e.cmd("claw-transcript");
    c.args(["append", "main", "--text", &format!("m{}", label + 1)]);
    k.complete(c);
    assert_eq!(chain_texts(&path).len(), label + 1);
    assert!(!e.names().iter().any(|n| n.ends_with(".lock")));
    k.done(&["before"], &["after"]);
}

// ---------------------------------------------------------------------------------------
// claw-transcript repair

fn damaged_transcript() -> String {
    let mut t = header(SID);
    let mut parent: Option<String> = None;
    for i in 0..60 {
        let id = format!("r{i:03}");
        let text = format!("turn {i} {}", "lorem ipsum ".repeat(20));
        t += &(message_row(
            &id,
            parent.as_deref(),
            if i % 2 == 0 { "user" } else { "assistant" },
            &text,
        )
        .to_string()
            + "\n");
        parent = Some(id);
        if i % 40 == 20 {
            t += "not json at all\n";
        }
    }
    t
}

#[test]
fn sigkill_during_transcript_repair() {
    let e = env();
    e.write_store(&json!({MAIN: {"sessionId": SID, "updatedAt": NOW}}));
    let path = e.sessions.join(format!("{SID}.jsonl"));
    let damaged = damaged_transcript();
    let mut k = Killer::new("transcript repair", 404, || names_hash(&e.sessions));
    let cmd = || {
        let mut c = e.cmd("claw-transcript");
        c.args(["--now", &NOW.to_string(), "repair", "main"]);
        c
    };
    let restore = |k: &mut Killer| {
        k.temp_files += remove_temp_files(&e.sessions);
        k.locks(&e.sessions);
        std::fs::write(&path, &damaged).unwrap();
    };
    restore(&mut k);
    k.complete(cmd());
    let repaired = std::fs::read_to_string(&path).unwrap();
    assert_ne!(repaired, damaged);
    assert_eq!(whole_lines(&path).len(), 61);
    let n = kills_per_path();
    while k.kills < n {
        restore(&mut k);
        let locks = lock_files(&e.sessions);
        k.attempt(cmd());
        let now = std::fs::read_to_string(&path).unwrap();
        k.landed_inside(lock_files(&e.sessions) != locks || now != damaged);
        if now == damaged {
            k.side("before");
        } else {
            assert_eq!(now, repaired, "neither the old nor the repaired transcript");
            k.side("after");
        }
        for name in e.names() {
            assert!(
                name == "sessions.json"
                    || name == format!("{SID}.jsonl")
                    || name == format!("{SID}.jsonl.lock")
                    || name.ends_with(".tmp"),
                "unexpected file {name}"
            );
        }
    }
    restore(&mut k);
    k.complete(cmd());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), repaired);
    assert!(!e.names().iter().any(|n| n.ends_with(".lock")));
    k.done(&["before"], &["after"]);
}

// ---------------------------------------------------------------------------------------
// The state database: claw-signals record and prune, claw-watch drain

/// `PRAGMA integrity_check` of the three signal tables and their indexes, or of the whole
/// database (its 300-odd objects take a while in a debug build: every 10th time).
fn integrity(conn: &Connection, full: bool) {
    let tables: &[&str] = if full {
        &[""]
    } else {
        &[
            "(session_state_events)",
            "(session_state_heads)",
            "(session_watch_cursors)",
        ]
    };
    for t in tables {
        let ok: String = conn
            .query_row(&format!("PRAGMA integrity_check{t}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "integrity_check{t}");
    }
}

fn open_checked(db: &Path, full: bool) -> Connection {
    let conn = Connection::open(db).unwrap();
    integrity(&conn, full);
    conn
}

fn ints(conn: &Connection, sql: &str) -> Vec<i64> {
    conn.query_row(sql, [], |r| {
        let n = r.as_ref().column_count();
        (0..n).map(|i| r.get::<_, i64>(i)).collect()
    })
    .unwrap()
}

/// A database made by the binary (canonical schema, a spawn edge seeding MAIN's cursor).
fn create_db(e: &Env) {
    let o = e
        .cmd("claw-signals")
        .args([
            "--now",
            &NOW.to_string(),
            "record",
            "--session",
            C1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn sigkill_during_signals_record() {
    let e = env();
    create_db(&e);
    let db = e.db();
    // One connection for the whole test, as a concurrent reader would hold it.
    let conn = open_checked(&db, true);
    let mut k = Killer::new("signals record", 505, || wal_state(&db));
    let mut label = 0usize;
    let n = kills_per_path();
    while k.kills < n {
        let next = label + 1;
        let mut c = e.cmd("claw-signals");
        c.args([
            "--now",
            &(NOW + 1000 * next as i64).to_string(),
            "record",
            "--session",
            C1,
            "--kind",
            "human_direct_message",
            "--via",
            "telegram",
            "--run-id",
            &format!("r{next}"),
        ]);
        let wal = wal_state(&db);
        k.attempt(c);
        k.landed_inside(wal_state(&db) != wal);
        integrity(&conn, k.attempts.is_multiple_of(10));
        let mut stmt = conn
            .prepare("SELECT run_id, sequence FROM session_state_events WHERE session_key = ?1 AND kind = 'human_direct_message' ORDER BY sequence")
            .unwrap();
        let rows: Vec<(String, i64)> = stmt
            .query_map([C1], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let ids: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        let expected: Vec<String> = (1..=ids.len()).map(|i| format!("r{i}")).collect();
        assert_eq!(ids, expected, "lost or repeated events");
        assert!(ids.len() == label || ids.len() == next);
        // No half-recorded event: the head, and the watcher's cursor, move with the row.
        let max = ints(
            &conn,
            &format!("SELECT max(sequence) FROM session_state_events WHERE session_key = '{C1}'"),
        )[0];
        let head = ints(
            &conn,
            &format!("SELECT last_sequence FROM session_state_heads WHERE session_key = '{C1}'"),
        )[0];
        assert_eq!(head, max, "head behind its events");
        let cur = ints(&conn, &format!("SELECT last_seen_sequence, notified_sequence, material_sequence FROM session_watch_cursors WHERE watcher_session_key = '{MAIN}' AND target_session_key = '{C1}'"));
        assert_eq!(
            cur[2], max,
            "the cursor's material watermark behind the head"
        );
        assert!(cur[0] <= cur[1] && cur[1] <= cur[2], "{cur:?}");
        k.side(if ids.len() == next { "after" } else { "before" });
        label = ids.len();
    }
    integrity(&conn, true);
    k.done(&["before"], &["after"]);
}

const TABLES: [&str; 3] = [
    "session_state_events",
    "session_state_heads",
    "session_watch_cursors",
];

/// Every row of the three signal tables.
type Rows = Vec<Vec<Vec<SqlValue>>>;

fn table_rows(conn: &Connection) -> Rows {
    TABLES
        .iter()
        .map(|t| {
            let mut stmt = conn.prepare(&format!("SELECT * FROM {t}")).unwrap();
            let n = stmt.column_count();
            stmt.query_map([], |r| (0..n).map(|i| r.get::<_, SqlValue>(i)).collect())
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        })
        .collect()
}

/// Puts the three tables back as they were, in one transaction (cheaper than copying the
/// 1.4 MB canonical database back and parsing its 300-odd schema objects again).
fn restore_tables(conn: &Connection, rows: &Rows) {
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    for (t, rows) in TABLES.iter().zip(rows) {
        conn.execute(&format!("DELETE FROM {t}"), []).unwrap();
        for row in rows {
            let marks = vec!["?"; row.len()].join(", ");
            conn.prepare_cached(&format!("INSERT INTO {t} VALUES ({marks})"))
                .unwrap()
                .execute(params_from_iter(row.iter()))
                .unwrap();
        }
    }
    conn.execute_batch("COMMIT").unwrap();
}

/// The state of a database's WAL (length and mtime), hashed: it changes with every write.
fn wal_state(db: &Path) -> u64 {
    let mut p = db.as_os_str().to_owned();
    p.push("-wal");
    std::fs::metadata(PathBuf::from(p)).map_or(0, |m| {
        use std::os::unix::fs::MetadataExt;
        m.len() ^ (m.mtime_nsec() as u64).rotate_left(20) ^ (m.mtime() as u64).rotate_left(40)
    })
}

/// The old events, heads and cursors `prune` works on, added with SQL to a database the
/// binary created.
fn prune_fixture(conn: &Connection) {
    conn.execute_batch("BEGIN").unwrap();
    for s in 0..5 {
        let key = format!("agent:main:cron:s{s}");
        let mut last = 0;
        for i in 0..20 {
            let at = if i < 15 {
                NOW - 40 * DAY + i
            } else {
                NOW - HOUR + i
            };
            conn.execute(
                "INSERT INTO session_state_events (session_key, agent_id, kind, actor_type, run_id, occurred_at, summary) VALUES (?1, 'main', 'compacted', 'system', ?2, ?3, 'session compacted')",
                params![key, format!("s{s}-{i}"), at],
            )
            .unwrap();
            last = conn.last_insert_rowid();
        }
        conn.execute(
            "INSERT INTO session_state_heads (session_key, agent_id, last_sequence, pruned_max_sequence, updated_at) VALUES (?1, 'main', ?2, 0, ?3)",
            params![key, last, NOW - HOUR],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key, updated_at) VALUES (?1, ?2, ?3)",
            params![MAIN, key, if s % 2 == 0 { NOW - 40 * DAY } else { NOW - HOUR }],
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
}

const PRUNE_DIGEST: &str = "SELECT (SELECT count(*) FROM session_state_events), (SELECT coalesce(sum(sequence), 0) FROM session_state_events), (SELECT coalesce(sum(pruned_max_sequence), 0) FROM session_state_heads), (SELECT coalesce(sum(updated_at), 0) FROM session_state_heads), (SELECT count(*) FROM session_watch_cursors), (SELECT count(*) FROM session_state_heads)";

/// Kills `cmd` (a one-transaction writer of the state database) at random instants; after
/// each kill the tables' `digest` must be the one before or the one after the operation.
fn db_crash_loop(
    e: &Env,
    name: &'static str,
    seed: u64,
    fill: impl Fn(&Connection),
    restore: impl Fn(&Connection, &Rows),
    cmd: impl Fn() -> Command,
    digest: &str,
) -> Killer<'static> {
    create_db(e);
    let db = e.db();
    // One connection for the whole test, as a concurrent reader would hold it.
    let conn = open_checked(&db, true);
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    fill(&conn);
    let fixture = table_rows(&conn);
    let before = ints(&conn, digest);
    let probe_db = db.clone();
    let mut k = Killer::new(name, seed, move || wal_state(&probe_db));
    k.complete(cmd());
    let after = ints(&conn, digest);
    assert_ne!(before, after, "{name} changed nothing");
    let n = kills_per_path();
    while k.kills < n {
        restore(&conn, &fixture);
        let wal = wal_state(&db);
        k.attempt(cmd());
        k.landed_inside(wal_state(&db) != wal);
        integrity(&conn, k.attempts.is_multiple_of(10));
        let now = ints(&conn, digest);
        if now == before {
            k.side("before");
        } else {
            assert_eq!(now, after, "{name}: neither before ({before:?}) nor after");
            k.side("after");
        }
    }
    // The next run works on what the last kill left.
    restore(&conn, &fixture);
    k.complete(cmd());
    assert_eq!(ints(&conn, digest), after);
    integrity(&conn, true);
    k
}

#[test]
fn sigkill_during_signals_prune() {
    let e = env();
    let k = db_crash_loop(
        &e,
        "signals prune",
        606,
        prune_fixture,
        restore_tables,
        || {
            let mut c = e.cmd("claw-signals");
            c.args(["--now", &NOW.to_string(), "prune", "--max-rows", "15"]);
            c
        },
        PRUNE_DIGEST,
    );
    k.done(&["before"], &["after"]);
}

const TARGETS: usize = 100;

/// Pending notices for MAIN; every other one with work interleaved after the notice (the
/// drain opens a follow-up for those).
fn drain_fixture(conn: &Connection) {
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..TARGETS {
        conn.execute(
            "INSERT INTO session_watch_cursors (watcher_session_key, target_session_key, last_seen_sequence, notified_sequence, material_sequence, updated_at) VALUES (?1, ?2, 0, 1, ?3, ?4)",
            params![MAIN, format!("agent:main:subagent:t{i}"), 1 + (i % 2) as i64, NOW - HOUR],
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
}

const DRAIN_DIGEST: &str = "SELECT count(*), sum(last_seen_sequence), sum(notified_sequence), sum(material_sequence), sum(updated_at) FROM session_watch_cursors";

#[test]
fn sigkill_during_watch_drain() {
    let e = env();
    let k = db_crash_loop(
        &e,
        "watch drain",
        707,
        drain_fixture,
        |conn, _| {
            // One statement puts the cursors back.
            conn.execute(
                "UPDATE session_watch_cursors SET last_seen_sequence = 0, notified_sequence = 1, material_sequence = 1 + (CAST(substr(target_session_key, 22) AS INTEGER) % 2), updated_at = ?2 WHERE watcher_session_key = ?1 AND target_session_key LIKE 'agent:main:subagent:t%'",
                params![MAIN, NOW - HOUR],
            )
            .unwrap();
        },
        || {
            let mut c = e.cmd("claw-watch");
            c.args(["--now", &(NOW + 5000).to_string(), "drain", "main"]);
            c
        },
        DRAIN_DIGEST,
    );
    k.done(&["before"], &["after"]);
}
