//! Deeply nested JSON is data like any other: a store entry or a transcript line nested
//! hundreds or a hundred thousand levels deep is listed, kept, checked and repaired, never
//! dropped and never a crash (issue 22, items 4 and 5).
//!
//! What the gateway does (measured on openclaw@2026.7.1, Node 24.22): `JSON.parse` reads
//! any depth, but its recursive walks do not. `openclaw sessions` lists an entry nested up
//! to about 4,470 levels and fails as a whole beyond ("Maximum call stack size exceeded",
//! exit 1); `openclaw sessions cleanup --enforce` keeps and rewrites such an entry up to
//! about 4,390 levels (`JSON.stringify(store, null, 2)`) and fails beyond, changing
//! nothing; its transcript repair keeps a deep line byte for byte while no repair is
//! needed at any depth, and rewrites it (`JSON.stringify`) up to about 4,450 levels, failing
//! with a RangeError beyond, changing nothing. `tests/differential_deep_json.rs` checks
//! the 200-level case against the peer itself.
//!
//! Where the gateway gives up, we keep going: the entry is listed and kept, the line
//! checked and kept. Stores are written as the gateway writes them, except that
//! containers nested deeper than [`clawstate::js::jsjson::PRETTY_DEPTH`] (beyond any depth the
//! gateway can write) are written compact, so that a 100k-level entry stays ~200 KB and
//! not the ~20 GB two-space indentation would make of it.

mod support;

use std::path::{Path, PathBuf};

use support::{claw, json_of};

const NOW: i64 = 1_780_000_000_000;
const HOUR: i64 = 3_600_000;
const DEEP_ID: &str = "11111111-1111-4111-8111-111111111111";
const PLAIN_ID: &str = "22222222-2222-4222-8222-222222222222";

/// `{"x":{"x":…1…}}`, `n` objects deep, as `JSON.stringify` writes it.
fn compact_chain(n: usize) -> String {
    let mut s = "{\"x\":".repeat(n);
    s.push('1');
    s.push_str(&"}".repeat(n));
    s
}

/// [`compact_chain`] as `JSON.stringify(v, null, 2)` writes it nested at `depth` levels,
/// containers whose members would be indented deeper than `cap` levels written compact.
fn pretty_chain(n: usize, depth: usize, cap: usize) -> String {
    let pretty = n.min(cap.saturating_sub(depth));
    let mut s = String::new();
    for k in 0..pretty {
        s.push_str("{\n");
        s.push_str(&"  ".repeat(depth + k + 1));
        s.push_str("\"x\": ");
    }
    s.push_str(&compact_chain(n - pretty));
    for k in (0..pretty).rev() {
        s.push('\n');
        s.push_str(&"  ".repeat(depth + k));
        s.push('}');
    }
    s
}

/// A store of two fresh entries, the first holding `extra` (its text as given).
fn store_text(extra: &str) -> String {
    let at = NOW - HOUR;
    format!(
        "{{\n  \"agent:main:deep\": {{\n    \"sessionId\": \"{DEEP_ID}\",\n    \"updatedAt\": {at},\n    \"extra\": {extra}\n  }},\n  \"agent:main:plain\": {{\n    \"sessionId\": \"{PLAIN_ID}\",\n    \"updatedAt\": {at}\n  }}\n}}"
    )
}

