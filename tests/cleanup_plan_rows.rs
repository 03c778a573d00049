//! `claw-sessions cleanup --ndjson`: the plan as rows. A dry run prints one row per entry
//! it would remove (`key`, `action`, `reason`, `ageMs`, `bytes`) and one per file it
//! would archive or remove (`path`, `action`, `rule`, `bytes`), then the summary row;
//! `--enforce -v` prints the same rows for what it did. The summary row is the `--json`
//! summary, compact.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;

const TRANSCRIPT: &str = "{\"type\":\"session\",\"id\":\"x\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    sessions: PathBuf,
}

impl Fixture {
    fn new(store: Value, config: Option<&str>) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let sessions = home.join(".openclaw/agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(sessions.join("sessions.json"), store.to_string()).unwrap();
        if let Some(c) = config {
            std::fs::write(home.join(".openclaw/openclaw.json"), c).unwrap();
        }
        Fixture {
            _tmp: tmp,
            home,
            sessions,
        }
    }

    fn file(&self, name: &str, content: &str, age_ms: i64) -> PathBuf {
        let p = self.sessions.join(name);
        std::fs::write(&p, content).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(UNIX_EPOCH + Duration::from_millis((NOW - age_ms) as u64))
            .unwrap();
        p
    }

    fn rows(&self, args: &[&str]) -> Vec<Value> {
        let out = claw("claw-sessions", &self.home)
            .arg("--now")
            .arg(NOW.to_string())
            .args(args)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
            .collect()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = claw("claw-sessions", &self.home)
            .arg("--now")
            .arg(NOW.to_string())
            .args(args)
            .assert()
            .success();
        json_of(&out.get_output().stdout)
    }
}

fn real(p: &Path) -> String {
    std::fs::canonicalize(p.parent().unwrap())
        .unwrap()
        .join(p.file_name().unwrap())
        .to_string_lossy()
        .into_owned()
}

/// Two stale entries with transcripts, one fresh one, an orphan transcript and an
/// expired archive.
fn fixture() -> Fixture {
    let f = Fixture::new(
        json!({
            "agent:main:main": {"sessionId": "fresh", "updatedAt": NOW - HOUR},
            "agent:main:cron:a": {"sessionId": "old0", "updatedAt": NOW - 40 * DAY},
            "agent:main:cron:b": {"sessionId": "old1", "updatedAt": NOW - 41 * DAY},
        }),
        None,
    );
    f.file("fresh.jsonl", TRANSCRIPT, HOUR);
    f.file("old0.jsonl", TRANSCRIPT, 40 * DAY);
    f.file("old1.jsonl", &TRANSCRIPT.repeat(2), 41 * DAY);
    f.file("orphan.jsonl", "{}\n", 40 * DAY);
    f.file("x.jsonl.deleted.2020-01-01T00-00-00.000Z", "old", 40 * DAY);
    f
}

