//! The state database as attacker-controlled input: a writer refuses (exit 65, naming the
//! objects, changing nothing) a database whose schema carries triggers, views or foreign
//! keys on the tables clawstate touches, since SQLite would run them inside clawstate's own
//! write transactions; the canonical schemas (15 and 18) are accepted; reads run no planted
//! code.

mod signals_support;

use std::path::Path;

use clawstate::signals::rusqlite::Connection;
use serde_json::{json, Value};
use signals_support::{dump_schema, ok, query_all, Sandbox};

const T: i64 = 1_795_989_048_800;
const C1: &str = "agent:main:subagent:c1";
const MAIN: &str = "agent:main:main";

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Everything in the database: its schema, user_version and every row of every table.
fn dump(db: &Path) -> Value {
    let conn = Connection::open(db).unwrap();
    let uv: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let tables: Vec<String> = query_all(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )
    .into_iter()
    .map(|r| r["name"].as_str().unwrap().to_string())
    .collect();
    let mut rows = serde_json::Map::new();
    for t in tables {
        let q = format!("SELECT * FROM \"{t}\" ORDER BY rowid");
        rows.insert(t, Value::Array(query_all(&conn, &q)));
    }
    json!({"userVersion": uv, "schema": dump_schema(db), "rows": rows})
}

/// A canonical database (made by `claw-signals record`) with one event and one cursor.
fn seeded(dir: &Path) -> Sandbox {
    let sb = Sandbox::new(dir);
    ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
    ok(sb.watch(T, &["add", MAIN, C1]));
    sb
}

fn plant(sb: &Sandbox, sql: &str) {
    Connection::open(sb.db())
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

/// `record` and `watch add` both refuse with 65 naming `names`; the database is unchanged.
fn assert_writers_refuse(sb: &Sandbox, names: &[&str]) {
    let before = dump(&sb.db());
    let record = sb.signals(
        T + 1,
        &["record", "--session", C1, "--kind", "human_direct_message"],
    );
    let add = sb.watch(T + 1, &["add", "agent:main:other", C1]);
    for (what, o) in [("record", &record), ("watch add", &add)] {
        assert_eq!(code(o), 65, "{what}: {}", err(o));
        for n in names {
            assert!(err(o).contains(n), "{what} does not name {n}: {}", err(o));
        }
    }
    assert_eq!(dump(&sb.db()), before, "the database changed");
}

#[test]
fn a_trigger_on_the_signal_log_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    plant(
        &sb,
        "CREATE TRIGGER wipe_cursors AFTER INSERT ON session_state_events \
         BEGIN DELETE FROM session_watch_cursors; END;",
    );
    assert_writers_refuse(&sb, &["wipe_cursors", "session_state_events"]);
    // Reads still work (triggers do not fire on reads) and see the cursor.
    assert!(ok(sb.watch(T, &["list", "--ndjson"])).contains(MAIN));
}

#[test]
fn a_trigger_that_would_hang_the_write_transaction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    plant(
        &sb,
        "CREATE TRIGGER spin BEFORE UPDATE ON session_watch_cursors BEGIN \
         SELECT count(*) FROM (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r); END;",
    );
    assert_writers_refuse(&sb, &["spin"]);
}

#[test]
fn a_view_on_the_signal_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    plant(
        &sb,
        "CREATE VIEW cursor_report AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
         SELECT * FROM session_watch_cursors, r;",
    );
    assert_writers_refuse(&sb, &["cursor_report"]);
}

#[test]
fn a_view_in_place_of_a_table_clawstate_deletes_from_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    // `forget` deletes from session_upstream_links: a view of that name with an INSTEAD OF
    // trigger would run the attacker's statement in its place.
    plant(
        &sb,
        "DROP TABLE session_upstream_links; \
         CREATE VIEW session_upstream_links AS SELECT session_key, agent_id FROM session_state_heads; \
         CREATE TRIGGER instead_wipe INSTEAD OF DELETE ON session_upstream_links \
         BEGIN DELETE FROM session_watch_cursors; END;",
    );
    assert_writers_refuse(&sb, &["session_upstream_links", "instead_wipe"]);
    let before = dump(&sb.db());
    let o = sb.signals(T, &["forget", C1]);
    assert_eq!(code(&o), 65, "{}", err(&o));
    assert_eq!(dump(&sb.db()), before);
}

