//! The exact bytes every command prints (issue 24: the reports became typed, the bytes
//! stayed): each case runs on a fresh fixture in text, `--json` and `--ndjson` mode and
//! its stdout and exit code are compared with `tests/golden/<case>.txt`, written by the
//! code before the change. The temp dir and the random parts of names (a corrupt copy's
//! suffix, a new id, an archive's time stamp) are replaced by placeholders.
//!
//! `GOLDEN_UPDATE=1 cargo test --test output_golden` rewrites the files.

mod support;

use std::path::{Path, PathBuf};

use support::claw;

const NOW: &str = "1780000000000";

/// A state dir with four sessions: a clean version-3 transcript with a fork and a label
/// (`main`), one with a line that is not JSON and a torn tail (`broken`), a version-1
/// transcript (`old`) and one without its header (`headless`); a stale lock on `old`.
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let sessions = home.join(".openclaw/agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let store = r#"{
  "agent:main:main": {"sessionId": "s-main", "updatedAt": 1779990000000, "totalTokens": 1250, "contextTokens": 200000, "label": "Main"},
  "agent:main:broken": {"sessionId": "s-broken", "updatedAt": 1779000000000, "chatType": "group"},
  "agent:main:old": {"sessionId": "s-old", "updatedAt": 1770000000000},
  "agent:main:headless": {"sessionId": "s-headless", "updatedAt": 1770000000000, "sendPolicy": "deny"},
  "agent:main:subagent:w1": {"sessionId": "s-sub", "updatedAt": 1779999000000, "spawnedBy": "agent:main:main"}
}"#;
    std::fs::write(sessions.join("sessions.json"), store).unwrap();
    let main = [
        r#"{"type":"session","version":3,"id":"s-main","timestamp":"2026-05-28T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-05-28T00:00:01.000Z","message":{"role":"user","content":"hi there","timestamp":1779940001000}}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-05-28T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":10,"output":3,"totalTokens":13},"stopReason":"stop","timestamp":1779940002000}}"#,
        r#"{"type":"message","id":"m3","parentId":"m1","timestamp":"2026-05-28T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"another 1.5e3"}],"api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":10,"output":4,"totalTokens":14},"stopReason":"stop","timestamp":1779940003000}}"#,
        r#"{"type":"label","id":"l1","parentId":"m3","timestamp":"2026-05-28T00:00:04.000Z","targetId":"m3","label":"second"}"#,
        r#"{"type":"message","id":"m4","parentId":"l1","timestamp":"2026-05-28T00:00:05.000Z","message":{"role":"user","content":"more","timestamp":1779940005000}}"#,
    ];
    std::fs::write(sessions.join("s-main.jsonl"), main.join("\n") + "\n").unwrap();
    let broken = [
        r#"{"type":"session","version":3,"id":"s-broken","timestamp":"2026-05-28T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"b1","parentId":null,"timestamp":"2026-05-28T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1779940001000}}"#,
        "this is not json",
        r#"{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-05-28T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"openai-responses","provider":"openai","model":"gpt-5.5","usage":{"input":1,"output":1,"totalTokens":2},"stopReason":"stop","timestamp":1779940002000}}"#,
        r#"{"type":"message","id":"b3","par"#,
    ];
    std::fs::write(sessions.join("s-broken.jsonl"), broken.join("\n")).unwrap();
    let old = [
        r#"{"type":"session","id":"s-old","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"old","timestamp":1767225601000}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"hook","timestamp":1767225602000}}"#,
    ];
    std::fs::write(sessions.join("s-old.jsonl"), old.join("\n") + "\n").unwrap();
    let headless = [
        r#"{"type":"message","id":"h1","parentId":null,"timestamp":"2026-05-28T00:00:01.000Z","message":{"role":"user","content":"no header","timestamp":1779940001000}}"#,
    ];
    std::fs::write(
        sessions.join("s-headless.jsonl"),
        headless.join("\n") + "\n",
    )
    .unwrap();
    std::fs::write(
        sessions.join("s-old.jsonl.lock"),
        "{\n  \"pid\": 2147480000,\n  \"createdAt\": \"2026-01-01T00:00:00.000Z\",\n  \"maxHoldMs\": 300000\n}\n",
    )
    .unwrap();
    (tmp, home)
}

