//! Field safety (issue 22, items 1–3, 7 and 15): paths from data never lead outside the
//! sessions directory, special files never hang or exhaust a reader, and failures say why
//! with their exit code. Every test here failed on the code before the fix.

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use support::claw;

/// A hang guard only (a FIFO blocked the old code forever): never a speed assertion.
const HANG_GUARD: Duration = Duration::from_secs(60);

const SID: &str = "0b7c6a52-3f7e-4a56-9d3b-1f2e3d4c5b6a";
const SECRET: &str = "SECRET-OUTSIDE-THE-STATE-DIR";

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
    outside: PathBuf,
}

fn transcript(id: &str, text: &str) -> String {
    let rows = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-11-29T21:00:01.000Z","message":{"role":"user","content":text,"timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-11-29T21:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":text}],"stopReason":"stop","usage":{"totalTokens":50000},"timestamp":2}}),
        json!({"type":"message","id":"u2","parentId":"a1","timestamp":"2026-11-29T21:00:03.000Z","message":{"role":"user","content":format!("{text} {}", "more ".repeat(200)),"timestamp":3}}),
        json!({"type":"message","id":"a2","parentId":"u2","timestamp":"2026-11-29T21:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"totalTokens":60000},"timestamp":4}}),
    ];
    rows.iter().map(|r| format!("{r}\n")).collect()
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let state = root.join("state");
    let sessions = state.join("agents/main/sessions");
    let outside = root.join("outside");
    for d in [&home, &sessions, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(outside.join("victim.jsonl"), transcript(SID, SECRET)).unwrap();
    Env {
        _tmp: tmp,
        home,
        state,
        sessions,
        outside,
    }
}

impl Env {
    fn cmd(&self, bin: &str) -> assert_cmd::Command {
        let mut c = claw(bin, &self.home);
        c.env("OPENCLAW_STATE_DIR", &self.state).timeout(HANG_GUARD);
        c
    }
    fn store(&self, v: Value) {
        std::fs::write(
            self.sessions.join("sessions.json"),
            serde_json::to_string_pretty(&v).unwrap(),
        )
        .unwrap();
    }
    fn store_text(&self) -> String {
        std::fs::read_to_string(self.sessions.join("sessions.json")).unwrap_or_default()
    }
    /// An entry whose relative sessionFile leads through `lnk` → the outside directory.
    fn through_linked_dir(&self) {
        symlink(&self.outside, self.sessions.join("lnk")).unwrap();
        self.store(json!({"agent:main:main": {
            "sessionId": SID, "updatedAt": 1_700_000_000_000u64,
            "sessionFile": "lnk/victim.jsonl", "totalTokens": 60000
        }}));
    }
    /// An entry whose transcript `<sessionId>.jsonl` is a link to the outside file.
    fn linked_transcript(&self) {
        symlink(
            self.outside.join("victim.jsonl"),
            self.sessions.join(format!("{SID}.jsonl")),
        )
        .unwrap();
        self.store(json!({"agent:main:main": {
            "sessionId": SID, "updatedAt": 1_700_000_000_000u64, "totalTokens": 60000
        }}));
    }
}

/// Every file below `root` with its bytes (links as `-> target`).
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                out.insert(
                    rel,
                    format!("-> {}", std::fs::read_link(&p).unwrap().display()),
                );
            } else if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                out.insert(
                    rel,
                    String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned(),
                );
            } else {
                out.insert(rel, "(special)".into());
            }
        }
    }
    out
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(c: &mut assert_cmd::Command) -> Ran {
    let o = c.output().unwrap();
    Ran {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Every command that reads or writes an entry's transcript.
fn transcript_commands() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("claw-transcript", vec!["cat", "main"]),
        ("claw-transcript", vec!["history", "main"]),
        ("claw-transcript", vec!["tail", "main"]),
        ("claw-transcript", vec!["tree", "main"]),
        ("claw-transcript", vec!["stats", "main"]),
        ("claw-transcript", vec!["context", "main"]),
        ("claw-transcript", vec!["repair", "main"]),
        (
            "claw-transcript",
            vec!["repair", "main", "--trim-torn-tail"],
        ),
        ("claw-transcript", vec!["migrate", "main"]),
        ("claw-transcript", vec!["append", "main", "--text", "x"]),
        ("claw-compact", vec!["check", "main"]),
        ("claw-compact", vec!["plan", "main"]),
        ("claw-compact", vec!["run", "main"]),
        ("claw-compact", vec!["run", "main", "--rotate"]),
        ("claw-compact", vec!["truncate", "main", "--max-lines", "2"]),
        ("claw-sessions", vec!["show", "main"]),
        ("claw-sessions", vec!["reset", "main"]),
    ]
}

