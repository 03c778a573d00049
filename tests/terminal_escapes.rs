//! Data never reaches a terminal raw (issue 22 item 12): keys, labels, models, message
//! text, summaries and paths that carry ESC / OSC / BEL / CSI, the C1 CSI U+009B or a bidi
//! override are printed escaped (`\u001b`, `\u0007`, `\u009b`, `\u202e`) by every binary,
//! on stdout and stderr, with stdout a real terminal (a pty) and piped; `--json` stays
//! exact when piped and JSON-valid on a terminal; data never breaks a table's layout.

mod support;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const NOW: i64 = 1_780_000_000_000;
/// A window title, an OSC 52 clipboard write, a CSI (conceal), the C1 CSI (a cursor
/// position report request) and a right-to-left override; lowercase, as signal keys are.
const NASTY: &str = "\u{1b}]0;pwned\u{7}\u{1b}]52;c;dw==\u{7}\u{1b}[8m\u{9b}6n\u{202e}";
/// How [`NASTY`] is shown.
const SHOWN: &str = "\\u001b]0;pwned\\u0007\\u001b]52;c;dw==\\u0007\\u001b[8m\\u009b6n\\u202e";
const SID: &str = "11111111-2222-4333-8444-555555555555";
const SID2: &str = "22222222-2222-4333-8444-555555555555";

// ---- running a binary on a terminal -------------------------------------------------------

/// What one run printed.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

/// A pseudo-terminal in raw mode (no `\r\n` translation): the master to read, the slave
/// to hand to the child.
fn pty() -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors; the null name, termios and winsize are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here only.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // SAFETY: a zeroed termios is filled by tcgetattr before use.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave_raw(&slave), &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(slave_raw(&slave), libc::TCSANOW, &t), 0);
    }
    (std::fs::File::from(master), slave)
}

fn slave_raw(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

/// Reads a pty master until every slave is closed (EIO), at most 64 MiB.
fn read_all(mut master: std::fs::File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    while out.len() < 64 << 20 {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO: the child (the last holder of the slave) has exited.
            Err(_) => break,
        }
    }
    out
}

/// The hermetic command of `support::claw`, as a std command.
fn command(bin: &str, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin(bin));
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.join("tmp"))
        .arg("--now")
        .arg(NOW.to_string())
        .args(args)
        .stdin(Stdio::null());
    std::fs::create_dir_all(home.join("tmp")).ok();
    c
}

