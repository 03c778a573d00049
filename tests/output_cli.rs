//! Help and output that agree (issue 28): one rule for text vs data (a table on a
//! terminal, the same rows as NDJSON when piped), `--ndjson` one object per line for every
//! command, colour where it helps (`--color`, `NO_COLOR`), tables fitted to the terminal's
//! width, the gateway's ages and token counts, `--kinds` in the Kind column's words, the
//! peer's listing flags without `list`, and a missing `--store` / `--state-dir` said so.

mod support;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const HOUR: i64 = 3_600_000;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
}

/// Four entries: a direct session 47 hours old with 1,250 of 200k tokens, a group one
/// near its window, a spawned child, and a cron run.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let sessions = home.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let store = json!({
        "agent:main:main": {"sessionId": "s-main", "updatedAt": NOW - 47 * HOUR, "totalTokens": 1250, "contextTokens": 200_000},
        "agent:main:telegram:group:-100": {"sessionId": "s-grp", "updatedAt": NOW - 60_000, "chatType": "group", "totalTokens": 190_000, "contextTokens": 200_000},
        "agent:main:subagent:worker-with-a-rather-long-name-for-the-table": {"sessionId": "s-sub", "updatedAt": NOW - 120_000, "spawnedBy": "agent:main:main", "totalTokens": 12_345},
        "agent:main:cron:nightly": {"sessionId": "s-cron", "updatedAt": NOW - 3 * HOUR}
    });
    std::fs::write(
        sessions.join("sessions.json"),
        serde_json::to_string_pretty(&store).unwrap(),
    )
    .unwrap();
    Fixture { _tmp: tmp, home }
}

fn cmd(home: &Path) -> assert_cmd::Command {
    let mut c = claw("claw-sessions", home);
    c.arg("--now").arg(NOW.to_string());
    c
}

// ---- a terminal -----------------------------------------------------------------------------

/// A raw-mode pseudo-terminal of `cols` columns (0: no size): the master to read, the
/// slave for the child's stdout.
fn pty(cols: u16) -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 24,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors; the null name and termios are allowed and
    // the winsize outlives the call.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here only.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // SAFETY: a zeroed termios is filled by tcgetattr before use.
    unsafe {
        use std::os::fd::AsRawFd;
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t), 0);
    }
    (std::fs::File::from(master), slave)
}

/// Runs `claw-sessions` with stdout and stderr on a terminal of `cols` columns and `env`
/// set; returns what it printed and the exit code.
fn on_terminal(home: &Path, cols: u16, env: &[(&str, &str)], args: &[&str]) -> (String, i32) {
    run_on_terminal("claw-sessions", home, cols, env, args)
}

/// Runs `bin` with stdout and stderr on a terminal of `cols` columns and `env` set.
fn run_on_terminal(
    bin: &str,
    home: &Path,
    cols: u16,
    env: &[(&str, &str)],
    args: &[&str],
) -> (String, i32) {
    let (mut master, slave) = pty(cols);
    let mut c = Command::new(assert_cmd::cargo::cargo_bin(bin));
    c.env_clear()
        .env("HOME", home)
        .env("TZ", "UTC")
        .envs(env.iter().copied())
        .arg("--now")
        .arg(NOW.to_string())
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave));
    let mut child = c.spawn().expect("spawn");
    drop(c);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
        out
    });
    let status = child.wait().expect("wait");
    let out = String::from_utf8(reader.join().unwrap()).expect("UTF-8");
    (out, status.code().unwrap_or(-1))
}

const ESC: char = '\u{1b}';

// ---- text vs data ---------------------------------------------------------------------------

#[test]
fn a_listing_is_a_table_on_a_terminal_and_ndjson_in_a_pipe() {
    let f = fixture();
    let (t, code) = on_terminal(&f.home, 0, &[], &["list"]);
    assert_eq!(code, 0);
    assert!(t.contains("Sessions listed: 4"), "{t}");
    assert!(t.contains("Kind"), "{t}");
    for args in [&[][..], &["list"][..]] {
        let out = cmd(&f.home).args(args).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let keys: Vec<String> = text
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).expect("each piped line is JSON");
                v["key"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(keys.len(), 4, "{text}");
        assert_eq!(keys[0], "agent:main:telegram:group:-100");
        // The same rows as --ndjson.
        let nd = cmd(&f.home).args(["list", "--ndjson"]).output().unwrap();
        assert_eq!(String::from_utf8(nd.stdout).unwrap(), text);
    }
    // --table keeps the table in a pipe (a pager).
    let out = cmd(&f.home).arg("--table").output().unwrap();
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("Sessions listed: 4"));
}

