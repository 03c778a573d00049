//! `claw-sessions doctor`: one health check, one exit code (0 healthy, 1 findings, 65
//! damaged), `--severity` and `--summary`; it writes nothing. `claw-transcript check`
//! takes the same options (it runs the same `check --all` pass).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const SID: &str = "11111111-2222-4333-8444-555555555555";

fn transcript() -> String {
    format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{SID}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n"
    )
}

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    state: PathBuf,
    sessions: PathBuf,
}

impl Fixture {
    /// One entry with a valid transcript.
    fn healthy() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let state = home.join(".openclaw");
        let sessions = state.join("agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(
            sessions.join("sessions.json"),
            serde_json::to_string_pretty(
                &json!({"agent:main:main": {"sessionId": SID, "updatedAt": NOW - 1000}}),
            )
            .unwrap(),
        )
        .unwrap();
        std::fs::write(sessions.join(format!("{SID}.jsonl")), transcript()).unwrap();
        Fixture {
            _tmp: tmp,
            home,
            state,
            sessions,
        }
    }

    fn doctor(&self, args: &[&str]) -> (i32, Value) {
        let out = claw("claw-sessions", &self.home)
            .arg("--now")
            .arg(NOW.to_string())
            .arg("doctor")
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        (out.status.code().unwrap(), json_of(&out.stdout))
    }

    fn codes(&self, args: &[&str]) -> (i32, Vec<String>) {
        let (code, doc) = self.doctor(args);
        let codes = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["severity"].as_str().unwrap(),
                    f["code"].as_str().unwrap()
                )
            })
            .collect();
        (code, codes)
    }
}