/// The cases: a name, a binary, its arguments.
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "transcript-repair",
        "claw-transcript",
        &["repair", "agent:main:broken"],
    ),
    (
        "transcript-repair-dry",
        "claw-transcript",
        &["repair", "agent:main:broken", "--dry-run"],
    ),
    (
        "transcript-repair-clean",
        "claw-transcript",
        &["repair", "main"],
    ),
    (
        "transcript-repair-torn",
        "claw-transcript",
        &["repair", "agent:main:broken", "--trim-torn-tail"],
    ),
    (
        "transcript-repair-torn-dry",
        "claw-transcript",
        &[
            "repair",
            "agent:main:broken",
            "--trim-torn-tail",
            "--dry-run",
        ],
    ),
    (
        "transcript-repair-torn-none",
        "claw-transcript",
        &["repair", "main", "--trim-torn-tail"],
    ),
    (
        "transcript-repair-headless",
        "claw-transcript",
        &["repair", "agent:main:headless"],
    ),
    (
        "transcript-migrate",
        "claw-transcript",
        &["migrate", "agent:main:old"],
    ),
    (
        "transcript-migrate-dry",
        "claw-transcript",
        &["migrate", "agent:main:old", "--dry-run"],
    ),
    (
        "transcript-migrate-current",
        "claw-transcript",
        &["migrate", "main"],
    ),
    (
        "transcript-migrate-headless",
        "claw-transcript",
        &["migrate", "agent:main:headless", "--dry-run"],
    ),
    (
        "transcript-migrate-broken",
        "claw-transcript",
        &["migrate", "agent:main:broken"],
    ),
    (
        "transcript-append",
        "claw-transcript",
        &[
            "append",
            "main",
            "--role",
            "assistant",
            "--text",
            "added",
            "--dry-run",
        ],
    ),
    (
        "transcript-lock-status",
        "claw-transcript",
        &["lock", "status", "agent:main:old"],
    ),
    (
        "transcript-lock-status-all",
        "claw-transcript",
        &["lock", "status", "--all"],
    ),
    (
        "transcript-lock-break",
        "claw-transcript",
        &["lock", "break", "agent:main:old"],
    ),
    (
        "transcript-lock-break-dry",
        "claw-transcript",
        &["lock", "break", "agent:main:old", "--dry-run"],
    ),
    ("transcript-tree", "claw-transcript", &["tree", "main"]),
    (
        "transcript-context",
        "claw-transcript",
        &["context", "main"],
    ),
    (
        "transcript-context-raw",
        "claw-transcript",
        &["context", "main", "--raw"],
    ),
    ("transcript-stats", "claw-transcript", &["stats", "main"]),
    (
        "transcript-history",
        "claw-transcript",
        &["history", "main"],
    ),
    (
        "transcript-history-page",
        "claw-transcript",
        &["history", "main", "--page", "--offset", "1", "--limit", "2"],
    ),
    (
        "transcript-history-offset",
        "claw-transcript",
        &["history", "main", "--offset", "1", "--limit", "2"],
    ),
    (
        "transcript-tail",
        "claw-transcript",
        &["tail", "main", "-n", "2"],
    ),
    (
        "transcript-cat",
        "claw-transcript",
        &["cat", "main", "--branch"],
    ),
    (
        "transcript-check",
        "claw-transcript",
        &["check", "main", "agent:main:broken"],
    ),
    (
        "transcript-check-all",
        "claw-transcript",
        &["check", "--all"],
    ),
    ("sessions-list", "claw-sessions", &["list"]),
    ("sessions-show", "claw-sessions", &["show", "main"]),
    (
        "sessions-show-missing",
        "claw-sessions",
        &["show", "agent:main:subagent:w1"],
    ),
    (
        "sessions-patch",
        "claw-sessions",
        &["patch", "main", "--set", "label=x", "--dry-run"],
    ),
    (
        "sessions-patch-write",
        "claw-sessions",
        &[
            "patch",
            "main",
            "--set",
            "label=x",
            "--unset",
            "contextTokens",
        ],
    ),
    (
        "sessions-patch-batch",
        "claw-sessions",
        &[
            "patch",
            "main",
            "agent:main:old",
            "--set",
            "label=x",
            "--dry-run",
        ],
    ),
    (
        "sessions-reset",
        "claw-sessions",
        &["reset", "main", "--dry-run"],
    ),
    (
        "sessions-reset-write",
        "claw-sessions",
        &["reset", "agent:main:old"],
    ),
    (
        "sessions-delete",
        "claw-sessions",
        &["delete", "agent:main:old", "--dry-run"],
    ),
    (
        "sessions-delete-write",
        "claw-sessions",
        &["delete", "agent:main:old"],
    ),
    (
        "sessions-relocate",
        "claw-sessions",
        &["relocate", "--dry-run"],
    ),
    ("sessions-resolve", "claw-sessions", &["resolve", "main"]),
    ("sessions-policy", "claw-sessions", &["policy", "main"]),
    (
        "sessions-policy-deny",
        "claw-sessions",
        &["policy", "agent:main:headless"],
    ),
    ("sessions-doctor", "claw-sessions", &["doctor"]),
    (
        "sessions-cleanup",
        "claw-sessions",
        &["cleanup", "--dry-run"],
    ),
    ("compact-check", "claw-compact", &["check", "main"]),
    ("compact-plan", "claw-compact", &["plan", "main"]),
    ("compact-run", "claw-compact", &["run", "main", "--dry-run"]),
    (
        "compact-truncate",
        "claw-compact",
        &["truncate", "main", "--max-lines", "2", "--dry-run"],
    ),
    (
        "compact-auto",
        "claw-compact",
        &["auto", "--all", "--dry-run"],
    ),
];