/// Item 2: a relative sessionFile through a symlinked directory (`lnk/victim.jsonl`, `lnk`
/// → outside) is reported (exit 65, naming the entry and the path) and never followed:
/// nothing outside is read, printed or changed, and nothing in the state dir changes.
#[test]
fn a_session_file_through_a_linked_directory_is_refused_by_every_command() {
    let e = env();
    e.through_linked_dir();
    let outside_before = snapshot(&e.outside);
    for (bin, args) in transcript_commands() {
        let store_before = e.store_text();
        let r = run(e.cmd(bin).args(&args));
        let what = format!("{bin} {args:?}");
        assert_eq!(r.code, Some(65), "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("agent:main:main") && r.stderr.contains("lnk"),
            "{what}: names the entry and the path: {}",
            r.stderr
        );
        assert!(r.stderr.contains("symbolic link"), "{what}: {}", r.stderr);
        assert!(
            !r.stdout.contains(SECRET),
            "{what} printed the outside file"
        );
        assert_eq!(
            snapshot(&e.outside),
            outside_before,
            "{what} changed outside"
        );
        assert_eq!(e.store_text(), store_before, "{what} changed the store");
    }
    // `check --all` reports the entry as a finding.
    let r = run(e.cmd("claw-transcript").args(["check", "--all"]));
    assert_eq!(r.code, Some(65), "{}", r.stderr);
    assert!(
        r.stdout.contains("entry-transcript-path") && r.stdout.contains("symbolic link"),
        "{}",
        r.stdout
    );
}

