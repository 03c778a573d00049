//! The history differential against openclaw@2026.9.6 (issue 25): a real 9.6 gateway on a
//! private state dir holding the doctor-imported agent DBs (`agent_db_support`), and, for
//! every session of the fixture (compressed rows, the compaction, the branch, the inline
//! image included), `claw-transcript history KEY --json` equal to the `sessions_history`
//! projection that gateway serves from the same DB (through `/tools/invoke`), with and
//! without `--include-tools`, and a bounded `--limit`.
//!
//! The gateway writes the DB at start (it repairs session titles); clawstate reads the DB
//! after that, so both read the same rows. Skipped, with a note, when 2026.9.6 is not
//! available or `CLAWSTATE_SKIP_PEER` is set. No wall-time assertion; every wait has a
//! deadline (the field harness's).

mod agent_db_support;
mod field_support;
mod support;

use std::path::Path;

use field_support::{assert_same_json, claw_json, FakeModel, Gateway};
use serde_json::{json, Value};

/// Every session key of `agent` in its DB, in key order.
fn session_keys(db: &Path) -> Vec<String> {
    let o = std::process::Command::new("sqlite3")
        .arg(db)
        .arg("SELECT session_key FROM session_nodes ORDER BY session_key")
        .output()
        .expect("sqlite3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A 9.6 gateway on a copy of the imported fixture, started.
fn gateway_on_fixture() -> Option<(Gateway, FakeModel)> {
    let peer = agent_db_support::peer96()?;
    let template = agent_db_support::imported_template()?;
    let model = FakeModel::start();
    let patch = json!({"agents": {"list": [{"id": "main", "default": true}, {"id": "work"}]}});
    let mut gw = Gateway::new(&peer, &model, &patch);
    // The fixture's state dir, without its config (the gateway's own is kept).
    for e in std::fs::read_dir(template.join(".openclaw")).expect("fixture") {
        let e = e.expect("entry");
        if e.file_name() == "openclaw.json" {
            continue;
        }
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(e.path())
            .arg(&gw.state)
            .status()
            .expect("cp");
        assert!(st.success());
    }
    gw.start();
    Some((gw, model))
}

fn ours(gw: &Gateway, key: &str, extra: &[&str]) -> Value {
    claw_json({
        let mut c = gw.claw("claw-transcript");
        c.args(["history", key, "--json"]).args(extra);
        c
    })
}

#[test]
fn history_of_every_db_session_is_the_96_gateways_sessions_history() {
    let Some((gw, _model)) = gateway_on_fixture() else {
        return;
    };
    let mut compared = 0;
    let mut seen_compaction = false;
    for agent in agent_db_support::AGENTS {
        let db = gw
            .state
            .join("agents")
            .join(agent)
            .join("agent/openclaw-agent.sqlite");
        for key in session_keys(&db) {
            for (tools, extra) in [(true, &["--include-tools"][..]), (false, &[][..])] {
                let theirs = gw.tool(
                    "agent:main:main",
                    "sessions_history",
                    json!({"sessionKey": key, "includeTools": tools}),
                );
                let mine = ours(&gw, &key, extra);
                assert_same_json(&mine, &theirs, &format!("history {key} (tools: {tools})"));
                assert_eq!(
                    serde_json::to_string(&mine).unwrap(),
                    serde_json::to_string(&theirs).unwrap(),
                    "history {key}: key order"
                );
                seen_compaction |= theirs.to_string().contains("\"kind\":\"compaction\"");
                compared += 1;
            }
            let theirs = gw.tool(
                "agent:main:main",
                "sessions_history",
                json!({"sessionKey": key, "includeTools": true, "limit": 3}),
            );
            let mine = ours(&gw, &key, &["--include-tools", "--limit", "3"]);
            assert_same_json(&mine, &theirs, &format!("history {key} --limit 3"));
        }
    }
    assert_eq!(compared, 20, "ten sessions, with and without tools");
    assert!(seen_compaction, "the fixture's compactions are compared");
}
