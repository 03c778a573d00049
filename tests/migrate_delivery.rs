//! `claw-migrate import` of store entries with delivery state, against openclaw 2026.9.6's
//! `doctor --session-sqlite import`: legacy entries with a `route` (telegram, slack,
//! discord), a `deliveryContext` with account and thread, rich `origin` objects,
//! `lastAccountId`/`lastThreadId`, internal channels (webchat, cron), pending deliveries
//! and notices, fallback and memory-flush fields, icons and colours, archive fields, an
//! already-folded `delivery`, and fields nobody knows; user messages with attachments in
//! the legacy `Media*` carriers, and a topic transcript that only its `sessionFile`
//! names. The same dir imported by both tools gives the same canonical dump
//! (`entry_json`, the promoted columns, every other table); `export` of clawstate's DB
//! and `import` again give the same rows.

mod agent_db_support;
mod migrate_support;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use migrate_support::canonical_dump;
use serde_json::{json, Map, Value};
use support::claw;

const NOW: i64 = 1_796_000_000_000;

fn ts(ms: i64) -> String {
    clawstate::js::to_iso_string(ms)
}

/// The entries of the store (key, fields besides `sessionId`/`updatedAt`/`sessionFile`).
fn shapes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "agent:main:telegram:direct:4242",
            json!({"chatType":"direct","route":{"channel":"telegram","accountId":"Bot Two","target":{"to":"4242","chatType":"direct"},"thread":{"id":77,"kind":"topic"}},
                "lastChannel":"telegram","lastTo":"4242"}),
        ),
        (
            "agent:main:slack:channel:c123",
            json!({"chatType":"channel","deliveryContext":{"channel":"slack","to":"channel:C123","accountId":"work","threadId":"1700000000.0001"},
                "lastChannel":"slack","lastTo":"channel:C123","lastAccountId":"work","lastThreadId":"1700000000.0001"}),
        ),
        (
            "agent:main:discord:channel:99",
            json!({"origin":{"provider":"discord","to":"channel:99","accountId":"default","threadId":"555","chatType":"channel","label":"#general","from":"discord:user:1"},
                "lastChannel":"discord","lastTo":"channel:99"}),
        ),
        (
            "agent:main:telegram:group:-100",
            json!({"chatType":"group","lastChannel":"Telegram","lastTo":" -100 ","lastAccountId":"default","lastThreadId":12}),
        ),
        (
            "agent:main:discord:route-only",
            json!({"route":{"channel":"discord","target":{"to":"user:5","rawTo":"<@5>"}}}),
        ),
        (
            "agent:main:main",
            json!({"chatType":"direct","lastChannel":"webchat","lastTo":"webchat:client","origin":{"provider":"webchat"}}),
        ),
        (
            "agent:main:cron:nightly",
            json!({"channel":"cron","lastChannel":"cron"}),
        ),
        (
            "agent:main:slack:internal-fallback",
            json!({"lastChannel":"webchat","deliveryContext":{"channel":"slack","to":"user:U1"},"lastAccountId":"acct"}),
        ),
        (
            "agent:main:telegram:pending",
            json!({"lastChannel":"telegram","lastTo":"9","pendingFinalDelivery":true,"pendingFinalDeliveryText":" the answer ",
                "pendingFinalDeliveryCreatedAt":NOW - 5000,"pendingFinalDeliveryLastAttemptAt":NOW - 4000,"pendingFinalDeliveryAttemptCount":2,
                "pendingFinalDeliveryLastError":"timeout","pendingFinalDeliveryContext":{"channel":"telegram","to":"9"},"pendingFinalDeliveryIntentId":"intent-1",
                "pendingDeliveryNotice":{"createdAt":NOW - 3000,"context":{"channel":"telegram","to":"9"},"intentId":"n-1","state":"owed","extra":1}}),
        ),
        (
            "agent:main:pending-transport",
            json!({"pendingFinalDelivery":true,"pendingDeliveryNotice":{"state":"owed"},"pendingTranscriptRepair":[{"id":"r1","text":"fix","createdAt":NOW,"provider":" openai "},{"id":"","text":"x"}]}),
        ),
        (
            "agent:main:pending-object",
            json!({"pendingFinalDelivery":{"kind":"replayable","text":"t","createdAt":NOW - 10,"deliveries":[{"id":"d1","state":"queued"},{"id":"d2","state":"bogus"}],"intentId":" i2 "},
                "pendingFinalDeliveryText":"ignored"}),
        ),
        (
            "agent:main:notices",
            json!({"fallbackNoticeSelectedModel":"openai/gpt-5.5","fallbackNoticeActiveModel":"openai/gpt-5-mini","fallbackNoticeReason":"rate limit",
                "memoryFlushAt":NOW - 100,"memoryFlushCompactionCount":3.7,"memoryFlushFailureCount":0,"memoryFlushContextHash":"abc",
                "icon":" bot ","color":" Blue ","owner":"u","participants":["a"],"participantCount":1}),
        ),
        (
            "agent:main:notices-objects",
            json!({"fallbackNotice":{"kind":"active","selectedModel":"a","activeModel":"b"},"memoryFlush":{"kind":"failed","failureCount":2,"compactionCount":1},
                "memoryFlushFailureCount":5,"icon":"not an icon","color":"mauve"}),
        ),
        (
            "agent:main:archived",
            json!({"archivedAt":NOW - 1000,"archiveReason":"manual","archivedBy":"operator","label":"old"}),
        ),
        (
            "agent:main:archive-fields-only",
            json!({"archiveReason":"manual","archivedBy":"operator"}),
        ),
        (
            "agent:main:archived-bad-reason",
            json!({"archivedAt":NOW - 1000,"archiveReason":"because"}),
        ),
        (
            "agent:main:folded",
            json!({"chatType":"direct","delivery":{"kind":"external","route":{"channel":"telegram","target":{"to":"31"}},"context":{"channel":"telegram","to":"31"},"origin":{"provider":"telegram","to":"31"}}}),
        ),
        (
            "agent:main:folded-none-recovered",
            json!({"delivery":{"kind":"none"},"lastChannel":"telegram","lastTo":"32"}),
        ),
        (
            "agent:main:folded-internal",
            json!({"delivery":{"kind":"internal"},"displayName":"Internal"}),
        ),
        (
            "agent:main:unknown-fields",
            json!({"someFutureField":{"nested":[1,2,{"x":"caf\u{e9}"}]},"zeta":null,"alpha":1.5e300,"lastTo":"orphan-to"}),
        ),
        (
            "agent:main:origin-only",
            json!({"origin":{"provider":"signal","to":"+15550001","chatType":"direct"}}),
        ),
        (
            "agent:main:provider-aliases",
            json!({"provider":"telegram","lastProvider":"telegram","lastTo":"77","room":"r"}),
        ),
    ]
}