/// Item 3: a transcript that is itself a symlink to an outside file is never read (cat,
/// history printed it) nor copied into the sessions directory (repair did).
#[test]
fn a_transcript_that_is_a_link_is_never_read_or_copied() {
    let e = env();
    e.linked_transcript();
    let outside_before = snapshot(&e.outside);
    for (bin, args) in transcript_commands() {
        if args[0] == "reset" {
            continue; // reset archives regular files only and leaves the link: tested below
        }
        let inside_before = snapshot(&e.sessions);
        let r = run(e.cmd(bin).args(&args));
        let what = format!("{bin} {args:?}");
        assert_eq!(r.code, Some(65), "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("is a symbolic link"),
            "{what}: {}",
            r.stderr
        );
        assert!(
            !r.stdout.contains(SECRET),
            "{what} printed the outside file"
        );
        assert_eq!(snapshot(&e.outside), outside_before, "{what}");
        assert_eq!(
            snapshot(&e.sessions),
            inside_before,
            "{what} changed the sessions dir"
        );
    }
    // Asked for by the sessionId alone (no entry), the link is refused the same way.
    let r = run(e
        .cmd("claw-transcript")
        .args(["cat", SID, "--store"])
        .arg(e.sessions.join("none.json")));
    assert_ne!(r.code, Some(0), "{}", r.stdout);
    assert!(!r.stdout.contains(SECRET));
    // `check --all` reports both the entry and the link in the directory.
    let r = run(e.cmd("claw-transcript").args(["check", "--all"]));
    assert_eq!(r.code, Some(65), "{}", r.stderr);
    assert!(r.stdout.contains("entry-transcript-path"), "{}", r.stdout);
    assert!(r.stdout.contains("transcript-not-regular"), "{}", r.stdout);
    assert!(!r.stdout.contains(SECRET));
    // Reset gives a new transcript and leaves the link (and its target) alone.
    let r = run(e.cmd("claw-sessions").args(["reset", "main"]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(snapshot(&e.outside), outside_before);
    assert!(
        std::fs::symlink_metadata(e.sessions.join(format!("{SID}.jsonl")))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Item 1: a pending-archive journal whose `dir` (or `from`/`to`) passes through a
/// symlinked subdirectory made `cleanup --enforce` rename a file outside the state dir. It
/// is refused whole (exit 65), and nothing is changed.
#[test]
fn a_hostile_pending_archive_journal_is_refused_and_changes_nothing() {
    let e = env();
    symlink(&e.outside, e.sessions.join("lnk")).unwrap();
    std::fs::write(e.sessions.join("keep.jsonl"), transcript("keep", "kept")).unwrap();
    e.store(json!({"agent:main:main": {"sessionId": "keep", "updatedAt": 1_700_000_000_000u64}}));
    let journal = e.sessions.join("sessions.json.pending-archives.json");
    let lnk = e.sessions.join("lnk");
    for j in [
        json!({"version": 2, "dir": lnk, "archives": [
            {"suffix": ".deleted.2026-01-01T00-00-00.000Z", "files": [["victim.jsonl", "v"]]}]}),
        json!({"version": 1, "archives": [
            {"sessionId": "v", "from": lnk.join("victim.jsonl"), "to": lnk.join("victim.jsonl.deleted.2026-01-01T00-00-00.000Z")}]}),
        json!({"version": 1, "archives": [
            {"sessionId": "v", "from": e.outside.join("victim.jsonl"), "to": e.outside.join("victim.jsonl.deleted.2026-01-01T00-00-00.000Z")}]}),
    ] {
        std::fs::write(&journal, j.to_string()).unwrap();
        let state_before = snapshot(&e.state);
        let outside_before = snapshot(&e.outside);
        let r = run(e.cmd("claw-sessions").args(["cleanup", "--enforce"]));
        assert_eq!(r.code, Some(65), "{j}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("pending-archives.json"), "{}", r.stderr);
        assert_eq!(snapshot(&e.outside), outside_before, "{j}: renamed outside");
        assert_eq!(
            snapshot(&e.state),
            state_before,
            "{j}: changed the state dir"
        );
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Item 7: a FIFO in place of a transcript hung every reader; it is refused at once with
/// exit 65 naming the file, and nothing is written.
#[test]
fn a_fifo_in_place_of_a_transcript_is_refused_without_hanging() {
    let e = env();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1_700_000_000_000u64}}));
    let fifo = e.sessions.join(format!("{SID}.jsonl"));
    mkfifo(&fifo);
    let mut commands = transcript_commands();
    commands.push(("claw-transcript", vec!["check", "main"]));
    for (bin, args) in commands {
        if args[0] == "reset" {
            continue;
        }
        let before = snapshot(&e.state);
        let r = run(e.cmd(bin).args(&args));
        let what = format!("{bin} {args:?}");
        assert_eq!(r.code, Some(65), "{what}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("a FIFO"), "{what}: {}", r.stderr);
        assert_eq!(snapshot(&e.state), before, "{what}");
    }
    // Named by its path on the command line, too.
    let r = run(e.cmd("claw-transcript").arg("cat").arg(&fifo));
    assert_eq!(r.code, Some(65), "{}", r.stderr);
    // Reset leaves the FIFO alone (it archives regular files only).
    let r = run(e.cmd("claw-sessions").args(["reset", "main"]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&fifo).is_ok());
}

/// Item 7: a FIFO, a directory or `/dev/zero` in place of `sessions.json` (or the config)
/// hung or grew memory without bound; each is refused with exit 65 naming the file.
#[test]
fn special_files_in_place_of_the_store_or_config_are_refused() {
    let e = env();
    let store = e.sessions.join("sessions.json");
    let store_commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["show", "main"],
        vec!["patch", "main", "--set", "label=\"x\""],
        vec!["cleanup", "--dry-run"],
        vec!["cleanup", "--enforce"],
        vec!["delete", "main"],
        vec!["reset", "main"],
    ];
    let makers: Vec<(&str, Box<dyn Fn(&Path)>)> = vec![
        ("a FIFO", Box::new(|p: &Path| mkfifo(p))),
        (
            "a character device",
            Box::new(|p: &Path| symlink("/dev/zero", p).unwrap()),
        ),
        (
            "a directory",
            Box::new(|p: &Path| std::fs::create_dir(p).unwrap()),
        ),
    ];
    for (what, make) in &makers {
        make(&store);
        for args in &store_commands {
            let r = run(e.cmd("claw-sessions").args(args));
            assert_eq!(r.code, Some(65), "{what} {args:?}: {}", r.stderr);
            assert!(
                r.stderr.contains(what) && r.stderr.contains("sessions.json"),
                "{}",
                r.stderr
            );
        }
        for (bin, args) in [
            ("claw-transcript", vec!["cat", "main"]),
            ("claw-compact", vec!["check", "main"]),
        ] {
            let r = run(e.cmd(bin).args(&args));
            assert_eq!(r.code, Some(65), "{what} {bin} {args:?}: {}", r.stderr);
        }
        if store.is_dir() {
            std::fs::remove_dir(&store).unwrap();
        } else {
            std::fs::remove_file(&store).unwrap();
        }
    }
    // The config.
    let config = e.state.join("openclaw.json");
    mkfifo(&config);
    let r = run(e.cmd("claw-sessions").arg("list"));
    assert_eq!(r.code, Some(65), "{}", r.stderr);
    assert!(
        r.stderr.contains("openclaw.json") && r.stderr.contains("a FIFO"),
        "{}",
        r.stderr
    );
}

/// Item 15: a store or transcript that is a directory says so (65), not "other failure".
#[test]
fn a_directory_in_place_of_a_transcript_is_65() {
    let e = env();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1_700_000_000_000u64}}));
    std::fs::create_dir(e.sessions.join(format!("{SID}.jsonl"))).unwrap();
    for (bin, args) in [
        ("claw-transcript", vec!["cat", "main"]),
        ("claw-transcript", vec!["append", "main", "--text", "x"]),
        ("claw-transcript", vec!["history", "main"]),
        ("claw-compact", vec!["run", "main"]),
    ] {
        let r = run(e.cmd(bin).args(&args));
        assert_eq!(r.code, Some(65), "{bin} {args:?}: {}", r.stderr);
        assert!(r.stderr.contains("a directory"), "{}", r.stderr);
    }
}