/// The store as the gateway (and we) write it: `extra` nested `n` deep, canonical.
fn canonical_store(n: usize) -> String {
    store_text(&pretty_chain(n, 2, clawstate::js::jsjson::PRETTY_DEPTH))
}

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
        Fixture {
            _tmp: tmp,
            home,
            sessions,
        }
    }

    fn with_store(text: &str) -> Self {
        let f = Fixture::new();
        std::fs::write(f.store_path(), text).unwrap();
        f
    }

    fn store_path(&self) -> PathBuf {
        self.sessions.join("sessions.json")
    }

    fn store(&self) -> String {
        std::fs::read_to_string(self.store_path()).unwrap()
    }

    fn sessions_cmd(&self) -> assert_cmd::Command {
        let mut c = claw("claw-sessions", &self.home);
        c.arg("--now").arg(NOW.to_string());
        c
    }

    fn transcript_cmd(&self) -> assert_cmd::Command {
        claw("claw-transcript", &self.home)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.sessions.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn stdout_of(c: &mut assert_cmd::Command) -> Vec<u8> {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn listed_keys(f: &Fixture) -> Vec<String> {
    let v = json_of(&stdout_of(f.sessions_cmd().args(["list", "--json"])));
    assert_eq!(v["count"], 2, "{v}");
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_string())
        .collect()
}

/// The dry run's and the enforce run's counts: `(beforeCount, afterCount, pruned)`.
fn cleanup_counts(f: &Fixture, enforce: bool) -> (i64, i64, i64) {
    let mut c = f.sessions_cmd();
    c.args(["cleanup", "--json"]);
    c.arg(if enforce { "--enforce" } else { "--dry-run" });
    let v = json_of(&stdout_of(&mut c));
    let n = |k: &str| v[k].as_i64().unwrap_or_else(|| panic!("{k}: {v}"));
    (n("beforeCount"), n("afterCount"), n("pruned"))
}

fn assert_lists_both(f: &Fixture) {
    let mut keys = listed_keys(f);
    keys.sort();
    assert_eq!(keys, ["agent:main:deep", "agent:main:plain"]);
}

#[test]
fn list_shows_an_entry_nested_200_deep() {
    assert_lists_both(&Fixture::with_store(&store_text(&compact_chain(200))));
}

#[test]
fn list_shows_an_entry_nested_100k_deep() {
    assert_lists_both(&Fixture::with_store(&store_text(&compact_chain(100_000))));
}

/// The gateway's `cleanup --enforce` rewrites this store as `JSON.stringify(store, null,
/// 2)`, the 200-level chain indented (the differential test compares the bytes).
#[test]
fn cleanup_keeps_an_entry_nested_200_deep() {
    let f = Fixture::with_store(&store_text(&compact_chain(200)));
    assert_eq!(cleanup_counts(&f, false), (2, 2, 0));
    assert_eq!(cleanup_counts(&f, true), (2, 2, 0));
    assert_eq!(f.store(), canonical_store(200));
    assert_lists_both(&f);
    // Written in its final form: the next run keeps every byte.
    assert_eq!(cleanup_counts(&f, true), (2, 2, 0));
    assert_eq!(f.store(), canonical_store(200));
}

/// A store already in its written form keeps every byte, at any depth.
#[test]
fn cleanup_keeps_an_entry_nested_100k_deep_byte_for_byte() {
    let text = canonical_store(100_000);
    let f = Fixture::with_store(&text);
    assert_eq!(cleanup_counts(&f, false), (2, 2, 0));
    assert_eq!(f.store(), text);
    assert_eq!(cleanup_counts(&f, true), (2, 2, 0));
    assert!(f.store() == text, "the 100k-level store changed");
    assert_lists_both(&f);
}

/// A 100k-level entry written compact is rewritten in the store's form (indented as far
/// as [`clawstate::js::jsjson::PRETTY_DEPTH`]): same value, nothing lost.
#[test]
fn cleanup_rewrites_a_compact_100k_entry_without_loss() {
    let f = Fixture::with_store(&store_text(&compact_chain(100_000)));
    assert_eq!(cleanup_counts(&f, true), (2, 2, 0));
    assert!(f.store() == canonical_store(100_000));
}

fn transcript(deep: &str, bad_tail: bool) -> (Vec<String>, String) {
    let mut lines = vec![
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#.to_string(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_string(),
        format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"deep"}}],"timestamp":2,"meta":{deep}}}}}"#),
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"after","timestamp":3}}"#.to_string(),
    ];
    if bad_tail {
        lines.push(r#"{"type":"message","id":"bad"#.to_string());
    }
    let text = lines.join("\n") + "\n";
    (lines, text)
}

fn check_is_clean(f: &Fixture, p: &Path) {
    let o = f.transcript_cmd().arg("check").arg(p).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && !out.contains("invalid-json") && !err.contains("invalid-json"),
        "exit {:?}\n{out}\n{err}",
        o.status.code()
    );
}

fn repair_keeps_the_deep_line(n: usize) {
    let f = Fixture::new();
    let (lines, text) = transcript(&compact_chain(n), true);
    let p = f.write("t.jsonl", &text);
    let o = f.transcript_cmd().arg("repair").arg(&p).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = std::fs::read_to_string(&p).unwrap();
    // Only the torn line goes; the deep one stays byte for byte (as the gateway's repair
    // writes it: it is already `JSON.stringify` of itself).
    assert!(
        after == lines[..4].join("\n") + "\n",
        "repair changed the deep line"
    );
    check_is_clean(&f, &p);
}

#[test]
fn check_accepts_a_line_nested_200_deep() {
    let f = Fixture::new();
    let p = f.write("t.jsonl", &transcript(&compact_chain(200), false).1);
    check_is_clean(&f, &p);
}

#[test]
fn check_accepts_a_line_nested_100k_deep() {
    let f = Fixture::new();
    let p = f.write("t.jsonl", &transcript(&compact_chain(100_000), false).1);
    check_is_clean(&f, &p);
}

#[test]
fn repair_keeps_a_line_nested_200_deep() {
    repair_keeps_the_deep_line(200);
}

#[test]
fn repair_keeps_a_line_nested_100k_deep() {
    repair_keeps_the_deep_line(100_000);
}

/// `cat` prints the deep row and `history` shows its message, on the active branch.
#[test]
fn cat_and_history_read_a_line_nested_100k_deep() {
    for n in [200, 100_000] {
        let f = Fixture::new();
        let (lines, text) = transcript(&compact_chain(n), false);
        let p = f.write("t.jsonl", &text);
        let cat = stdout_of(f.transcript_cmd().arg("cat").arg(&p));
        let cat = String::from_utf8(cat).unwrap();
        assert!(
            cat.lines().any(|l| l == lines[2]),
            "{n}: cat left out the deep row"
        );
        let branch = stdout_of(f.transcript_cmd().args(["cat", "--branch"]).arg(&p));
        assert_eq!(
            String::from_utf8(branch).unwrap().lines().count(),
            3,
            "{n}: the active branch lost rows"
        );
        let h = json_of(&stdout_of(
            f.transcript_cmd().args(["history", "--json"]).arg(&p),
        ));
        let texts: Vec<String> = h["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("{h}"))
            .iter()
            .map(|m| m["content"].to_string())
            .collect();
        assert_eq!(texts.len(), 3, "{n}: {texts:?}");
        // A 600 KB message is over history's size cap: shown as the gateway shows one.
        let want = if n == 200 {
            "deep"
        } else {
            "[chat.history omitted: message too large]"
        };
        assert!(texts[1].contains(want), "{n}: {texts:?}");
    }
}
