//! Legacy (2026.7) state dirs with the cases users of `doctor --session-sqlite import` hit,
//! and a canonical dump of agent databases to compare two imports of the same dir.
//!
//! [`write_legacy`] writes `<home>/.openclaw` with two agents (`main`, `work`), `sessions`
//! sessions each: tool calls and results, a compaction, a branch, `\u00e9` escapes, one big
//! base64 image, a torn last line, a trajectory sidecar and its pointer, an orphan
//! transcript, reset and deleted archives (`*.jsonl.reset.<ts>`, `*.jsonl.deleted.<ts>`),
//! and entries with a delivery to fold. [`canonical_dump`] is every row of every table
//! (FTS through its content table), sorted, with the volatile columns — the ones 9.6 fills
//! from the clock or a random generator — named in [`VOLATILE`] and masked; nothing else.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::{json, Value};

use crate::support::Rng;

/// The agents of a generated dir.
pub const AGENTS: [&str; 2] = ["main", "work"];

/// A fixed clock: the entries' `updatedAt` are relative to it.
pub const NOW: i64 = 1_796_000_000_000;

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Sessions per agent (at least 1).
    pub sessions: usize,
    /// Turns per session, at most (each turn: a user line, an answer, maybe a tool result).
    pub max_turns: usize,
    /// Bytes of base64 of the one big image (in `main`'s first session); 0 for none.
    pub image_bytes: usize,
    /// Bytes of tool output per tool result, at most.
    pub tool_output: usize,
    /// The edge cases (torn tail, sidecar, orphan, archives).
    pub edge_cases: bool,
}

impl Shape {
    /// A dir small enough for a test run (about a dozen sessions per agent).
    pub fn small() -> Shape {
        Shape {
            sessions: 8,
            max_turns: 6,
            image_bytes: 200_000,
            tool_output: 1600,
            edge_cases: true,
        }
    }
}

fn ts(ms: i64) -> String {
    clawstate::js::to_iso_string(ms)
}

fn image(n: usize) -> String {
    (0..n)
        .map(|i| {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                [(i * 7 + (i >> 5)) % 64] as char
        })
        .collect()
}