/// Output with the temp dir and the random parts of generated names replaced.
fn normalise(text: &str, home: &Path) -> String {
    let real = home.canonicalize().unwrap();
    let mut s = text
        .replace(&*real.to_string_lossy(), "<HOME>")
        .replace(&*home.to_string_lossy(), "<HOME>");
    // `.corrupt-<ts>-<8hex>.jsonl`: the hex is random.
    let mut from = 0;
    while let Some(at) = s[from..].find(".corrupt-").map(|i| from + i) {
        let rest = &s[at..];
        let end = rest.find(".jsonl").unwrap_or(rest.len());
        s.replace_range(at..at + end, ".corrupt-<SUFFIX>");
        from = at + 1;
    }
    short_ids_replaced(&archive_stamps_replaced(&uuids_replaced(&s)))
}

/// `s` with every quoted 8-hex-digit string (a new entry id) replaced by `"<ID>"`.
fn short_ids_replaced(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let fits = b.len() - i >= 10
            && b[i] == b'"'
            && b[i + 9] == b'"'
            && b[i + 1..i + 9]
                .iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
        if fits {
            out.push_str("\"<ID>\"");
            i += 10;
        } else {
            let len = s[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&s[i..i + len]);
            i += len;
        }
    }
    out
}

/// `s` with every archive name's time stamp (`2026-12-01T19-35-14.514Z`, from the real
/// clock) replaced by `<STAMP>`.
fn archive_stamps_replaced(s: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd-dd-dd.dddZ";
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let fits = b.len() - i >= SHAPE.len()
            && SHAPE.iter().zip(&b[i..]).all(|(&p, &c)| match p {
                b'd' => c.is_ascii_digit(),
                _ => p == c,
            });
        if fits {
            out.push_str("<STAMP>");
            i += SHAPE.len();
        } else {
            let len = s[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&s[i..i + len]);
            i += len;
        }
    }
    out
}

/// `s` with every UUID (`8-4-4-4-12` hex digits: a new message or session id) replaced
/// by `<UUID>`.
fn uuids_replaced(s: &str) -> String {
    let shape = [8, 4, 4, 4, 12];
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    'scan: while i < b.len() {
        let mut j = i;
        for (k, &n) in shape.iter().enumerate() {
            let run = b[j..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
            if run != n || (k < 4 && b.get(j + n) != Some(&b'-')) {
                let len = s[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&s[i..i + len]);
                i += len;
                continue 'scan;
            }
            j += n + usize::from(k < 4);
        }
        out.push_str("<UUID>");
        i = j;
    }
    out
}

/// One case in all three modes, as the golden file holds it.
fn run_case(bin: &str, args: &[&str]) -> String {
    let mut doc = String::new();
    for mode in ["text", "--json", "--ndjson"] {
        let (_tmp, home) = fixture();
        let mut c = claw(bin, &home);
        c.arg("--now").arg(NOW);
        c.args(args);
        if mode != "text" {
            c.arg(mode);
        }
        let out = c.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        doc.push_str(&format!(
            "## {mode} (exit {})\n{}",
            out.status.code().unwrap_or(-1),
            normalise(&stdout, &home)
        ));
        if !doc.ends_with('\n') {
            doc.push_str("\n## (no final newline)\n");
        }
    }
    doc
}

#[test]
fn every_command_prints_the_bytes_it_printed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("GOLDEN_UPDATE").is_some();
    let mut failed = Vec::new();
    for (name, bin, args) in CASES {
        let got = run_case(bin, args);
        let file = dir.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&file, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e} (GOLDEN_UPDATE=1 writes it)", file.display()));
        if got != want {
            eprintln!("--- {name}: want\n{want}\n--- got\n{got}");
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "output changed: {failed:?}");
}

/// Every `--ndjson` output is one JSON object per line (never a pretty document).
#[test]
fn every_ndjson_output_is_one_compact_object_per_line() {
    for (name, bin, args) in CASES {
        let (_tmp, home) = fixture();
        let out = claw(bin, &home)
            .arg("--now")
            .arg(NOW)
            .args(args.iter())
            .arg("--ndjson")
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{name}: not one object per line ({e}):\n{text}"));
            assert!(v.is_object(), "{name}: not an object: {line}");
        }
    }
}
