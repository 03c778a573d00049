//! `claw-sessions list`: the transcript's path and size in the NDJSON rows and the table
//! (never in the peer-identical `--json` rows), `--older-than`, `--sort updated|size|tokens`
//! and `--agent` with several ids.

mod support;

use std::path::PathBuf;

use serde_json::{json, Value};
use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const DAY: i64 = 86_400_000;

struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    sessions: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let sessions = home.join(".openclaw/agents/main/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(
            sessions.join("sessions.json"),
            json!({
                "agent:main:main": {"sessionId": "a", "updatedAt": NOW - DAY, "totalTokens": 10},
                "agent:main:cron:old": {"sessionId": "b", "updatedAt": NOW - 10 * DAY, "totalTokens": 500},
                "agent:main:cron:older": {"sessionId": "c", "updatedAt": NOW - 20 * DAY},
                "agent:main:cron:undated": {"sessionId": "d"},
            })
            .to_string(),
        )
        .unwrap();
        std::fs::write(sessions.join("a.jsonl"), "x".repeat(10)).unwrap();
        std::fs::write(sessions.join("b.jsonl"), "x".repeat(3000)).unwrap();
        std::fs::write(sessions.join("d.jsonl"), "x".repeat(100)).unwrap();
        Fixture {
            _tmp: tmp,
            home,
            sessions,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--now").arg(NOW.to_string());
        c
    }

    fn ndjson(&self, args: &[&str]) -> Vec<Value> {
        let out = self.cmd().args(args).arg("--ndjson").assert().success();
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn keys(&self, args: &[&str]) -> Vec<String> {
        self.ndjson(args)
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string())
            .collect()
    }
}

#[test]
fn ndjson_and_table_rows_carry_the_transcript_path_and_size_json_rows_do_not() {
    let f = Fixture::new();
    let rows = f.ndjson(&["list"]);
    let main = &rows[0];
    assert_eq!(main["key"], "agent:main:main");
    let path = main["transcriptPath"].as_str().unwrap();
    assert!(path.ends_with("agents/main/sessions/a.jsonl"), "{path}");
    assert_eq!(main["transcriptBytes"], 10);
    let older = rows
        .iter()
        .find(|r| r["key"] == "agent:main:cron:older")
        .unwrap();
    assert!(older["transcriptPath"].is_string());
    assert_eq!(older["transcriptBytes"], Value::Null, "no file: null");
    // --json: the gateway's rows, without the new fields.
    let out = f.cmd().args(["list", "--json"]).assert().success();
    let v = json_of(&out.get_output().stdout);
    for row in v["sessions"].as_array().unwrap() {
        assert!(row.get("transcriptPath").is_none(), "{row}");
        assert!(row.get("transcriptBytes").is_none(), "{row}");
    }
    // The table: a Size and a Transcript column.
    let out = f.cmd().args(["list", "--table"]).assert().success();
    let table = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        table.contains("Size") && table.contains("Transcript"),
        "{table}"
    );
    let line = table.lines().find(|l| l.contains("cron:old ")).unwrap();
    assert!(line.contains("2.9K") && line.contains("b.jsonl"), "{line}");
    assert!(f.sessions.join("b.jsonl").exists());
}

#[test]
fn older_than_keeps_entries_not_updated_for_that_long() {
    let f = Fixture::new();
    assert_eq!(
        f.keys(&["list", "--older-than", "7d"]),
        ["agent:main:cron:old", "agent:main:cron:older"]
    );
    // A bare number is days; an entry without updatedAt has no age.
    assert_eq!(
        f.keys(&["list", "--older-than", "15"]),
        ["agent:main:cron:older"]
    );
    let out = f
        .cmd()
        .args(["list", "--json", "--older-than", "7d"])
        .assert()
        .success();
    let v = json_of(&out.get_output().stdout);
    assert_eq!(
        (v["count"].clone(), v["totalCount"].clone()),
        (json!(2), json!(2))
    );
    f.cmd()
        .args(["list", "--older-than", "soon"])
        .assert()
        .code(2);
}

#[test]
fn sort_orders_by_size_or_tokens_before_the_limit() {
    let f = Fixture::new();
    assert_eq!(
        f.keys(&["list", "--sort", "size"]),
        [
            "agent:main:cron:old",
            "agent:main:cron:undated",
            "agent:main:main",
            "agent:main:cron:older"
        ]
    );
    assert_eq!(
        f.keys(&["list", "--sort", "tokens", "--limit", "2"]),
        ["agent:main:cron:old", "agent:main:main"]
    );
    assert_eq!(
        f.keys(&["list", "--sort", "updated"]),
        f.keys(&["list"]),
        "updated is the default order"
    );
    f.cmd().args(["list", "--sort", "name"]).assert().code(2);
}

#[test]
fn agent_takes_several_ids() {
    let f = Fixture::new();
    std::fs::write(
        f.home.join(".openclaw/openclaw.json"),
        r#"{agents: {list: [{id: "main"}, {id: "work"}, {id: "ops"}]}}"#,
    )
    .unwrap();
    let work = f.home.join(".openclaw/agents/work/sessions");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        work.join("sessions.json"),
        json!({"agent:work:main": {"sessionId": "w", "updatedAt": NOW}}).to_string(),
    )
    .unwrap();
    let out = f
        .cmd()
        .args(["list", "--json", "--agent", "main,work"])
        .assert()
        .success();
    let v = json_of(&out.get_output().stdout);
    let stores: Vec<&str> = v["stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agentId"].as_str().unwrap())
        .collect();
    assert_eq!(stores, ["main", "work"]);
    assert_eq!(v["count"], 5);
    assert_eq!(v["sessions"][0]["key"], "agent:work:main");
    f.cmd()
        .args(["list", "--agent", "main,nope"])
        .assert()
        .code(3);
    // A command on one entry refuses several stores.
    f.cmd()
        .args(["show", "main", "--agent", "main,work"])
        .assert()
        .code(2);
}
