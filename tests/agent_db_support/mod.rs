//! DB fixtures as 2026.9 users get them: a legacy (2026.7) state dir, generated here,
//! imported by openclaw@2026.9.6's own `openclaw doctor --session-sqlite import
//! --session-sqlite-all-agents`.
//!
//! The legacy dir has two agents (`main`, `work`), each with a store and JSONL
//! transcripts holding tool calls and results, a compaction, a branch (two children of one
//! entry), a line with a large inline base64 image, `\u00e9`-style escapes, and entries
//! with and without `totalTokensVersion`. The import (about 6 s) runs once per test run:
//! its result is kept under `CARGO_TARGET_TMPDIR` by a name that carries
//! [`FIXTURE_VERSION`], and every test works on its own copy.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::support::Rng;

use clawstate::js;

/// Bump when the generator changes, so a cached import is rebuilt.
pub const FIXTURE_VERSION: u32 = 1;

/// The agents of the fixture.
pub const AGENTS: [&str; 2] = ["main", "work"];

/// The wrapper of openclaw@2026.9.6, installed on first use; `None` (with a note) when it
/// cannot be had or `CLAWSTATE_SKIP_PEER` is set.
pub fn peer96() -> Option<PathBuf> {
    static PEER: OnceLock<Option<PathBuf>> = OnceLock::new();
    PEER.get_or_init(|| {
        if std::env::var_os("CLAWSTATE_SKIP_PEER").is_some() {
            eprintln!("2026.9.6 differential tests skipped: CLAWSTATE_SKIP_PEER is set");
            return None;
        }
        let home = PathBuf::from(std::env::var_os("HOME")?);
        let dir = home.join(".cache/openclaw-peer-2026.9.6");
        let shared = dir.join("openclaw");
        if shared.is_file() {
            return Some(shared);
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-peer");
        let out = Command::new("bash")
            .arg(script)
            .arg(&dir)
            .env("OPENCLAW_PEER_VERSION", "2026.9.6")
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!(
                "2026.9.6 differential tests skipped: install failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

/// Imports the legacy files under `home` with 9.6's `doctor --session-sqlite import
/// --session-sqlite-all-agents`, panicking with its output (`what` names the import) if
/// it fails.
pub fn doctor_import(peer: &Path, home: &Path, what: &str) {
    let o = run96(
        peer,
        home,
        &[
            "doctor",
            "--session-sqlite",
            "import",
            "--session-sqlite-all-agents",
            "--json",
        ],
    );
    assert!(
        o.status.success(),
        "{what}: 9.6 doctor import failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs 2026.9.6 with `home` as HOME.
pub fn run96(peer: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(peer)
        .env("OPENCLAW_PEER_HOME", home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("peer runs")
}

/// A big inline image: this many bytes of base64.
pub const IMAGE_B64_BYTES: usize = 300_000;

fn ts(ms: i64) -> String {
    js::to_iso_string(ms)
}

/// One generated session: its key, id and JSONL lines.
pub struct GenSession {
    /// The store key.
    pub key: String,
    /// The sessionId.
    pub id: String,
    /// The transcript's lines.
    pub lines: Vec<String>,
}

/// A transcript: header, turns with tool calls, a compaction, a branch, maybe an image.
fn transcript(rng: &mut Rng, id: &str, t0: i64, turns: usize, image: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut t = t0;
    lines.push(
        json!({"type":"session","version":3,"id":id,"timestamp":ts(t),"cwd":"/home/u/project"})
            .to_string(),
    );
    let mut parent: Value = Value::Null;
    let mut n = 0usize;
    let mut next_id = |rng: &mut Rng| {
        n += 1;
        format!("{:08x}", rng.next() as u32 ^ n as u32)
    };
    let mut branch_point = None;
    for turn in 0..turns {
        t += 1000 + rng.below(60_000) as i64;
        let uid = next_id(rng);
        let mut content = vec![
            json!({"type":"text","text":format!("question {turn}: caf\u{e9} na\u{ef}ve \"quoted\" <tag>")}),
        ];
        if image && turn == 1 {
            let data: String = (0..IMAGE_B64_BYTES)
                .map(|i| {
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(i * 7 + (i >> 5)) % 64] as char
                })
                .collect();
            content.push(json!({"type":"image","data":data,"mimeType":"image/png"}));
        }
        let user = json!({"type":"message","id":uid,"parentId":parent,"timestamp":ts(t),
            "message":{"role":"user","content":content,"timestamp":t}});
        // Written as the gateway of 2026.7 wrote it: non-ASCII as \u escapes on some lines.
        let mut line = user.to_string();
        if turn % 2 == 0 {
            line = line
                .replace('\u{e9}', "\\u00e9")
                .replace('\u{ef}', "\\u00ef");
        }
        lines.push(line);
        parent = json!(uid);
        if turn == 1 {
            branch_point = Some(parent.clone());
        }
        t += 500;
        let aid = next_id(rng);
        let call_id = format!("call_{}", rng.below(1_000_000));
        let tool = rng.chance(60);
        let mut acontent = vec![json!({"type":"text","text":format!("answer {turn} \u{2713}")})];
        if tool {
            acontent.push(json!({"type":"toolCall","id":call_id,"name":"exec","arguments":{"command":format!("ls -la /tmp/{turn}")}}));
        }
        lines.push(json!({"type":"message","id":aid,"parentId":parent,"timestamp":ts(t),
            "message":{"role":"assistant","content":acontent,"api":"openai-responses","provider":"openai","model":"gpt-5.5",
              "usage":{"input":100+turn,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120+turn,
                "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
              "stopReason": if tool {"toolUse"} else {"stop"},"timestamp":t}}).to_string());
        parent = json!(aid);
        if tool {
            t += 300;
            let rid = next_id(rng);
            lines.push(json!({"type":"message","id":rid,"parentId":parent,"timestamp":ts(t),
                "message":{"role":"toolResult","toolCallId":call_id,"toolName":"exec",
                  "content":[{"type":"text","text":"total 0\n".repeat(1 + rng.below(200) as usize)}],"isError":false,"timestamp":t}}).to_string());
            parent = json!(rid);
        }
        if turn == turns / 2 && turns > 3 {
            t += 100;
            let cid = next_id(rng);
            lines.push(json!({"type":"compaction","id":cid,"parentId":parent,"timestamp":ts(t),
                "summary":"Summary of the earlier turns: the user asked about caf\u{e9}s.","firstKeptEntryId":parent,"tokensBefore":4242}).to_string());
            parent = json!(cid);
        }
    }
    // A branch: a second child of an early entry (an edited question), and its answer.
    if let Some(bp) = branch_point {
        t += 1000;
        let bid = next_id(rng);
        lines.push(json!({"type":"message","id":bid,"parentId":bp,"timestamp":ts(t),
            "message":{"role":"user","content":[{"type":"text","text":"edited question"}],"timestamp":t}}).to_string());
        let _ = bid;
        // The active leaf stays the main line: the last line is on it again.
        t += 1000;
        let lid = next_id(rng);
        lines.push(json!({"type":"message","id":lid,"parentId":parent,"timestamp":ts(t),
            "message":{"role":"user","content":[{"type":"text","text":"back on the main line"}],"timestamp":t}}).to_string());
    }
    lines
}

/// Generates the legacy state dir under `home/.openclaw`; returns the sessions per agent.
pub fn write_legacy_state(home: &Path, seed: u64, now: i64) -> Vec<(String, Vec<GenSession>)> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for (ai, agent) in AGENTS.iter().enumerate() {
        let dir = home.join(".openclaw/agents").join(agent).join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = serde_json::Map::new();
        let mut sessions = Vec::new();
        let keys = [
            format!("agent:{agent}:main"),
            format!("agent:{agent}:telegram:direct:12{ai}"),
            format!("agent:{agent}:discord:channel:99{ai}"),
            format!("agent:{agent}:cron:nightly"),
            format!("agent:{agent}:subagent:{}", rng.uuid()),
        ];
        for (i, key) in keys.iter().enumerate() {
            let id = rng.uuid();
            let updated = now - (i as i64 + 1) * 3_600_000 - ai as i64 * 60_000;
            let turns = 2 + rng.below(6) as usize;
            let lines = transcript(
                &mut rng,
                &id,
                updated - 86_400_000,
                turns,
                i == 0 && ai == 0,
            );
            let mut e = serde_json::Map::new();
            e.insert("sessionId".into(), json!(id));
            e.insert("updatedAt".into(), json!(updated));
            e.insert(
                "sessionFile".into(),
                json!(dir.join(format!("{id}.jsonl")).to_string_lossy()),
            );
            if i == 1 {
                e.insert("chatType".into(), json!("direct"));
                e.insert(
                    "origin".into(),
                    json!({"provider":"telegram","to":format!("12{ai}")}),
                );
                e.insert("lastChannel".into(), json!("telegram"));
                e.insert("lastTo".into(), json!(format!("12{ai}")));
            }
            if i == 2 {
                e.insert("chatType".into(), json!("channel"));
                e.insert("label".into(), json!("caf\u{e9} \u{2713}"));
            }
            e.insert("inputTokens".into(), json!(1000 + i));
            e.insert("outputTokens".into(), json!(200 + i));
            e.insert("totalTokens".into(), json!(1200 + i));
            e.insert("totalTokensFresh".into(), json!(i != 3));
            if i % 2 == 0 {
                e.insert("totalTokensVersion".into(), json!(1));
            }
            if i == 4 {
                e.insert("spawnedBy".into(), json!(format!("agent:{agent}:main")));
                e.insert("status".into(), json!("done"));
            }
            std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
            store.insert(key.clone(), Value::Object(e));
            sessions.push(GenSession {
                key: key.clone(),
                id,
                lines,
            });
        }
        std::fs::write(
            dir.join("sessions.json"),
            serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
        )
        .unwrap();
        out.push((agent.to_string(), sessions));
    }
    std::fs::write(
        home.join(".openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true},{"id":"work"}]}}"#,
    )
    .unwrap();
    out
}

/// A fixed clock for the fixture: updatedAt values are relative to it.
pub const FIXTURE_NOW: i64 = 1_796_000_000_000;

fn copy_tree(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "cp -a {} {}", from.display(), to.display());
}

/// The imported fixture (a HOME whose `.openclaw` holds the 9.6 agent DBs), built once
/// per test run; `None` when 2026.9.6 is not available.
pub fn imported_template() -> Option<&'static Path> {
    static T: OnceLock<Option<PathBuf>> = OnceLock::new();
    T.get_or_init(|| {
        let peer = peer96()?;
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let done = base.join(format!("agent-db-fixture-v{FIXTURE_VERSION}"));
        if done
            .join(".openclaw/agents/main/agent/openclaw-agent.sqlite")
            .is_file()
        {
            return Some(done);
        }
        let work = base.join(format!(
            "agent-db-fixture-v{FIXTURE_VERSION}.tmp{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
        write_legacy_state(&work, 25, FIXTURE_NOW);
        doctor_import(&peer, &work, "the fixture");
        // Checkpoint is the gateway's business; the copy keeps the WAL as users have it.
        match std::fs::rename(&work, &done) {
            Ok(()) => {}
            Err(_) if done.is_dir() => {
                let _ = std::fs::remove_dir_all(&work);
            }
            Err(e) => panic!("{e}"),
        }
        Some(done)
    })
    .as_deref()
}

/// A private copy of the imported fixture: a HOME for one test.
pub fn imported_home() -> Option<tempfile::TempDir> {
    let t = imported_template()?;
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&t.join(".openclaw"), &tmp.path().join(".openclaw"));
    Some(tmp)
}

/// The agent DB of `agent` under `home`.
pub fn db_of(home: &Path, agent: &str) -> PathBuf {
    home.join(".openclaw/agents")
        .join(agent)
        .join("agent/openclaw-agent.sqlite")
}