#[test]
fn transcript_cat_is_a_table_on_a_terminal_and_ndjson_in_a_pipe() {
    let f = fixture();
    let file = f.home.join(".openclaw/agents/main/sessions/s-main.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"s-main","timestamp":"2026-05-28T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-05-28T00:00:01.000Z","message":{"role":"user","content":"hello there","timestamp":1}}"#,
            "\n"
        ),
    )
    .unwrap();
    let (t, code) = run_on_terminal("claw-transcript", &f.home, 0, &[], &["cat", "main"]);
    assert_eq!(code, 0, "{t}");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 3, "{t}");
    assert!(lines[0].starts_with("TYPE"), "{t}");
    assert!(
        lines[2].starts_with("message") && lines[2].ends_with("user: hello there"),
        "{t}"
    );
    let out = claw("claw-transcript", &f.home)
        .args(["cat", "main"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["id"], "m1");
}

#[test]
fn ndjson_is_one_object_per_line_for_every_command() {
    let f = fixture();
    for args in [
        &["patch", "main", "--set", "label=x", "--dry-run"][..],
        &["reset", "main", "--dry-run"][..],
        &["resolve", "main"][..],
        &["policy", "main"][..],
        &["show", "main"][..],
    ] {
        let out = cmd(&f.home).args(args).arg("--ndjson").output().unwrap();
        assert!(out.status.success(), "{args:?}: {:?}", out);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{args:?}: one line:\n{text}");
        let v: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["key"], "agent:main:main", "{args:?}");
        // --json is still the one pretty document.
        let out = cmd(&f.home).args(args).arg("--json").output().unwrap();
        let pretty = String::from_utf8(out.stdout).unwrap();
        assert!(pretty.starts_with("{\n  \""), "{args:?}: {pretty}");
        assert_eq!(json_of(pretty.as_bytes())["key"], v["key"]);
    }
}

#[test]
fn ndjson_is_single_line_json_in_every_binary() {
    let f = fixture();
    let file = f.home.join(".openclaw/agents/main/sessions/s-main.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"session","version":3,"id":"s-main","timestamp":"2026-05-28T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-05-28T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-05-28T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":1,"output":1,"totalTokens":2},"stopReason":"stop","timestamp":2}}"#,
            "\n"
        ),
    )
    .unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("claw-sessions", vec!["list"]),
        ("claw-sessions", vec!["delete", "main", "--dry-run"]),
        ("claw-sessions", vec!["relocate", "--dry-run"]),
        ("claw-sessions", vec!["cleanup", "--dry-run"]),
        ("claw-transcript", vec!["context", "main"]),
        ("claw-transcript", vec!["history", "main"]),
        ("claw-transcript", vec!["tree", "main"]),
        ("claw-transcript", vec!["stats", "main"]),
        ("claw-transcript", vec!["cat", "main"]),
        ("claw-compact", vec!["check", "main"]),
        ("claw-compact", vec!["plan", "main"]),
        ("claw-signals", vec!["version", "main"]),
        ("claw-watch", vec!["list"]),
    ];
    for (bin, args) in cases {
        let out = claw(bin, &f.home)
            .arg("--now")
            .arg(NOW.to_string())
            .args(&args)
            .arg("--ndjson")
            .output()
            .unwrap();
        assert!(out.status.success(), "{bin} {args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            let v: Result<Value, _> = serde_json::from_str(line);
            assert!(
                v.is_ok_and(|v| v.is_object()),
                "{bin} {args:?}: not one object per line:\n{text}"
            );
        }
    }
}

// ---- colour and width -----------------------------------------------------------------------

#[test]
fn colour_on_a_terminal_unless_no_color_or_never() {
    let f = fixture();
    let term = [("TERM", "xterm-256color")];
    let (t, _) = on_terminal(&f.home, 0, &term, &["list"]);
    assert!(t.contains(ESC), "coloured on a terminal:\n{t:?}");
    // The 95 % window is red, a direct session's kind cyan.
    assert!(t.contains("\u{1b}[31m190k/200k (95%)\u{1b}[0m"), "{t:?}");
    assert!(t.contains("\u{1b}[36mdirect\u{1b}[0m"), "{t:?}");
    let (t, _) = on_terminal(
        &f.home,
        0,
        &[("TERM", "xterm-256color"), ("NO_COLOR", "1")],
        &["list"],
    );
    assert!(!t.contains(ESC), "NO_COLOR:\n{t:?}");
    let (t, _) = on_terminal(&f.home, 0, &term, &["list", "--color", "never"]);
    assert!(!t.contains(ESC), "--color never:\n{t:?}");
    let (t, _) = on_terminal(&f.home, 0, &[("TERM", "dumb")], &["list"]);
    assert!(!t.contains(ESC), "TERM=dumb:\n{t:?}");
    // Piped: no colour, unless --color always.
    let out = cmd(&f.home).args(["--table"]).output().unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains(ESC));
    let out = cmd(&f.home)
        .args(["--table", "--color", "always"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains(ESC));
    // JSON is never coloured.
    let out = cmd(&f.home)
        .args(["--json", "--color", "always"])
        .output()
        .unwrap();
    json_of(&out.stdout);
}