/// Every path under `root` with its bytes (the doctor must not change any).
fn contents(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(d: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

#[test]
fn a_healthy_state_dir_exits_0_with_information_only() {
    let f = Fixture::healthy();
    let before = contents(&f.state);
    let (code, doc) = f.doctor(&[]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["healthy"], true);
    assert_eq!(doc["transcripts"], 1);
    assert_eq!(doc["errors"], 0);
    assert_eq!(doc["warnings"], 0);
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["state-db-missing"]);
    assert_eq!(contents(&f.state), before, "doctor writes nothing");
}

#[test]
fn warnings_exit_1_and_severity_and_summary_select_what_is_reported() {
    let f = Fixture::healthy();
    // An entry without its transcript, a stale write lock, an interrupted cleanup.
    std::fs::write(
        f.sessions.join("sessions.json"),
        json!({
            "agent:main:main": {"sessionId": SID, "updatedAt": NOW - 1000},
            "agent:main:gone": {"sessionId": "gone", "updatedAt": NOW - 2000},
            // A legacy field the load migrates: the next save rewrites this entry.
            "agent:main:gone2": {"sessionId": "gone2", "updatedAt": NOW - 3000, "provider": "telegram"},
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        f.sessions.join("sessions.json.pending-archives.json"),
        json!({"version": 1, "archives": []}).to_string(),
    )
    .unwrap();
    let (code, codes) = f.codes(&[]);
    assert_eq!(code, 1, "{codes:?}");
    for c in [
        "warning:entry-without-transcript",
        "warning:pending-archives",
        "info:store-normalization-drift",
        "info:state-db-missing",
    ] {
        assert!(codes.iter().any(|x| x == c), "{c} missing from {codes:?}");
    }
    // Only errors asked for: none, so healthy.
    let (code, codes) = f.codes(&["--severity", "error"]);
    assert_eq!((code, codes.len()), (0, 0), "{codes:?}");
    let (code, codes) = f.codes(&["--severity", "warning"]);
    assert_eq!(code, 1);
    assert!(codes.iter().all(|c| c.starts_with("warning:")), "{codes:?}");
    // Counts per code.
    let (code, doc) = f.doctor(&["--summary"]);
    assert_eq!(code, 1);
    assert!(doc.get("findings").is_none());
    let summary = doc["summary"].as_array().unwrap();
    assert_eq!(
        summary[0],
        json!({"code": "entry-without-transcript", "severity": "warning", "count": 2})
    );
}

#[test]
fn a_damaged_store_transcript_or_state_db_exits_65() {
    // A transcript with a line that is not JSON.
    let f = Fixture::healthy();
    std::fs::write(
        f.sessions.join(format!("{SID}.jsonl")),
        transcript() + "{not json\n{}\n",
    )
    .unwrap();
    let (code, codes) = f.codes(&[]);
    assert_eq!(code, 65, "{codes:?}");
    assert!(codes.iter().any(|c| c.starts_with("error:")), "{codes:?}");

    // A malformed store: the other sections still run.
    let f = Fixture::healthy();
    std::fs::write(f.sessions.join("sessions.json"), "{\"a\": ").unwrap();
    let (code, codes) = f.codes(&[]);
    assert_eq!(code, 65);
    assert!(
        codes.contains(&"error:store-unreadable".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"info:state-db-missing".to_string()),
        "{codes:?}"
    );

    // A state database that is not one.
    let f = Fixture::healthy();
    std::fs::create_dir_all(f.state.join("state")).unwrap();
    std::fs::write(
        f.state.join("state/openclaw.sqlite"),
        "this is not an SQLite database, just text long enough to be a header....\n".repeat(20),
    )
    .unwrap();
    let (code, codes) = f.codes(&[]);
    assert_eq!(code, 65, "{codes:?}");
    assert!(
        codes.contains(&"error:state-db-unreadable".to_string()),
        "{codes:?}"
    );
}

#[test]
fn a_canonical_state_db_is_healthy_and_a_planted_trigger_is_damage() {
    let f = Fixture::healthy();
    claw("claw-signals", &f.home)
        .args(["--now", &NOW.to_string()])
        .args([
            "record",
            "--session",
            "agent:main:main",
            "--kind",
            "compacted",
        ])
        .assert()
        .success();
    let db = f.state.join("state/openclaw.sqlite");
    assert!(db.exists());
    let (code, codes) = f.codes(&[]);
    assert_eq!(
        (code, codes.clone()),
        (0, Vec::<String>::new()),
        "{codes:?}"
    );
    clawstate::signals::rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER planted AFTER INSERT ON session_state_events BEGIN SELECT 1; END;",
        )
        .unwrap();
    let (code, codes) = f.codes(&[]);
    assert_eq!(code, 65, "{codes:?}");
    assert_eq!(codes, ["error:state-db-planted-objects"]);
}

#[test]
fn the_disk_budget_is_measured_against_the_config() {
    let f = Fixture::healthy();
    std::fs::write(f.sessions.join("big.bin"), vec![b'x'; 20_000]).unwrap();
    std::fs::write(
        f.state.join("openclaw.json"),
        r#"{session: {maintenance: {maxDiskBytes: 1000}}}"#,
    )
    .unwrap();
    let (code, doc) = f.doctor(&[]);
    assert_eq!(code, 1, "{doc}");
    let over = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "disk-over-budget")
        .unwrap_or_else(|| panic!("{doc}"));
    assert!(
        over["message"]
            .as_str()
            .unwrap()
            .contains("maxDiskBytes (1000)"),
        "{over}"
    );
}

#[test]
fn check_takes_severity_and_summary_too() {
    let f = Fixture::healthy();
    std::fs::write(f.sessions.join("orphan.jsonl"), transcript()).unwrap();
    let run = |args: &[&str]| {
        let out = claw("claw-transcript", &f.home)
            .args(["check", "--all", "--json"])
            .args(args)
            .output()
            .unwrap();
        (out.status.code().unwrap(), json_of(&out.stdout))
    };
    let (code, doc) = run(&[]);
    assert_eq!(code, 0);
    assert_eq!(doc["findings"][0]["code"], "transcript-without-entry");
    let (_, doc) = run(&["--severity", "warning"]);
    assert_eq!(doc["findings"], json!([]));
    let (_, doc) = run(&["--summary"]);
    assert_eq!(
        doc["summary"],
        json!([{"code": "transcript-without-entry", "severity": "info", "count": 1}])
    );
    let out = claw("claw-transcript", &f.home)
        .args(["check", "--all", "--severity", "loud"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