#[test]
fn dry_run_ndjson_prints_entry_and_file_rows_then_the_summary() {
    let f = fixture();
    let rows = f.rows(&["cleanup", "--dry-run", "--ndjson"]);
    let len = TRANSCRIPT.len() as u64;
    assert_eq!(
        rows[0],
        json!({"key": "agent:main:cron:a", "action": "prune",
               "reason": format!("updatedAt older than session.maintenance.pruneAfter ({} ms)", 30 * DAY),
               "ageMs": 40 * DAY, "bytes": len})
    );
    assert_eq!(rows[1]["key"], "agent:main:cron:b");
    assert_eq!(rows[1]["bytes"], 2 * len);
    assert_eq!(rows[1]["ageMs"], 41 * DAY);
    let files: Vec<(String, &str, &str, Value)> = rows[2..rows.len() - 1]
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap(),
                r["rule"].as_str().unwrap(),
                r["bytes"].clone(),
            )
        })
        .collect();
    let p = |n: &str| real(&f.sessions.join(n));
    assert_eq!(
        files,
        [
            (p("old0.jsonl"), "archive", "removedEntry", json!(len)),
            (p("old1.jsonl"), "archive", "removedEntry", json!(2 * len)),
            (
                p("x.jsonl.deleted.2020-01-01T00-00-00.000Z"),
                "remove",
                "archiveRetention",
                json!(3)
            ),
            (p("orphan.jsonl"), "remove", "unreferenced", json!(3)),
        ]
    );
    assert!(rows[2]["to"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{}.deleted.", p("old0.jsonl"))));
    // The last row is the peer-identical --json summary.
    let summary = f.json(&["cleanup", "--dry-run", "--json"]);
    assert_eq!(rows.last().unwrap(), &summary);
    // Nothing was written.
    assert!(f.sessions.join("old0.jsonl").exists());
    assert!(f.sessions.join("orphan.jsonl").exists());
}

#[test]
fn enforce_verbose_ndjson_prints_the_rows_of_what_it_did_as_the_dry_run_planned_them() {
    let planned = fixture();
    let done = fixture();
    let strip = |rows: Vec<Value>, f: &Fixture| -> Vec<Value> {
        let dir = real(&f.sessions.join("x"));
        let dir = dir.trim_end_matches('x').to_string();
        rows[..rows.len() - 1]
            .iter()
            .map(|r| {
                let s = r.to_string().replace(&dir, "<dir>/");
                serde_json::from_str(&s).unwrap()
            })
            .collect()
    };
    let plan = strip(
        planned.rows(&["cleanup", "--dry-run", "--ndjson"]),
        &planned,
    );
    let rows = done.rows(&["cleanup", "--enforce", "-v", "--ndjson"]);
    assert_eq!(rows.last().unwrap()["appliedCount"], 1);
    assert_eq!(strip(rows, &done), plan);
    assert!(!done.sessions.join("old0.jsonl").exists());
    // Without -v, an enforce run prints the summary row alone (as before).
    let again = fixture();
    let rows = again.rows(&["cleanup", "--enforce", "--ndjson"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
}

#[test]
fn a_capped_entry_row_names_its_rule() {
    let f = Fixture::new(
        json!({
            "agent:main:a": {"sessionId": "s1", "updatedAt": NOW - 3 * HOUR},
            "agent:main:b": {"sessionId": "s2", "updatedAt": NOW - 2 * HOUR},
            "agent:main:c": {"sessionId": "s3", "updatedAt": NOW - HOUR},
        }),
        Some(r#"{session: {maintenance: {maxEntries: 2}}}"#),
    );
    for id in ["s1", "s2", "s3"] {
        f.file(&format!("{id}.jsonl"), TRANSCRIPT, HOUR);
    }
    let rows = f.rows(&["cleanup", "--dry-run", "--ndjson"]);
    assert_eq!(rows[0]["key"], "agent:main:a");
    assert_eq!(rows[0]["action"], "cap");
    assert_eq!(
        rows[0]["reason"],
        "beyond the newest session.maintenance.maxEntries (2)"
    );
    assert_eq!(rows[1]["action"], "archive");
    assert_eq!(rows.len(), 3, "{rows:?}");
}

#[test]
fn a_budget_eviction_is_an_entry_row_and_its_files_are_disk_budget_rows() {
    let f = Fixture::new(
        json!({
            "agent:main:a": {"sessionId": "s1", "updatedAt": NOW - 3 * HOUR},
            "agent:main:b": {"sessionId": "s2", "updatedAt": NOW - HOUR},
        }),
        Some(r#"{session: {maintenance: {maxDiskBytes: 3000, highWaterBytes: 2500}}}"#),
    );
    let big = TRANSCRIPT.repeat(20);
    f.file("s1.jsonl", &big, 3 * HOUR);
    f.file("s2.jsonl", &big, HOUR);
    let rows = f.rows(&["cleanup", "--dry-run", "--ndjson"]);
    let entry = rows
        .iter()
        .find(|r| r["action"] == "budget")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(entry["key"], "agent:main:a");
    assert_eq!(entry["bytes"], big.len());
    let file = rows
        .iter()
        .find(|r| r["rule"] == "diskBudget")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(file["action"], "remove");
    assert_eq!(file["path"], real(&f.sessions.join("s1.jsonl")));
    assert_eq!(file["bytes"], big.len());
    let summary = rows.last().unwrap();
    assert_eq!(summary["diskBudget"]["removedEntries"], 1, "{summary}");
    // The run does what the plan said, row for row.
    let done = f.rows(&["cleanup", "--enforce", "-v", "--ndjson"]);
    assert_eq!(done[..done.len() - 1], rows[..rows.len() - 1]);
    assert!(!f.sessions.join("s1.jsonl").exists());
}