/// The lines of one transcript.
pub fn transcript(
    rng: &mut Rng,
    id: &str,
    t0: i64,
    turns: usize,
    image_bytes: usize,
    tool_output: usize,
) -> Vec<String> {
    let mut lines = vec![
        json!({"type":"session","version":3,"id":id,"timestamp":ts(t0),"cwd":"/home/u/project"})
            .to_string(),
    ];
    let mut t = t0;
    let mut parent = Value::Null;
    let mut n = 0u32;
    let mut next_id = |rng: &mut Rng| {
        n += 1;
        format!("{:08x}", (rng.next() as u32) ^ n)
    };
    let mut branch_point = None;
    for turn in 0..turns {
        t += 1000 + rng.below(60_000) as i64;
        let uid = next_id(rng);
        let mut content = vec![
            json!({"type":"text","text":format!("question {turn}: caf\u{e9} na\u{ef}ve \"quoted\" <tag>")}),
        ];
        if image_bytes > 0 && turn == 1 {
            content.push(json!({"type":"image","data":image(image_bytes),"mimeType":"image/png"}));
        }
        let mut line = json!({"type":"message","id":uid,"parentId":parent,"timestamp":ts(t),
            "message":{"role":"user","content":content,"timestamp":t}})
        .to_string();
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
        let call = format!("call_{}", rng.below(1_000_000));
        let tool = rng.chance(60);
        let mut acontent = vec![json!({"type":"text","text":format!("answer {turn} \u{2713}")})];
        if tool {
            acontent.push(json!({"type":"toolCall","id":call,"name":"exec","arguments":{"command":format!("ls -la /tmp/{turn}")}}));
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
            let reps = 1 + rng.below((tool_output / 8).max(1) as u64) as usize;
            lines.push(json!({"type":"message","id":rid,"parentId":parent,"timestamp":ts(t),
                "message":{"role":"toolResult","toolCallId":call,"toolName":"exec",
                  "content":[{"type":"text","text":"total 0\n".repeat(reps)}],"isError":false,"timestamp":t}}).to_string());
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
    if let Some(bp) = branch_point {
        t += 1000;
        let bid = next_id(rng);
        lines.push(json!({"type":"message","id":bid,"parentId":bp,"timestamp":ts(t),
            "message":{"role":"user","content":[{"type":"text","text":"edited question"}],"timestamp":t}}).to_string());
        t += 1000;
        let lid = next_id(rng);
        lines.push(json!({"type":"message","id":lid,"parentId":parent,"timestamp":ts(t),
            "message":{"role":"user","content":[{"type":"text","text":"back on the main line"}],"timestamp":t}}).to_string());
    }
    lines
}

/// Writes the legacy state dir `<home>/.openclaw`; returns every file written (for the
/// "no legacy byte lost" checks).
pub fn write_legacy(home: &Path, seed: u64, shape: Shape) -> Vec<PathBuf> {
    let mut rng = Rng::new(seed);
    let mut files = Vec::new();
    let state = home.join(".openclaw");
    for (ai, agent) in AGENTS.iter().enumerate() {
        let dir = state.join("agents").join(agent).join("sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let mut store = serde_json::Map::new();
        for i in 0..shape.sessions {
            let key = match i {
                0 => format!("agent:{agent}:main"),
                1 => format!("agent:{agent}:telegram:direct:12{ai}"),
                2 => format!("agent:{agent}:discord:channel:99{ai}"),
                3 => format!("agent:{agent}:cron:nightly"),
                4 => format!("agent:{agent}:subagent:{}", rng.uuid()),
                _ => format!("agent:{agent}:dashboard:{}", rng.uuid()),
            };
            let id = rng.uuid();
            let updated = NOW - (i as i64 + 1) * 3_600_000 - ai as i64 * 60_000;
            let turns = 2 + rng.below(shape.max_turns.saturating_sub(1).max(1) as u64) as usize;
            let img = if i == 0 && ai == 0 {
                shape.image_bytes
            } else {
                0
            };
            let lines = transcript(
                &mut rng,
                &id,
                updated - 86_400_000,
                turns,
                img,
                shape.tool_output,
            );
            let mut body = lines.join("\n") + "\n";
            if shape.edge_cases && i == 3 {
                // A torn tail: the gateway died in the middle of a line.
                body.push_str(r#"{"type":"message","id":"torn0001","parentId":null,"message":{"role":"user","content":"cut he"#);
            }
            let file = dir.join(format!("{id}.jsonl"));
            std::fs::write(&file, body).unwrap();
            files.push(file.clone());
            let mut e = serde_json::Map::new();
            e.insert("sessionId".into(), json!(id));
            e.insert("updatedAt".into(), json!(updated));
            e.insert("sessionFile".into(), json!(file.to_string_lossy()));
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
            if i == 0 && ai == 1 {
                // A direct chat on the main key: 9.6's "shared-main" scope.
                e.insert("chatType".into(), json!("direct"));
            }
            if i == 5 {
                e.insert("chatType".into(), json!("group"));
                e.insert("subject".into(), json!("Caf\u{e9} team"));
                e.insert("modelProvider".into(), json!("openai"));
                e.insert("model".into(), json!("gpt-5.5"));
                e.insert("createdAt".into(), json!(updated - 5_000));
                e.insert("lastInteractionAt".into(), json!(updated - 1_000));
                e.insert("skillsSnapshot".into(), json!({"prompt":"p","skills":[{"name":"a"}],"resolvedSkills":[{"name":"a","path":"/x"}],"version":2}));
            }
            if i == 6 {
                e.insert("sessionStartedAt".into(), json!(updated - 7_200_000));
                e.insert("startedAt".into(), json!(updated - 7_100_000));
                e.insert("displayName".into(), json!("Release planning"));
                e.insert("pinnedAt".into(), json!(updated - 60_000));
                e.insert("previousSessionId".into(), json!(rng.uuid()));
            }
            if shape.edge_cases && i == 2 {
                // A trajectory sidecar and its pointer beside the transcript.
                let traj = dir.join(format!("{id}.trajectory.jsonl"));
                std::fs::write(
                    &traj,
                    format!("{}\n", json!({"type":"run","runId":"r1","ts":ts(updated)})),
                )
                .unwrap();
                files.push(traj.clone());
                let ptr = dir.join(format!("{id}.trajectory-path.json"));
                std::fs::write(&ptr, json!({"path": traj.to_string_lossy()}).to_string()).unwrap();
                files.push(ptr);
            }
            if shape.edge_cases && i == 0 {
                // The generations before a reset and a delete, as 2026.7 archived them.
                let old = rng.uuid();
                let stamp = clawstate::js::clock::archive_timestamp(updated - 2 * 86_400_000);
                let reset = dir.join(format!("{old}.jsonl.reset.{stamp}"));
                std::fs::write(
                    &reset,
                    transcript(&mut rng, &old, updated - 3 * 86_400_000, 2, 0, 64).join("\n")
                        + "\n",
                )
                .unwrap();
                files.push(reset);
                let gone = rng.uuid();
                let deleted = dir.join(format!("{gone}.jsonl.deleted.{stamp}"));
                std::fs::write(
                    &deleted,
                    transcript(&mut rng, &gone, updated - 4 * 86_400_000, 2, 0, 64).join("\n")
                        + "\n",
                )
                .unwrap();
                files.push(deleted);
            }
            store.insert(key, Value::Object(e));
        }
        if shape.edge_cases {
            // An orphan: a transcript no entry names.
            let orphan = rng.uuid();
            let file = dir.join(format!("{orphan}.jsonl"));
            std::fs::write(
                &file,
                transcript(&mut rng, &orphan, NOW - 9 * 86_400_000, 2, 0, 64).join("\n") + "\n",
            )
            .unwrap();
            files.push(file);
        }
        let store_path = dir.join("sessions.json");
        std::fs::write(
            &store_path,
            serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
        )
        .unwrap();
        files.push(store_path);
    }
    let cfg = state.join("openclaw.json");
    std::fs::write(
        &cfg,
        r#"{"agents":{"list":[{"id":"main","default":true},{"id":"work"}]}}"#,
    )
    .unwrap();
    files
}

/// The columns whose values come from the clock or a random generator, by table; masked
/// in [`canonical_dump`]. Everything else must be equal.
pub const VOLATILE: &[(&str, &[&str])] = &[
    ("schema_meta", &["created_at", "updated_at"]),
    ("session_transcript_index_state", &["updated_at"]),
    (
        "transcript_rewrite_watermarks",
        &["generation", "updated_at"],
    ),
];

/// Tables left out of the dump: FTS5's shadow tables (their layout depends on segment
/// merges; the FTS content is compared through `session_transcript_fts_content`).
const SHADOW: &[&str] = &[
    "session_transcript_fts_data",
    "session_transcript_fts_idx",
    "session_transcript_fts_docsize",
    "session_transcript_fts_config",
    "standing_intents_fts_data",
    "standing_intents_fts_idx",
    "standing_intents_fts_docsize",
    "standing_intents_fts_config",
];

fn cell(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => format!("i:{i}"),
        ValueRef::Real(f) => format!("r:{f}"),
        ValueRef::Text(t) => format!("t:{}", String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => {
            use std::fmt::Write;
            let mut s = String::from("b:");
            for x in b {
                let _ = write!(s, "{x:02x}");
            }
            s
        }
    }
}

/// Every row of every ordinary table of an agent DB, sorted, volatile columns masked:
/// table -> rows (each `col=value|col=value`); plus `user_version` and the schema text.
pub fn canonical_dump(db: &Path) -> BTreeMap<String, Vec<String>> {
    let c = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut out = BTreeMap::new();
    let uv: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    out.insert("#user_version".into(), vec![uv.to_string()]);
    let mut schema: Vec<String> = c
        .prepare("SELECT type || ' ' || name || ' ' || coalesce(sql,'') FROM sqlite_master")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    schema.sort();
    out.insert("#schema".into(), schema);
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for t in tables {
        if SHADOW.contains(&t.as_str()) || t.starts_with("sqlite_") {
            continue;
        }
        let masked: &[&str] = VOLATILE
            .iter()
            .find(|(n, _)| *n == t)
            .map_or(&[], |(_, c)| c);
        let mut stmt = c.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let cols: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok(cols
                    .iter()
                    .enumerate()
                    .map(|(i, name)| {
                        let v = r.get_ref(i).unwrap();
                        if masked.contains(&name.as_str()) {
                            format!(
                                "{name}=<{}>",
                                if matches!(v, ValueRef::Null) {
                                    "null"
                                } else {
                                    "masked"
                                }
                            )
                        } else {
                            format!("{name}={}", cell(v))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort();
        out.insert(t, rows);
    }
    out
}

/// Every file under `dir`, relative, with the ms timestamps of archive names masked
/// (`.imported-<ms>` -> `.imported-<ms>`, `<run>.json` -> `<run>.json`).
pub fn masked_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(mask_name(&p.strip_prefix(base).unwrap().to_string_lossy()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// One relative path with its volatile parts masked: digit runs of 13 after `imported-`,
/// and the run id of a manifest.
pub fn mask_name(p: &str) -> String {
    let mut s = p.to_string();
    if let Some(i) = s.find("session-sqlite-migration-runs/") {
        let head = &s[..i + "session-sqlite-migration-runs/".len()];
        return format!("{head}<run>.json");
    }
    while let Some(i) = s.find("imported-1") {
        let j = i + "imported-".len();
        let end = s[j..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(s.len(), |k| j + k);
        s.replace_range(j..end, "<ms>");
    }
    s
}
