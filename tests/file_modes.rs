//! A rewritten transcript keeps its mode as the gateway keeps it (issue 23, item 10): its
//! repair (`replaceFileAtomic({preserveExistingMode: true})`), its migrations and linear
//! upgrades (`writeFile` over the existing file) and its compactions (an append) leave a
//! 0644 or 0640 transcript as it was; only `sessions compact --max-lines` writes a new
//! file, 0600 (`writeJsonlLines(…, {flag: "wx", mode: 0o600})`).

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use support::claw;

const SID: &str = "0b7c6a52-3f7e-4a56-9d3b-1f2e3d4c5b6a";

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    file: PathBuf,
}

fn env(text: &str, mode: u32) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let state = tmp.path().join("state");
    let sessions = state.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let file = sessions.join(format!("{SID}.jsonl"));
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::write(
        sessions.join("sessions.json"),
        json!({"agent:main:main": {"sessionId": SID, "updatedAt": support::now_ms()}}).to_string(),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        home,
        state,
        file,
    }
}

impl Env {
    fn run(&self, bin: &str, args: &[&str]) {
        let o = claw(bin, &self.home)
            .arg("--state-dir")
            .arg(&self.state)
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{bin} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn header() -> String {
    format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{SID}\",\"timestamp\":\"2026-11-29T21:00:00.000Z\",\"cwd\":\"/\"}}\n")
}

fn row(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let content = if role == "assistant" {
        format!("[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stopReason\":\"stop\",\"usage\":{{\"totalTokens\":90000}}")
    } else {
        format!("\"{text}\"")
    };
    format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-11-29T21:00:01.000Z\",\"message\":{{\"role\":\"{role}\",\"content\":{content},\"timestamp\":1}}}}\n")
}

fn conversation() -> String {
    let mut t = header();
    let mut parent: Option<String> = None;
    for i in 0..6 {
        let (u, a) = (format!("u{i}"), format!("a{i}"));
        t.push_str(&row(
            &u,
            parent.as_deref(),
            "user",
            &"question ".repeat(300),
        ));
        t.push_str(&row(&a, Some(&u), "assistant", "answer"));
        parent = Some(a);
    }
    t
}

#[test]
fn repair_keeps_the_mode() {
    for m in [0o644, 0o640] {
        // A blank user message: the repair pass rewrites it.
        let e = env(&(header() + &row("u1", None, "user", "")), m);
        e.run("claw-transcript", &["repair", "main"]);
        assert_eq!(mode(&e.file), m, "repair of a {m:o} transcript");
    }
}

#[test]
fn migrate_keeps_the_mode() {
    let v1 = format!(
        "{{\"type\":\"session\",\"id\":\"{SID}\",\"timestamp\":\"2026-11-29T21:00:00.000Z\",\"cwd\":\"/\"}}\n{{\"type\":\"message\",\"timestamp\":\"2026-11-29T21:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
    );
    let e = env(&v1, 0o644);
    e.run("claw-transcript", &["migrate", "main"]);
    assert_eq!(mode(&e.file), 0o644);
}

#[test]
fn appending_to_a_linear_file_keeps_the_mode() {
    let linear = format!(
        "{}{{\"type\":\"message\",\"timestamp\":\"2026-11-29T21:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n",
        header()
    );
    let e = env(&linear, 0o640);
    e.run("claw-transcript", &["append", "main", "--text", "more"]);
    assert_eq!(mode(&e.file), 0o640);
}

#[test]
fn compaction_keeps_the_mode_and_truncate_writes_0600() {
    let e = env(&conversation(), 0o644);
    e.run("claw-compact", &["run", "main"]);
    assert_eq!(
        mode(&e.file),
        0o644,
        "a compaction appends to the transcript"
    );
    e.run("claw-compact", &["truncate", "main", "--max-lines", "3"]);
    assert_eq!(
        mode(&e.file),
        0o600,
        "the gateway's --max-lines writes a new 0600 file"
    );
    let bak: Vec<PathBuf> = std::fs::read_dir(e.file.parent().unwrap())
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".jsonl.bak."))
        .collect();
    assert_eq!(bak.len(), 1);
    assert_eq!(mode(&bak[0]), 0o644, "the archive is the file as it was");
}