/// Writes `<home>/.openclaw` with one agent whose store holds every shape, each with a
/// small transcript.
fn write_dir(home: &Path) {
    let state = home.join(".openclaw");
    let dir = state.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Map::new();
    let mut rng = support::Rng::new(2626);
    for (i, (key, fields)) in shapes().into_iter().enumerate() {
        let id = rng.uuid();
        let updated = NOW - (i as i64 + 1) * 60_000;
        // A topic session's transcript is not `<sessionId>.jsonl`: its sessionFile names it.
        let file = match i {
            4 => dir.join(format!("{id}-topic-7.jsonl")),
            _ => dir.join(format!("{id}.jsonl")),
        };
        let lines = [
            json!({"type":"session","version":3,"id":id,"timestamp":ts(updated - 10_000),"cwd":"/w"}),
            json!({"type":"message","id":format!("{:08x}", i + 1),"parentId":null,"timestamp":ts(updated - 9_000),
                "message":{"role":"user","content":[{"type":"text","text":format!("hello {key}")}],"timestamp":updated - 9_000}}),
        ];
        // Attachments in the legacy carriers 9.6 folds into `__openclaw.media` on import.
        let media = match i % 4 {
            1 => {
                json!({"MediaPath":" /in/photo.jpg ","MediaType":"image/jpeg","MediaUrl":"https://cdn/p.jpg","MediaTranscribedIndexes":[0]})
            }
            2 => {
                json!({"media":[{"path":"/in/v.mp4","kind":"video","durationMs":1200}],"MediaPaths":["/in/v.mp4","/in/a.ogg"],"MediaTypes":["video/mp4","audio"]})
            }
            3 => {
                json!({"__openclaw":{"media":[{"url":" https://x/1 ","sizeBytes":12}]},"MediaStaged":true,"MediaWorkspaceDir":"/ws"})
            }
            _ => json!({}),
        };
        let mut message = json!({"role":"user","content":[{"type":"text","text":"see attached"}],"timestamp":updated - 8_000});
        message
            .as_object_mut()
            .unwrap()
            .extend(media.as_object().unwrap().clone());
        let lines = [
            lines[0].clone(),
            lines[1].clone(),
            json!({"type":"message","id":format!("m{:07x}", i + 1),"parentId":format!("{:08x}", i + 1),"timestamp":ts(updated - 8_000),"message":message}),
        ];
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, body).unwrap();
        let mut e = Map::new();
        e.insert("sessionId".into(), json!(id));
        e.insert("updatedAt".into(), json!(updated));
        e.insert("sessionFile".into(), json!(file.to_string_lossy()));
        for (k, v) in fields.as_object().unwrap() {
            e.insert(k.clone(), v.clone());
        }
        store.insert(key.to_string(), Value::Object(e));
    }
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&Value::Object(store)).unwrap(),
    )
    .unwrap();
    std::fs::write(
        state.join("openclaw.json"),
        r#"{"agents":{"list":[{"id":"main","default":true}]}}"#,
    )
    .unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