#[test]
fn check_colours_its_severities_on_a_terminal() {
    let f = fixture();
    std::fs::write(
        f.home.join(".openclaw/agents/main/sessions/s-main.jsonl"),
        concat!(
            r#"{"type":"session","version":3,"id":"s-main","timestamp":"2026-05-28T00:00:00.000Z","cwd":"/w"}"#,
            "\nnot json\n"
        ),
    )
    .unwrap();
    let (t, code) = run_on_terminal(
        "claw-transcript",
        &f.home,
        0,
        &[("TERM", "xterm")],
        &["check", "main"],
    );
    assert_eq!(code, 65, "{t}");
    assert!(
        t.contains("s-main.jsonl:2: \u{1b}[31merror\u{1b}[0m: invalid-json: "),
        "{t:?}"
    );
    let (t, _) = run_on_terminal("claw-transcript", &f.home, 0, &[], &["check", "main"]);
    assert!(
        t.contains("s-main.jsonl:2: error: invalid-json: ") && !t.contains("\u{1b}[31m"),
        "{t:?}"
    );
}

#[test]
fn the_table_fits_the_terminal_width() {
    let f = fixture();
    let (wide, _) = on_terminal(&f.home, 0, &[], &["list"]);
    let widest = wide.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest > 100, "the fixture's table is wide:\n{wide}");
    for (cols, env) in [(90u16, vec![]), (0, vec![("COLUMNS", "90")])] {
        let (t, _) = on_terminal(&f.home, cols, &env, &["list"]);
        let rows: Vec<&str> = t.lines().skip(2).collect();
        assert_eq!(rows.len(), 5, "{t}");
        for l in &rows {
            assert!(l.chars().count() <= 90, "{l:?} is wider than 90:\n{t}");
        }
        assert!(t.contains('…'), "the widest column is cut with …:\n{t}");
        // Still aligned: every row's Age starts under the header's.
        let col = |l: &str, w: &str| l.find(w).map(|i| l[..i].chars().count());
        let age = col(rows[0], "Age").unwrap();
        assert_eq!(col(rows[1], "1m ago"), Some(age), "{t}");
    }
}

