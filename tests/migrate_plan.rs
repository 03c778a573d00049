//! `claw-migrate plan` on generated legacy dirs: what 9.6's import would do with every
//! entry and transcript, and a differential against 9.6's own
//! `openclaw doctor --session-sqlite dry-run --json` (same sessions counted, same issue
//! codes per session); `plan` changes no byte.

mod agent_db_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_db_support::{imported_home, peer96, run96, write_legacy_state, FIXTURE_NOW};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::claw;

/// Every file under `root` with the hash of its bytes.
fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                let h = Sha256::digest(std::fs::read(&p).unwrap());
                out.insert(p, format!("{h:x}"));
            }
        }
    }
    out
}

fn plan_json(home: &Path) -> Value {
    let o = claw("claw-migrate", home)
        .args(["plan", "--json"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "plan failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn sessions_dir(home: &Path, agent: &str) -> PathBuf {
    home.join(".openclaw/agents").join(agent).join("sessions")
}

fn session<'a>(plan: &'a Value, key: &str) -> &'a Value {
    plan["agents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["sessions"].as_array().unwrap())
        .find(|s| s["sessionKey"] == key)
        .unwrap_or_else(|| panic!("no session {key} in {plan:#}"))
}

/// A small legacy dir: one agent, hand-made cases.
fn hand_made(home: &Path) {
    let d = sessions_dir(home, "main");
    std::fs::create_dir_all(&d).unwrap();
    let head = |id: &str| {
        format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}}\n")
    };
    let msg = |id: &str, parent: &str| {
        format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"caf\\u00e9\"}}],\"timestamp\":1}}}}\n")
    };
    std::fs::write(
        d.join("s-ok.jsonl"),
        head("s-ok") + &msg("a1", "null") + &msg("a2", "\"a1\""),
    )
    .unwrap();
    std::fs::write(
        d.join("s-torn.jsonl"),
        head("s-torn") + &msg("a1", "null") + "{\"type\":\"message\",\"id\":\"a2\",\"par",
    )
    .unwrap();
    std::fs::write(
        d.join("s-bad.jsonl"),
        head("s-bad") + &msg("a1", "null") + "not json\n" + &msg("a2", "\"a1\""),
    )
    .unwrap();
    std::fs::write(d.join("orphan.jsonl"), head("orphan") + &msg("o1", "null")).unwrap();
    std::fs::write(d.join("empty-orphan.jsonl"), head("empty-orphan")).unwrap();
    std::fs::write(
        d.join("s-ok.trajectory.jsonl"),
        "{\"traceSchema\":1,\"t\":1}\n",
    )
    .unwrap();
    let store = json!({
        "agent:main:main": {"sessionId": "s-ok", "updatedAt": 1_790_000_000_000i64},
        "agent:main:torn": {"sessionId": "s-torn", "updatedAt": 1_790_000_000_001i64},
        "agent:main:bad": {"sessionId": "s-bad", "updatedAt": 1_790_000_000_002i64},
        "agent:main:gone": {"sessionId": "s-gone", "updatedAt": 1_790_000_000_003i64,
            "sessionFile": d.join("s-gone.jsonl").to_string_lossy()},
        "agent:main:none": {"sessionId": "s-none", "updatedAt": 1_790_000_000_004i64},
    });
    std::fs::write(d.join("sessions.json"), store.to_string()).unwrap();
    std::fs::write(
        home.join(".openclaw/openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
}

#[test]
fn plan_says_what_the_import_does_with_each_case() {
    let tmp = tempfile::tempdir().unwrap();
    hand_made(tmp.path());
    let before = tree(tmp.path());
    let p = plan_json(tmp.path());
    assert_eq!(tree(tmp.path()), before, "plan changed a byte");

    let ok = session(&p, "agent:main:main");
    assert_eq!(ok["action"], "import");
    assert_eq!(ok["events"], 3);
    assert_eq!(ok["archiveAs"], "agent_main_main.s-ok.jsonl.imported-<ms>");

    let torn = session(&p, "agent:main:torn");
    assert_eq!(torn["action"], "import_prefix");
    assert_eq!(torn["events"], 2);
    assert_eq!(torn["droppedLines"], 1);
    assert!(torn["reason"].as_str().unwrap().contains("torn tail"));
    assert_eq!(torn["issues"][0]["code"], "transcript_malformed");
    assert_eq!(torn["issues"][0]["blocking"], false);

    let bad = session(&p, "agent:main:bad");
    assert_eq!(bad["action"], "import_prefix");
    assert_eq!(bad["events"], 2);
    assert_eq!(bad["droppedLines"], 2);
    assert!(bad["reason"].as_str().unwrap().contains("malformed line"));

    let gone = session(&p, "agent:main:gone");
    assert_eq!(gone["action"], "entry_only");
    assert_eq!(gone["issues"][0]["code"], "transcript_missing");
    assert_eq!(session(&p, "agent:main:none")["action"], "entry_only");

    let orphan = session(&p, "agent:main:recovered:orphan");
    assert_eq!(orphan["action"], "import_historical");
    assert_eq!(orphan["source"], "unreferenced");

    let agent = &p["agents"][0];
    let kinds: Vec<(&str, &str)> = agent["archive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap(),
                m["archiveAs"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(kinds.contains(&("legacy-store", "legacy-store.sessions.json.imported-<ms>")));
    assert!(kinds.contains(&(
        "trajectory",
        "agent_main_main.s-ok.trajectory.jsonl.imported-<ms>"
    )));
    assert!(kinds.contains(&(
        "unreferenced-jsonl",
        "archive-tier.empty-orphan.jsonl.imported-<ms>"
    )));

    // --ndjson: one object per session.
    let o = claw("claw-migrate", tmp.path())
        .args(["plan", "--ndjson"])
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), agent["sessions"].as_array().unwrap().len());
    assert!(lines.iter().all(|l| l["agentId"] == "main"));
    // The table names every session.
    let o = claw("claw-migrate", tmp.path())
        .args(["plan", "--table"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("agent:main:torn") && text.contains("import_prefix"),
        "{text}"
    );
}

#[test]
fn an_entry_without_session_id_is_entry_invalid() {
    let tmp = tempfile::tempdir().unwrap();
    hand_made(tmp.path());
    let store = sessions_dir(tmp.path(), "main").join("sessions.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    v["agent:main:broken"] = json!({"updatedAt": 1});
    std::fs::write(&store, v.to_string()).unwrap();
    let p = plan_json(tmp.path());
    let b = session(&p, "agent:main:broken");
    assert_eq!(b["action"], "skip");
    assert_eq!(b["issues"][0]["code"], "entry_invalid");
}

/// The per-target numbers and `(code, sessionKey)` issues 9.6 reports, by agent.
type DoctorCounts = BTreeMap<String, (Value, Vec<(String, String)>)>;

fn counts_of(targets: &[Value], doctor_field: Option<&str>) -> DoctorCounts {
    let mut out = BTreeMap::new();
    for t in targets {
        let d = match doctor_field {
            Some(f) => &t[f],
            None => t,
        };
        if doctor_field.is_some() && d["targeted"] != true {
            continue;
        }
        let mut issues: Vec<(String, String)> = d["issues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["code"].as_str().unwrap().to_string(),
                    i["sessionKey"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        issues.sort();
        let mut unref: Vec<String> = d["unreferencedJsonlFiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                Path::new(p.as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        unref.sort();
        let nums = json!({
            "legacyEntries": d["legacyEntries"],
            "validatedEntries": d["validatedEntries"],
            "validatedTranscriptEvents": d["validatedTranscriptEvents"],
            "referencedTranscriptFiles": d["referencedTranscriptFiles"],
            "unreferencedJsonlFiles": unref,
        });
        out.insert(t["agentId"].as_str().unwrap().to_string(), (nums, issues));
    }
    out
}

/// Runs 9.6's dry run and our plan on copies of `home` and compares them.
fn differential(home: &Path) {
    let Some(peer) = peer96() else { return };
    let theirs_home = tempfile::tempdir().unwrap();
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(home.join(".openclaw"))
        .arg(theirs_home.path())
        .status()
        .unwrap();
    assert!(st.success());
    let before = tree(home);
    let ours = plan_json(home);
    assert_eq!(tree(home), before, "plan changed a byte");
    let o = run96(
        &peer,
        theirs_home.path(),
        &[
            "doctor",
            "--session-sqlite",
            "dry-run",
            "--session-sqlite-all-agents",
            "--json",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let start = text.find('{').expect("9.6 printed JSON");
    let theirs: Value = serde_json::from_str(&text[start..])
        .unwrap_or_else(|e| panic!("9.6 dry-run output: {e}\n{text}"));
    let a = counts_of(theirs["targets"].as_array().unwrap(), None);
    let b = counts_of(ours["agents"].as_array().unwrap(), Some("doctor"));
    assert_eq!(b, a, "claw-migrate plan (left) vs 9.6 dry-run (right)");
}

#[test]
fn differential_hand_made_cases() {
    let tmp = tempfile::tempdir().unwrap();
    hand_made(tmp.path());
    differential(tmp.path());
}

#[test]
fn differential_generated_two_agents_with_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let gen = write_legacy_state(tmp.path(), 7, FIXTURE_NOW);
    // Damage: a torn tail in main, a bad middle line in work, an orphan in each, a
    // trajectory sidecar, a store entry naming a sessionFile that is gone.
    let (_, main) = &gen[0];
    let (_, work) = &gen[1];
    let md = sessions_dir(tmp.path(), "main");
    let wd = sessions_dir(tmp.path(), "work");
    let torn = md.join(format!("{}.jsonl", main[1].id));
    let mut t = std::fs::read(&torn).unwrap();
    t.extend_from_slice(b"{\"type\":\"message\",\"id\":\"zz\",\"parentId\":\"x\",\"mess");
    std::fs::write(&torn, t).unwrap();
    let bad = wd.join(format!("{}.jsonl", work[2].id));
    let mut lines = work[2].lines.clone();
    lines.insert(2, "{oops".into());
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    for (d, s) in [(&md, &main[3]), (&wd, &work[0])] {
        let id = format!("{}-orphan", &s.id[..8]);
        let mut l = s.lines.clone();
        l[0] = l[0].replace(&s.id, &id);
        std::fs::write(d.join(format!("{id}.jsonl")), l.join("\n") + "\n").unwrap();
    }
    std::fs::write(
        md.join(format!("{}.trajectory.jsonl", main[0].id)),
        "{\"traceSchema\":1}\n",
    )
    .unwrap();
    let store = md.join("sessions.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    v["agent:main:gone"] = json!({"sessionId":"gone-1","updatedAt":1,
        "sessionFile": md.join("gone-1.jsonl").to_string_lossy()});
    std::fs::write(&store, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    differential(tmp.path());
}

#[test]
fn differential_leftover_jsonl_beside_the_db() {
    // After 9.6's import: a JSONL put back beside a DB-backed session (the stuck case).
    let Some(home) = imported_home() else { return };
    let tmp = home.path();
    let arch = tmp.join(".openclaw/agents/main/session-sqlite-import-archive");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&arch)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".jsonl.imported-"))
        .collect();
    names.sort();
    let src = &names[0];
    let fname = src.file_name().unwrap().to_string_lossy().into_owned();
    // `<key>.<sid>.jsonl.imported-<ms>`: the sid is the part before `.jsonl`.
    let stem = &fname[..fname.find(".jsonl.imported-").unwrap()];
    let sid = stem.rsplit('.').next().unwrap();
    std::fs::copy(src, sessions_dir(tmp, "main").join(format!("{sid}.jsonl"))).unwrap();
    let p = plan_json(tmp);
    let agent = &p["agents"][0];
    assert!(agent["doctor"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["code"] == "active_sqlite_transcript_jsonl"));
    differential(tmp);
}

#[test]
fn differential_legacy_files_back_beside_the_db() {
    // The in-place upgrade users report: the DB imported, and the legacy store and a
    // transcript back in place (a restore from backup, a second 7.1 run). Every entry
    // duplicates a DB session.
    let Some(home) = imported_home() else { return };
    let tmp = home.path();
    let arch = tmp.join(".openclaw/agents/work/session-sqlite-import-archive");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&arch)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let store = names
        .iter()
        .find(|p| p.to_string_lossy().contains("legacy-store.sessions.json"))
        .unwrap();
    let d = sessions_dir(tmp, "work");
    std::fs::copy(store, d.join("sessions.json")).unwrap();
    let t = names
        .iter()
        .find(|p| p.to_string_lossy().contains(".jsonl.imported-"))
        .unwrap();
    let fname = t.file_name().unwrap().to_string_lossy().into_owned();
    let stem = &fname[..fname.find(".jsonl.imported-").unwrap()];
    let sid = stem.rsplit('.').next().unwrap();
    std::fs::copy(t, d.join(format!("{sid}.jsonl"))).unwrap();
    let p = plan_json(tmp);
    let work = p["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agentId"] == "work")
        .unwrap();
    let dup = work["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == sid && s["source"] == "store")
        .unwrap();
    assert!(
        dup["reason"]
            .as_str()
            .unwrap()
            .contains("already in the database"),
        "{dup:#}"
    );
    assert!(dup["dbEvents"].as_i64().unwrap() > 0);
    differential(tmp);
}

#[test]
fn a_transcript_that_is_a_symlink_or_leaves_the_sessions_dir_is_reported_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    hand_made(tmp.path());
    let d = sessions_dir(tmp.path(), "main");
    let outside = |p: &Path| {
        std::fs::write(
            p,
            "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/x\"}\n",
        )
        .unwrap();
    };
    // A transcript that is a link to a file outside; a session id and a sessionFile that
    // climb out of the sessions dir to files that are there.
    let secret = tmp.path().join("secret.jsonl");
    outside(&secret);
    std::os::unix::fs::symlink(&secret, d.join("s-link.jsonl")).unwrap();
    outside(&d.join("../../x.jsonl"));
    outside(&d.join("../../y.jsonl"));
    let store = d.join("sessions.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    v["agent:main:link"] = json!({"sessionId": "s-link", "updatedAt": 1});
    v["agent:main:climb"] = json!({"sessionId": "../../x", "updatedAt": 1});
    v["agent:main:file"] =
        json!({"sessionId": "s-file", "updatedAt": 1, "sessionFile": "../../y.jsonl"});
    std::fs::write(&store, v.to_string()).unwrap();
    let p = plan_json(tmp.path());
    for key in ["agent:main:link", "agent:main:climb"] {
        let s = session(&p, key);
        assert_eq!(s["action"], "entry_only", "{key}: {s:#}");
        assert_eq!(s["events"], 0, "{key}: {s:#}");
        assert!(
            s["reason"].as_str().unwrap().contains("not followed"),
            "{key}: {s:#}"
        );
        assert!(s["archiveAs"].is_null(), "{key}: {s:#}");
    }
    let f = session(&p, "agent:main:file");
    assert_eq!(f["action"], "entry_only", "{f:#}");
    assert_eq!(f["events"], 0, "{f:#}");
    // Nothing outside is planned into the archive.
    let sources: Vec<&str> = p["agents"][0]["archive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["source"].as_str().unwrap())
        .collect();
    assert!(
        sources
            .iter()
            .all(|s| Path::new(s).starts_with(&d) && !s.contains("s-link")),
        "{sources:?}"
    );
}