/// Item 7: a FIFO in place of a transcript's `.lock` hung `lock status`, `check --all` and
/// every writer that inspects a held lock; it reads as a payload of nothing.
#[test]
fn a_fifo_in_place_of_a_lock_file_never_hangs() {
    let e = env();
    std::fs::write(
        e.sessions.join(format!("{SID}.jsonl")),
        transcript(SID, "x"),
    )
    .unwrap();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1_700_000_000_000u64}}));
    mkfifo(&e.sessions.join(format!("{SID}.jsonl.lock")));
    for args in [
        vec!["lock", "status", "main", "--json"],
        vec!["lock", "status", "--all"],
        vec!["check", "--all"],
    ] {
        let r = run(e.cmd("claw-transcript").args(&args));
        assert!(
            matches!(r.code, Some(0) | Some(65)),
            "{args:?}: {:?} {}",
            r.code,
            r.stderr
        );
    }
    let r = run(e
        .cmd("claw-transcript")
        .env("OPENCLAW_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS", "200")
        .args(["append", "main", "--text", "x"]));
    assert!(r.code.is_some(), "append ended: {:?} {}", r.code, r.stderr);
}

/// Item 7: a FIFO planted as the gateway's lock file under `$TMPDIR/openclaw-<uid>/` hung
/// every write command's live-gateway check.
#[test]
fn a_fifo_as_the_gateway_lock_never_hangs_a_writer() {
    let e = env();
    std::fs::write(
        e.sessions.join(format!("{SID}.jsonl")),
        transcript(SID, "x"),
    )
    .unwrap();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1_700_000_000_000u64}}));
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = e.home.join(format!("tmp/openclaw-{uid}"));
    std::fs::create_dir_all(&dir).unwrap();
    // Every name the gateway could use: one per config path hash; plant a few candidates.
    let config = e.state.join("openclaw.json");
    let hash = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(config.as_os_str().as_encoded_bytes());
        d.iter()
            .take(4)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    mkfifo(&dir.join(format!("gateway.{hash}.lock")));
    let r = run(e
        .cmd("claw-sessions")
        .args(["patch", "main", "--set", "label=\"x\""]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// Items 7 and 10: the signal log's prune throttle lived under `$TMPDIR/clawstate-<uid>/`,
/// where another user's link made root write into their directory. It lives beside the
/// database now, and a planted `$TMPDIR/clawstate-<uid>` is never written into.
#[test]
fn the_prune_throttle_never_writes_under_a_planted_temp_directory() {
    let e = env();
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let theirs = e.outside.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::create_dir_all(e.home.join("tmp")).unwrap();
    symlink(&theirs, e.home.join(format!("tmp/clawstate-{uid}"))).unwrap();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1_700_000_000_000u64}}));
    let r = run(e.cmd("claw-signals").args([
        "record",
        "--session",
        "agent:main:main",
        "--kind",
        "human_direct_message",
        "--via",
        "telegram",
    ]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        std::fs::read_dir(&theirs).unwrap().count(),
        0,
        "wrote into another user's directory"
    );
    let throttle = e.state.join("state/openclaw.sqlite.clawstate-prune");
    let ms: i64 = std::fs::read_to_string(&throttle)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(ms > 0);
}