/// Issue 28: cleanup's plan table fits the terminal as the listing's does (it was the
/// gateway's fixed columns, keys cut to 26 units, however wide the terminal).
#[test]
fn the_cleanup_table_fits_the_terminal_width() {
    let f = fixture();
    let long = "agent:main:subagent:worker-with-a-rather-long-name-for-the-table";
    let table = |t: &str| -> Vec<String> {
        t.lines()
            .skip_while(|l| !l.starts_with("Planned session actions:"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(String::from)
            .collect()
    };
    // A wide terminal: whole keys.
    let (t, code) = on_terminal(&f.home, 0, &[("COLUMNS", "200")], &["cleanup", "--dry-run"]);
    assert_eq!(code, 0, "{t}");
    assert!(t.contains(long), "{t}");
    // A narrow one: every line fits, the widest column cut with …, still aligned.
    let (t, _) = on_terminal(&f.home, 0, &[("COLUMNS", "60")], &["cleanup", "--dry-run"]);
    let rows = table(&t);
    assert_eq!(rows.len(), 5, "{t}");
    for l in &rows {
        assert!(l.chars().count() <= 60, "{l:?} is wider than 60:\n{t}");
    }
    assert!(t.contains('…'), "{t}");
    let col = |l: &str, w: &str| l.find(w).map(|i| l[..i].chars().count());
    let age = col(&rows[0], "Age").unwrap();
    let main = rows.iter().find(|l| l.contains("agent:main:main")).unwrap();
    assert_eq!(col(main, "47h ago"), Some(age), "{t}");
    // No width (a pipe): the gateway's table as it prints it.
    let out = cmd(&f.home)
        .env_remove("COLUMNS")
        .args(["cleanup", "--dry-run"])
        .output()
        .unwrap();
    let plan = String::from_utf8(out.stdout).unwrap();
    assert!(!plan.contains(long), "{plan}");
    assert!(plan.contains("agent:main:subag...-table"), "{plan}");
}

// ---- ages and tokens ------------------------------------------------------------------------

#[test]
fn ages_and_token_counts_as_the_gateway_writes_them() {
    let f = fixture();
    let (t, _) = on_terminal(&f.home, 0, &[], &["list"]);
    let row = |key: &str| {
        t.lines()
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no {key} in\n{t}"))
            .to_string()
    };
    // formatTimeAgo: hours up to 48, the same as cleanup's table says.
    assert!(row("agent:main:main").contains("47h ago"), "{t}");
    // formatKTokens: toFixed(1) below 10k (1.25 rounds up), none from 10k.
    assert!(row("agent:main:main").contains("1.3k/200k (1%)"), "{t}");
    assert!(row("agent:main:subagent").contains("12k/200k (6%)"), "{t}");
    assert!(
        row("agent:main:cron:nightly").contains("unknown/200k (?%)"),
        "{t}"
    );
    // cleanup's plan says the same age for the same entry.
    let out = cmd(&f.home)
        .args(["cleanup", "--dry-run"])
        .output()
        .unwrap();
    let plan = String::from_utf8(out.stdout).unwrap();
    let line = plan
        .lines()
        .find(|l| l.contains("agent:main:main"))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(line.contains("47h ago"), "{plan}");
}

// ---- selection --------------------------------------------------------------------------------

#[test]
fn kinds_accepts_the_words_of_the_kind_column() {
    let f = fixture();
    let count = |kinds: &str| {
        let out = cmd(&f.home)
            .args(["list", "--json", "--kinds", kinds])
            .output()
            .unwrap();
        assert!(out.status.success(), "--kinds {kinds}: {out:?}");
        let v = json_of(&out.stdout);
        let mut keys: Vec<String> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string())
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(count("direct"), ["agent:main:main"]);
    assert_eq!(
        count("spawn-child"),
        ["agent:main:subagent:worker-with-a-rather-long-name-for-the-table"]
    );
    assert_eq!(
        count("direct,cron"),
        ["agent:main:cron:nightly", "agent:main:main"]
    );
    // The gateway tool's words still work.
    assert_eq!(count("main"), ["agent:main:main"]);
    assert_eq!(count("group"), ["agent:main:telegram:group:-100"]);
    cmd(&f.home)
        .args(["list", "--kinds", "bogus"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("spawn-child"));
}

#[test]
fn the_listing_flags_work_without_list_as_openclaw_sessions() {
    let f = fixture();
    let out = cmd(&f.home)
        .args(["--limit", "2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v = json_of(&out.stdout);
    assert_eq!(
        (v["count"].clone(), v["totalCount"].clone()),
        (json!(2), json!(4))
    );
    let out = cmd(&f.home)
        .args(["--kinds", "cron", "--active", "600", "--verbose", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json_of(&out.stdout)["count"], 1);
    // Given before `list`, they still apply; before another command they are a usage error.
    let out = cmd(&f.home)
        .args(["--limit", "1", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&out.stdout)["count"], 1);
    cmd(&f.home)
        .args(["--limit", "1", "show", "main"])
        .assert()
        .code(2);
}

// ---- a missing store or state dir ---------------------------------------------------------

#[test]
fn a_missing_store_or_state_dir_is_said_so() {
    let f = fixture();
    let nope = f.home.join("nope");
    let store = nope.join("sessions.json");
    for args in [vec!["list"], vec!["list", "--json"], vec![]] {
        let out = cmd(&f.home)
            .arg("--store")
            .arg(&store)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("{}: no such session store", store.display())),
            "{err}"
        );
        assert!(out.stdout.is_empty());
        let out = cmd(&f.home)
            .arg("--state-dir")
            .arg(&nope)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        assert!(String::from_utf8(out.stderr)
            .unwrap()
            .contains(&format!("{}: no such state directory", nope.display())));
    }
    // No state directory where the default points: a warning, an empty listing, exit 0.
    let empty = tempfile::tempdir().unwrap();
    let out = cmd(empty.path()).args(["list", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json_of(&out.stdout)["count"], 0);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("warning: no OpenClaw state directory at")
            && err.contains(&empty.path().join(".openclaw").display().to_string()),
        "{err}"
    );
    // On a terminal the warning is yellow, unless NO_COLOR.
    let term = [("TERM", "xterm")];
    let (t, code) = on_terminal(empty.path(), 0, &term, &["list"]);
    assert_eq!(code, 0);
    assert!(
        t.contains("claw-sessions: \u{1b}[33mwarning\u{1b}[0m: no OpenClaw state directory"),
        "{t:?}"
    );
    let (t, _) = on_terminal(
        empty.path(),
        0,
        &[("TERM", "xterm"), ("NO_COLOR", "1")],
        &["list"],
    );
    assert!(t.contains("claw-sessions: warning: no OpenClaw"), "{t:?}");
    // An existing store is not warned about.
    let out = cmd(&f.home).args(["list", "--json"]).output().unwrap();
    assert!(out.stderr.is_empty(), "{out:?}");
}