#[test]
fn a_foreign_key_cascading_from_the_signal_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    // A deletion of a head would cascade into `shadow`, whose trigger wipes the cursors.
    plant(
        &sb,
        "CREATE TABLE shadow (k TEXT, a TEXT, FOREIGN KEY (k, a) REFERENCES session_state_heads(session_key, agent_id) ON DELETE CASCADE); \
         INSERT INTO shadow SELECT session_key, agent_id FROM session_state_heads; \
         CREATE TRIGGER shadow_wipe AFTER DELETE ON shadow BEGIN DELETE FROM session_watch_cursors; END;",
    );
    assert_writers_refuse(&sb, &["shadow"]);
}

#[test]
fn triggers_and_views_elsewhere_in_the_database_are_tolerated() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    plant(
        &sb,
        "CREATE TABLE site_notes (n TEXT); \
         CREATE TRIGGER site_notes_stamp AFTER INSERT ON site_notes BEGIN SELECT 1; END; \
         CREATE VIEW site_notes_view AS SELECT n FROM site_notes;",
    );
    ok(sb.signals(
        T + 1,
        &["record", "--session", C1, "--kind", "human_direct_message"],
    ));
    ok(sb.watch(T + 1, &["add", "agent:main:other", C1]));
}

/// A database holding exactly a canonical schema file, at its version.
fn canonical(sb: &Sandbox, schema_file: &str, version: i64) {
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/spec")
            .join(schema_file),
    )
    .or_else(|_| std::fs::read_to_string(Path::new("/work/shared/spec").join(schema_file)))
    .unwrap()
    // SQLite makes its own sqlite_sequence (the v18 dump lists it).
    .replace("CREATE TABLE sqlite_sequence(name,seq);", "");
    std::fs::create_dir_all(sb.db().parent().unwrap()).unwrap();
    let conn = Connection::open(sb.db()).unwrap();
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")
        .unwrap();
    conn.execute_batch(&sql).unwrap();
    conn.execute_batch(&format!("PRAGMA user_version = {version};"))
        .unwrap();
    conn.execute(
        "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, app_version, created_at, updated_at) \
         VALUES ('primary', 'global', ?1, NULL, 'x', 1, 1)",
        [version],
    )
    .unwrap();
}

#[test]
fn the_canonical_schemas_15_and_18_are_written() {
    for (file, version) in [("state-schema-v15.sql", 15), ("state-schema-v18.sql", 18)] {
        let dir = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(dir.path());
        canonical(&sb, file, version);
        ok(sb.signals(T, &["record", "--session", C1, "--kind", "compacted"]));
        ok(sb.watch(T, &["add", MAIN, C1]));
        ok(sb.signals(T, &["forget", C1]));
    }
}

#[test]
fn a_planted_view_in_the_agent_database_does_not_run_on_reads() {
    let dir = tempfile::tempdir().unwrap();
    let sb = seeded(dir.path());
    let agent_db = sb.state_dir.join("agents/main/agent/openclaw-agent.sqlite");
    std::fs::create_dir_all(agent_db.parent().unwrap()).unwrap();
    // An endless view in place of the session_nodes table.
    Connection::open(&agent_db)
        .unwrap()
        .execute_batch(
            "CREATE VIEW session_nodes AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
             SELECT 'never' || n AS session_key FROM r;",
        )
        .unwrap();
    let mut c = sb.cmd("claw-signals");
    c.args([
        "--now",
        &T.to_string(),
        "changes-since",
        "agent:main:nope",
        "0",
    ]);
    let o = assert_cmd::Command::from_std(c)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(code(&o), 3, "{}", err(&o));
}