/// Item 15: with too few file descriptors (`ulimit -n`), every command either succeeds or
/// exits 73 saying "Too many open files", and a failed one changes nothing.
#[test]
fn too_many_open_files_is_73_with_the_reason() {
    use std::os::unix::process::CommandExt;
    let e = env();
    std::fs::write(
        e.sessions.join(format!("{SID}.jsonl")),
        transcript(SID, "x"),
    )
    .unwrap();
    e.store(json!({"agent:main:main": {"sessionId": SID, "updatedAt": support::now_ms()}}));
    let commands: Vec<(&str, Vec<&str>)> = vec![
        ("claw-sessions", vec!["list"]),
        (
            "claw-sessions",
            vec!["patch", "main", "--set", "label=\"y\""],
        ),
        ("claw-sessions", vec!["cleanup", "--enforce"]),
        ("claw-transcript", vec!["cat", "main"]),
        ("claw-transcript", vec!["append", "main", "--text", "x"]),
        ("claw-transcript", vec!["repair", "main"]),
        ("claw-compact", vec!["check", "main"]),
    ];
    for limit in 5..=9u64 {
        for (bin, args) in &commands {
            let before = snapshot(&e.state);
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin(bin));
            c.env_clear()
                .env("HOME", &e.home)
                .env("TZ", "UTC")
                .env("TMPDIR", e.home.join("tmp"))
                .env("OPENCLAW_STATE_DIR", &e.state)
                .args(args);
            // SAFETY: setrlimit is async-signal-safe; nothing else runs before exec.
            unsafe {
                c.pre_exec(move || {
                    let l = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &l) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let o = c.output().unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            let what = format!("ulimit -n {limit}: {bin} {args:?}");
            match o.status.code() {
                Some(0) => {}
                Some(73) => {
                    assert!(stderr.contains("Too many open files"), "{what}: {stderr}");
                    assert_eq!(
                        snapshot(&e.state),
                        before,
                        "{what} failed and changed something"
                    );
                }
                other => panic!("{what}: exit {other:?}: {stderr}"),
            }
        }
    }
}