fn db(home: &Path) -> PathBuf {
    agent_db_support::db_of(home, "main")
}

/// Panics with the first rows that differ, table by table.
fn assert_same_rows(
    theirs: &BTreeMap<String, Vec<String>>,
    ours: &BTreeMap<String, Vec<String>>,
    what: &str,
) {
    assert_eq!(
        theirs.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>(),
        "{what}: tables"
    );
    let mut diffs = Vec::new();
    for (table, rows) in theirs {
        let mine = &ours[table];
        if rows != mine {
            let only_theirs: Vec<_> = rows.iter().filter(|r| !mine.contains(r)).collect();
            let only_ours: Vec<_> = mine.iter().filter(|r| !rows.contains(r)).collect();
            diffs.push(format!(
                "{what}: {table} differs\n doctor only: {only_theirs:#?}\n clawstate only: {only_ours:#?}"
            ));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Doctor's import of a copy of the legacy dir.
fn doctor_import(legacy: &Path, base: &Path) -> PathBuf {
    let peer = agent_db_support::peer96().expect("checked");
    let theirs = base.join("doctor");
    copy_tree(legacy, &theirs);
    agent_db_support::doctor_import(&peer, &theirs, "the delivery dir");
    theirs
}

#[test]
fn entries_with_delivery_state_import_to_doctors_rows() {
    if agent_db_support::peer96().is_none() {
        eprintln!("skipped: openclaw 2026.9.6 is not available");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let legacy = base.path().join("legacy");
    write_dir(&legacy);
    let ours = base.path().join("clawstate");
    copy_tree(&legacy, &ours);
    let theirs = doctor_import(&legacy, base.path());
    claw("claw-migrate", &ours)
        .args(["plan", "--all-agents"])
        .assert()
        .success();
    claw("claw-migrate", &ours)
        .args(["import", "--all-agents"])
        .assert()
        .success();
    let a = dump(&theirs);
    let b = dump(&ours);
    assert!(
        a["session_nodes"].len() == shapes().len(),
        "doctor imported every entry: {:#?}",
        a["session_nodes"]
    );
    assert_same_rows(&a, &b, "import");

    // export -> import round-trips: clawstate's DB exported to the legacy layout and
    // imported again gives the same rows.
    let fresh = base.path().join("fresh");
    let fresh_state = fresh.join(".openclaw");
    claw("claw-migrate", &ours)
        .args(["--all-agents", "export", "--out"])
        .arg(&fresh_state)
        .assert()
        .success();
    std::fs::copy(
        ours.join(".openclaw/openclaw.json"),
        fresh_state.join("openclaw.json"),
    )
    .unwrap();
    claw("claw-migrate", &fresh)
        .args(["import", "--all-agents"])
        .assert()
        .success();
    assert_same_rows(
        &without_mtimes(&b),
        &without_mtimes(&dump(&fresh)),
        "export then import",
    );
}

/// The dump with `transcript_updated_at` (the transcript file's mtime) masked: an export
/// writes new files.
fn without_mtimes(d: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    d.iter()
        .map(|(t, rows)| {
            let mut rows: Vec<String> = rows
                .iter()
                .map(|r| {
                    r.split('|')
                        .map(|c| {
                            if c.starts_with("transcript_updated_at=") {
                                "transcript_updated_at=<mtime>"
                            } else {
                                c
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect();
            rows.sort();
            (t.clone(), rows)
        })
        .collect()
}

/// The canonical dump of the agent DB under `home`.
fn dump(home: &Path) -> BTreeMap<String, Vec<String>> {
    canonical_dump(&db(home))
}