/// Runs with stdout and stderr each on its own terminal.
fn on_terminal(bin: &str, home: &Path, args: &[&str]) -> Run {
    let (out_master, out_slave) = pty();
    let (err_master, err_slave) = pty();
    let mut c = command(bin, home, args);
    c.stdout(Stdio::from(out_slave))
        .stderr(Stdio::from(err_slave));
    let mut child = c.spawn().expect("spawn");
    // The parent's copies of the slaves go with the command: EOF comes when the child exits.
    drop(c);
    let out = std::thread::spawn(move || read_all(out_master));
    let err = std::thread::spawn(move || read_all(err_master));
    // Bounded: a child that never exits is killed (and the test fails on its status).
    let mut status = None;
    for _ in 0..6000 {
        if let Some(s) = child.try_wait().expect("wait") {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if status.is_none() {
        child.kill().ok();
        status = child.wait().ok();
    }
    let text = |b: Vec<u8>| String::from_utf8(b).expect("terminal output is UTF-8");
    Run {
        stdout: text(out.join().unwrap()),
        stderr: text(err.join().unwrap()),
        code: status.and_then(|s| s.code()),
    }
}

/// Runs with stdout and stderr piped.
fn piped(bin: &str, home: &Path, args: &[&str]) -> Run {
    let o = command(bin, home, args).output().expect("run");
    Run {
        stdout: String::from_utf8(o.stdout).expect("UTF-8"),
        stderr: String::from_utf8(o.stderr).expect("UTF-8"),
        code: o.status.code(),
    }
}

/// Fails when `text` holds a character that drives a terminal or reorders text (newline
/// and tab are layout).
fn assert_terminal_safe(what: &str, text: &str) {
    let bad: Vec<String> = text
        .chars()
        .filter(|&c| {
            c != '\n'
                && c != '\t'
                && (c.is_control()
                    || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw {bad:?} reached the output:\n{text:?}"
    );
}

// ---- fixtures -------------------------------------------------------------------------------

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    sessions: PathBuf,
}

fn evil_key() -> String {
    format!("agent:main:evil{NASTY}")
}

/// A watcher of an agent without a store here, so its notice counts as delivered (a
/// watcher missing from an existing store gets none: `signals::delivery`).
fn watcher_key() -> String {
    format!("agent:ops:w{NASTY}")
}

/// A store whose first key, label, model and levels carry [`NASTY`], a key with a
/// newline whose `sessionFile` carries it too; a transcript whose message text, sender
/// label, tree label and model change carry it; a signal log whose session key and
/// summary carry it, and a watcher cursor on that session.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let sessions = home.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut store = serde_json::Map::new();
    store.insert(
        evil_key(),
        json!({"sessionId": SID, "updatedAt": NOW - 1000, "label": format!("lab{NASTY}"),
               "model": format!("mod{NASTY}"), "thinkingLevel": format!("hi{NASTY}"), "totalTokens": 5}),
    );
    store.insert(
        "agent:main:two\nlines".into(),
        json!({"sessionId": SID2, "updatedAt": NOW - 2000, "sessionFile": format!("f{NASTY}.jsonl")}),
    );
    std::fs::write(
        sessions.join("sessions.json"),
        serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
    )
    .unwrap();
    let rows = [
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-05-28T20:26:00.000Z","cwd":"/tmp"}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-05-28T20:26:00.000Z",
               "message":{"role":"user","content":format!("hello{NASTY}\nsecond\rline"),"timestamp":NOW - 5000,
                          "senderLabel":format!("snd{NASTY}")}}),
        json!({"type":"label","id":"l1","parentId":"a1","timestamp":"2026-05-28T20:26:00.000Z","targetId":"a1","label":format!("lbl{NASTY}")}),
        json!({"type":"model_change","id":"m1","parentId":"l1","timestamp":"2026-05-28T20:26:00.000Z","provider":format!("p{NASTY}"),"modelId":format!("m{NASTY}")}),
        json!({"type":"message","id":"a2","parentId":"m1","timestamp":"2026-05-28T20:26:00.000Z",
               "message":{"role":"assistant","content":[{"type":"text","text":format!("reply{NASTY}")}],
                          "provider":"p","model":format!("m{NASTY}"),"timestamp":NOW - 4000}}),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(sessions.join(format!("{SID}.jsonl")), text).unwrap();
    let f = Fixture {
        _tmp: tmp,
        home,
        sessions,
    };
    let key = evil_key();
    let summary = format!("sum{NASTY}\nforged line");
    let r = piped(
        "claw-signals",
        &f.home,
        &[
            "record",
            "--session",
            &key,
            "--kind",
            "goal_changed",
            "--summary",
            &summary,
            "--json",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let w = watcher_key();
    let r = piped("claw-watch", &f.home, &["add", &w, &key, "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let r = piped(
        "claw-signals",
        &f.home,
        &[
            "record",
            "--session",
            &key,
            "--kind",
            "goal_changed",
            "--summary",
            "again",
            "--json",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    f
}

/// The text commands of every binary that print data from the fixture, with what each
/// must show escaped.
fn text_commands() -> Vec<(&'static str, Vec<String>, &'static str)> {
    let k = evil_key();
    let w = watcher_key();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        // Piped, a listing is NDJSON (exact data): --table keeps the table to compare.
        ("claw-sessions", s(&["list", "--table"]), "agent:main:evil"),
        (
            "claw-sessions",
            s(&["show", &k]),
            "Key:        agent:main:evil",
        ),
        (
            "claw-sessions",
            s(&["show", "agent:main:two\nlines"]),
            "agent:main:two\\nlines",
        ),
        ("claw-sessions", s(&["resolve", &k]), "agent:main:evil"),
        ("claw-sessions", s(&["policy", &k]), "agent:main:evil"),
        (
            "claw-sessions",
            s(&["patch", &k, "--set", "note=x", "--dry-run"]),
            "would patch agent:main:evil",
        ),
        (
            "claw-sessions",
            s(&["reset", &k, "--dry-run"]),
            "would reset agent:main:evil",
        ),
        (
            "claw-sessions",
            s(&["delete", &k, "--dry-run"]),
            "would delete agent:main:evil",
        ),
        (
            "claw-sessions",
            s(&["cleanup", "--dry-run", "--enforce"]),
            "Summary by Label",
        ),
        ("claw-transcript", s(&["tail", &k]), "user (snd"),
        ("claw-transcript", s(&["history", &k]), "hello"),
        ("claw-transcript", s(&["tree", &k]), "[lbl"),
        ("claw-transcript", s(&["stats", &k]), "path"),
        (
            "claw-transcript",
            s(&["lock", "status", "agent:main:two\nlines"]),
            "not locked",
        ),
        ("claw-signals", s(&["version", &k]), "agent:main:evil"),
        (
            "claw-signals",
            s(&["forget", &k, "--dry-run"]),
            "would forget agent:main:evil",
        ),
        ("claw-watch", s(&["pending"]), "agent:main:evil"),
        ("claw-watch", s(&["reset", &w, "--dry-run"]), "agent:ops:w"),
        ("claw-compact", s(&["check", &k]), "context tokens"),
    ]
}

// ---- the tests ------------------------------------------------------------------------------

#[test]
fn text_output_on_a_terminal_shows_data_escaped() {
    let f = fixture();
    for (bin, args, marker) in text_commands() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let what = format!("{bin} {args:?}");
        let t = on_terminal(bin, &f.home, &args);
        assert_terminal_safe(&format!("{what} (stdout)"), &t.stdout);
        assert_terminal_safe(&format!("{what} (stderr)"), &t.stderr);
        assert!(
            t.stdout.contains(marker),
            "{what}: no {marker:?} in\n{}",
            t.stdout
        );
        if !matches!(args[0], "stats" | "check") {
            assert!(
                t.stdout.contains(SHOWN),
                "{what}: the data is not shown escaped:\n{}",
                t.stdout
            );
        }
    }
}

#[test]
fn piped_text_output_is_escaped_the_same_way() {
    // Text mode is for reading: a pipe (a pager, a cron mail, a file read later) gets
    // the same escaped text as the terminal; the exact bytes are in --json.
    let f = fixture();
    for (bin, args, _) in text_commands() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let what = format!("{bin} {args:?}");
        let t = on_terminal(bin, &f.home, &args);
        let p = piped(bin, &f.home, &args);
        assert_eq!(p.code, t.code, "{what}");
        // A reset draws a new sessionId each time: compare up to it.
        let upto = |s: &str| match args[0] {
            "reset" => s.split(" -> ").next().unwrap_or("").to_string(),
            _ => s.to_string(),
        };
        assert_eq!(
            upto(&p.stdout),
            upto(&t.stdout),
            "{what}: piped text differs from the terminal's"
        );
        assert_terminal_safe(&format!("{what} (piped)"), &p.stdout);
        assert_terminal_safe(&format!("{what} (piped stderr)"), &p.stderr);
    }
}

#[test]
fn messages_keep_their_lines_and_indent_but_escape_other_controls() {
    let f = fixture();
    let k = evil_key();
    for cmd in ["tail", "history"] {
        let t = on_terminal("claw-transcript", &f.home, &[cmd, &k]);
        assert_eq!(t.code, Some(0), "{}", t.stderr);
        assert!(
            t.stdout.contains(&format!(
                "user (snd{SHOWN}): hello{SHOWN}\n    second\\rline\n"
            )),
            "{cmd}:\n{}",
            t.stdout
        );
        assert!(
            t.stdout.contains(&format!("assistant: reply{SHOWN}\n")),
            "{cmd}:\n{}",
            t.stdout
        );
    }
}

#[test]
fn tree_labels_models_and_summaries_are_escaped_on_their_line() {
    let f = fixture();
    let t = on_terminal("claw-transcript", &f.home, &["tree", &evil_key()]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert_terminal_safe("tree", &t.stdout);
    let lines: Vec<&str> = t.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "one line per entry:\n{}", t.stdout);
    assert_eq!(
        lines[0],
        format!("a1 user: hello{SHOWN} second\\rline [lbl{SHOWN}]")
    );
    assert_eq!(lines[2], format!("m1 model p{SHOWN}/m{SHOWN}"));
}

#[test]
fn a_table_is_never_broken_by_data() {
    let f = fixture();
    for run in [
        on_terminal("claw-sessions", &f.home, &["list"]),
        piped("claw-sessions", &f.home, &["list", "--table"]),
    ] {
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let lines: Vec<&str> = run.stdout.lines().collect();
        // Store line, count line, header, two rows.
        assert_eq!(lines.len(), 5, "{}", run.stdout);
        assert!(
            lines[4].contains("agent:main:two\\nlines"),
            "{}",
            run.stdout
        );
        assert!(lines[3].contains(&format!("mod{SHOWN}")), "{}", run.stdout);
        assert!(
            lines[3].contains(&format!("thinking:hi{SHOWN}")),
            "{}",
            run.stdout
        );
        let header = lines[2];
        let col = header.find("Age").unwrap();
        for row in &lines[3..] {
            assert!(
                row.chars().count() > col && row.chars().nth(col - 2) == Some(' '),
                "columns stay aligned:\n{}",
                run.stdout
            );
        }
    }
    // The signal list is a table on a terminal: one row per event, summaries escaped.
    let t = on_terminal("claw-signals", &f.home, &["list"]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert_terminal_safe("signals list", &t.stdout);
    let lines: Vec<&str> = t.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "header and two events:\n{}", t.stdout);
    assert!(
        lines[1].contains(&format!("sum{SHOWN}\\nforged line")),
        "{}",
        t.stdout
    );
    assert!(
        lines[1].contains(&format!("agent:main:evil{SHOWN}")),
        "{}",
        t.stdout
    );
    let t = on_terminal("claw-watch", &f.home, &["list"]);
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert_terminal_safe("watch list", &t.stdout);
    assert_eq!(t.stdout.lines().count(), 2, "{}", t.stdout);
    assert!(
        t.stdout.contains(&format!("agent:ops:w{SHOWN}")),
        "{}",
        t.stdout
    );
}

#[test]
fn recording_prints_the_event_line_escaped() {
    let f = fixture();
    let k = evil_key();
    let summary = format!("s{NASTY}");
    let t = on_terminal(
        "claw-signals",
        &f.home,
        &[
            "record",
            "--session",
            &k,
            "--kind",
            "goal_changed",
            "--summary",
            &summary,
        ],
    );
    assert_eq!(t.code, Some(0), "{}", t.stderr);
    assert_terminal_safe("record", &t.stdout);
    assert!(
        t.stdout
            .contains(&format!("agent:main:evil{SHOWN} [main] by ")),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout
            .ends_with(&format!(": s{SHOWN} (1 watcher notices pending)\n")),
        "{}",
        t.stdout
    );
}

#[test]
fn json_is_exact_when_piped_and_only_json_escaped_on_a_terminal() {
    let f = fixture();
    let k = evil_key();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("claw-sessions", vec!["list", "--json"]),
        ("claw-sessions", vec!["show", &k, "--json"]),
        ("claw-sessions", vec!["list", "--ndjson"]),
        ("claw-transcript", vec!["history", &k, "--json"]),
        ("claw-transcript", vec!["tree", &k, "--json"]),
        ("claw-transcript", vec!["tail", &k, "--ndjson"]),
        ("claw-transcript", vec!["cat", &k, "--ndjson"]),
        ("claw-signals", vec!["list", "--json"]),
        ("claw-watch", vec!["list", "--json"]),
        ("claw-watch", vec!["pending", "--json"]),
    ];
    for (bin, args) in cases {
        let what = format!("{bin} {args:?}");
        let p = piped(bin, &f.home, &args);
        let t = on_terminal(bin, &f.home, &args);
        assert_eq!(p.code, Some(0), "{what}: {}", p.stderr);
        assert_eq!(t.code, Some(0), "{what}: {}", t.stderr);
        // Piped: the JSON as it always was, C0 controls JSON-escaped, the rest raw as
        // JSON.stringify writes them.
        assert!(
            p.stdout.contains("\\u001b]0;pwned\\u0007"),
            "{what}: {}",
            p.stdout
        );
        assert!(
            p.stdout.contains("\u{9b}6n\u{202e}"),
            "{what}: {}",
            p.stdout
        );
        // On a terminal: no raw control, and the same JSON values.
        assert_terminal_safe(&what, &t.stdout);
        assert!(
            t.stdout.contains("\\u009b6n\\u202e"),
            "{what}: {}",
            t.stdout
        );
        let values = |s: &str| -> Vec<Value> {
            serde_json::Deserializer::from_str(s)
                .into_iter::<Value>()
                .map(|v| v.unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {s}")))
                .collect()
        };
        assert_eq!(values(&t.stdout), values(&p.stdout), "{what}");
        assert_eq!(
            t.stdout,
            p.stdout
                .replace('\u{9b}', "\\u009b")
                .replace('\u{202e}', "\\u202e"),
            "{what}: only the escapes differ"
        );
    }
}

#[test]
fn stderr_messages_show_data_escaped() {
    let f = fixture();
    let k2 = "agent:main:two\nlines";
    // An error naming a path from data (the entry's sessionFile), stderr a terminal.
    for r in [
        on_terminal("claw-transcript", &f.home, &["tail", k2]),
        piped("claw-transcript", &f.home, &["tail", k2]),
    ] {
        assert_eq!(r.code, Some(3), "{}", r.stderr);
        assert_terminal_safe("tail error", &r.stderr);
        assert!(
            r.stderr
                .contains(&format!("f{SHOWN}.jsonl: no such transcript")),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    // A warning naming it (a line that is not JSON), and the rows on stdout.
    std::fs::write(
        f.sessions.join(format!("f{NASTY}.jsonl")),
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{SID2}\"}}\nnot json{NASTY}\n"),
    )
    .unwrap();
    for r in [
        on_terminal("claw-transcript", &f.home, &["cat", k2]),
        piped("claw-transcript", &f.home, &["cat", k2]),
    ] {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_terminal_safe("cat warning", &r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "warning: {}",
                f.sessions
                    .join(format!("f{SHOWN}.jsonl:2: skipped"))
                    .display()
            )),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    // A progress message naming a key: `record --if-watched` that records nothing.
    let r = on_terminal(
        "claw-signals",
        &f.home,
        &[
            "record",
            "--session",
            &format!("agent:main:x{NASTY}"),
            "--kind",
            "human_direct_message",
            "--actor",
            "human",
            "--if-watched",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_terminal_safe("not recorded", &r.stderr);
    assert!(
        r.stderr.contains(&format!("agent:main:x{SHOWN}")),
        "{}",
        r.stderr
    );
}
