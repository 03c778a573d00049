//! The fuzz targets. Each takes raw bytes, drives one parser of the library and panics when
//! an invariant breaks; "no panic" is the first invariant of all. The same functions run
//! under AFL++ (`afl-target TARGET`) and under the stable driver (`clawstate-fuzz`).

use std::collections::HashSet;

use clawstate::js::byte_size::parse_byte_size;
use clawstate::install::config::{parse_json5, Config};
use clawstate::install::context::{GlobalOptions, StateContext};
use clawstate::js::duration::{parse_duration_ms, DurationUnit};
use clawstate::store::lifecycle::{expand_patch_shorthands, merge_patch, validate_patched_entry};
use clawstate::install::paths::Environment;
use clawstate::session::session_key as sk;
use clawstate::ops::session_ops::{self, WriteOptions};
use clawstate::maintenance::store_pass::{PassMode, StoreFacts};
use clawstate::store::normalize::normalize_entry;
use clawstate::store::scan::StoreScan;
use clawstate::store::{LoadOptions, SessionStore};
use clawstate::install::targets::TargetSelection;
use clawstate::transcript::{entry, migrate, reader, repair, tail, tree};
use serde_json::{Map, Value};

use crate::sandbox::{self, assert_not_denied, snapshot};

/// The clock every target uses (2026-01-01T00:00:00Z).
pub const NOW_MS: i64 = 1_767_225_600_000;

/// One fuzz target.
pub struct Target {
    /// Its name (the corpus directory under `fuzz/corpus/`).
    pub name: &'static str,
    /// What it covers.
    pub about: &'static str,
    /// Runs one input.
    pub run: fn(&[u8]),
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "store",
        about: "sessions.json: SessionStore::load/serialize/save, StoreScan, entry normalisation",
        run: store,
    },
    Target {
        name: "transcript",
        about: "JSONL transcripts: tolerant reader, scan_lines, tail reads, tree/leaf/branch, history, repair, migrate",
        run: transcript,
    },
    Target {
        name: "session_key",
        about: "session keys: normalize/parse/resolve/canonicalize, chat type, thread id, predicates",
        run: session_key,
    },
    Target {
        name: "units",
        about: "durations (parse_duration_ms) and byte sizes (parse_byte_size)",
        run: units,
    },
    Target {
        name: "config",
        about: "JSON5 config: parse_json5, Config::load/from_value validation and accessors",
        run: config,
    },
    Target {
        name: "patch",
        about: "claw-sessions patch --merge: merge_patch, validate_patched_entry, session_ops::patch on a temp store",
        run: patch,
    },
];

/// The target called `name`.
pub fn by_name(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// Splits an input at NUL bytes into at most `n` parts (the last keeps any further NULs).
fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.splitn(n, |&b| b == 0).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------------------------------
// store

/// `sessions.json` bytes. Invariants: the streaming scan and the full load agree (error
/// for error, entry for entry); what we serialise loads again to the same entries and the
/// same bytes; load → save reaches a fixed point (a second save writes nothing); nothing
/// leaves the sandbox.
pub fn store(data: &[u8]) {
    let sb = sandbox::init();
    let w = sb.fresh();
    let dir = w.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("sessions.json");
    std::fs::write(&p, data).unwrap();

    let loaded = SessionStore::load(&p, LoadOptions::default());
    let plain = SessionStore::load(
        &p,
        LoadOptions {
            hydrate_prompts: false,
        },
    );
    let scan = StoreScan::open(&p);
    if let Err(e) = &loaded {
        assert_not_denied("load", e);
    }
    match (&loaded, &plain, &scan) {
        (Ok(_), Ok(_), Ok(_)) => {}
        (Err(a), Err(b), Err(c)) => {
            let (a, b, c) = (a.to_string(), b.to_string(), c.to_string());
            assert_eq!(a, b, "load errors differ with and without hydration");
            assert_eq!(
                a, c,
                "StoreScan and SessionStore::load report different errors"
            );
            return;
        }
        _ => panic!(
            "load/scan disagree: load {:?}, plain {:?}, scan {:?}",
            loaded.as_ref().err(),
            plain.as_ref().err(),
            scan.as_ref().err()
        ),
    }
    let mut store = loaded.unwrap();
    let plain = plain.unwrap();
    let scan = scan.unwrap();

    // The scan keeps exactly the entries the load keeps, in the same order, same values.
    let mut kept: Vec<String> = Vec::new();
    for i in 0..scan.len() {
        let key = scan.key(i).to_string();
        let entry = scan.entry(i);
        let peek = scan.peek_updated_at(i);
        assert_eq!(
            peek.is_some(),
            entry.is_some(),
            "peek_updated_at and entry disagree on whether {key:?} survives"
        );
        if let (Some(Some(u)), Some(e)) = (peek, &entry) {
            if let Some(n) = e.get("updatedAt").and_then(Value::as_f64) {
                assert_eq!(u, n, "peeked updatedAt of {key:?} differs from the entry's");
            }
        }
        if let Some(e) = entry {
            assert_eq!(
                plain.entry(&key),
                Some(&e),
                "scan entry {key:?} differs from the loaded one"
            );
            kept.push(key);
        }
    }
    let loaded_keys: Vec<&String> = plain.entries().keys().collect();
    assert_eq!(
        loaded_keys.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        kept.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "scan and load keep different keys"
    );

    // serialise ∘ load settles: applied to its own output it changes nothing (compared as
    // JavaScript sees values: 1.0 and 1 are the same number). One extra round is allowed,
    // because the gateway's normalisation is not idempotent on a few junk shapes (a junk
    // `lastThreadId` hides `origin.threadId` on the first pass only), and we mirror it.
    let js = |s: &SessionStore| {
        clawstate::js::jsjson::to_string_compact(&Value::Object(s.entries().clone()))
    };
    let round = |text: &str, name: &str| -> (String, String) {
        let p2 = dir.join(name);
        std::fs::write(&p2, text).unwrap();
        let s = SessionStore::load(&p2, LoadOptions::default())
            .unwrap_or_else(|e| panic!("our own serialisation does not load: {e}\n{text}"));
        let (t, blobs) = s.serialize();
        for b in &blobs {
            clawstate::store::prompt_blobs::write_blob(b).expect("blob write inside the sandbox");
        }
        (js(&s), t)
    };
    let (text1, blobs) = store.serialize();
    for b in &blobs {
        clawstate::store::prompt_blobs::write_blob(b).expect("blob write inside the sandbox");
    }
    let (e2, text2) = round(&text1, "again.json");
    if text2 != text1 || e2 != js(&store) {
        let (e3, text3) = round(&text2, "again2.json");
        assert_eq!(
            text3, text2,
            "serialise(load(x)) does not settle after two rounds"
        );
        assert_eq!(
            e3, e2,
            "load(serialise(load(x))) does not settle after two rounds"
        );
    }

    // Maintenance reads a store in the form the gateway writes (canonical text) down a lean
    // road: it must write back exactly what the full load and save write, and give the
    // facts the full pass gives (the same values written compactly take the full pass).
    let lean_path = dir.join("lean.json");
    std::fs::write(&lean_path, &text1).unwrap();
    let mut full = SessionStore::load(&lean_path, LoadOptions::default())
        .unwrap_or_else(|e| panic!("our own serialisation does not load: {e}"));
    let facts = StoreFacts::read(&lean_path, &dir, PassMode::Apply)
        .unwrap_or_else(|e| panic!("StoreFacts cannot read what SessionStore reads: {e}"));
    let alive = vec![true; facts.len()];
    if let Err(e) = facts.save(&alive) {
        assert_not_denied("lean save", &e);
        panic!("lean save inside the sandbox failed: {e}");
    }
    let lean_text = std::fs::read_to_string(&lean_path).unwrap();
    std::fs::write(&lean_path, &text1).unwrap();
    full.save().expect("save inside the sandbox");
    assert_eq!(
        lean_text,
        std::fs::read_to_string(&lean_path).unwrap(),
        "the lean road writes other bytes than the full load and save"
    );
    let compact = clawstate::js::jsjson::to_string_compact(&Value::Object(store.entries().clone()));
    let compact_path = dir.join("compact.json");
    for mode in [
        PassMode::Preview { chunks: false },
        PassMode::Preview { chunks: true },
        PassMode::Apply,
    ] {
        std::fs::write(&lean_path, &text1).unwrap();
        std::fs::write(&compact_path, &compact).unwrap();
        let mut lean = StoreFacts::read(&lean_path, &dir, mode).expect("lean read");
        let mut slow = StoreFacts::read(&compact_path, &dir, mode).expect("compact read");
        // Chunk lengths too: the full pass measures the canonical text it would write.
        assert_eq!(
            lean.take_facts(),
            slow.take_facts(),
            "lean and full facts differ ({mode:?})"
        );
    }

    // load → save reaches a fixed point (same bytes) after at most two rounds. (`save`
    // may report `Written` for identical bytes: a hydrated prompt marks the load changed.)
    if let Err(e) = store.save() {
        assert_not_denied("save", &e);
        panic!("save inside the sandbox failed: {e}");
    }
    let mut rounds = 0;
    loop {
        let before = std::fs::read(&p).unwrap();
        let mut s = SessionStore::load(&p, LoadOptions::default())
            .unwrap_or_else(|e| panic!("a saved store does not load: {e}"));
        if let Err(e) = s.save() {
            assert_not_denied("save", &e);
            panic!("save inside the sandbox failed: {e}");
        }
        if std::fs::read(&p).unwrap() == before {
            break;
        }
        rounds += 1;
        assert!(rounds < 3, "load → save does not reach a fixed point");
    }
    // No temp file is left behind by the atomic writes.
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".tmp"), "temp file left behind: {n}");
    }
}

// ---------------------------------------------------------------------------------------
// transcript

/// A reader that hands out at most `step` bytes per read, so line assembly across reads
/// is exercised.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(self.step).min(buf.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The reference for `read_tail_lines`: the last `max_lines` non-blank lines of the last
/// `max(max_bytes, 1024)` bytes, the window's first line dropped unless it starts the file.
fn tail_reference(data: &[u8], max_bytes: u64, max_lines: usize) -> Vec<String> {
    if max_lines == 0 || data.is_empty() {
        return Vec::new();
    }
    let window = (data.len() as u64).min(max_bytes.max(1024)) as usize;
    let start = data.len() - window;
    let w = &data[start..];
    let segs: Vec<&[u8]> = w.split(|&b| b == b'\n').collect();
    let n = segs.len();
    let mut out = Vec::new();
    for (i, seg) in segs.into_iter().enumerate() {
        if i == 0 && start > 0 {
            continue;
        }
        let terminated = i + 1 < n;
        let seg = if terminated && seg.last() == Some(&b'\r') {
            &seg[..seg.len() - 1]
        } else {
            seg
        };
        let s = String::from_utf8_lossy(seg).into_owned();
        if !clawstate::js::trim(&s).is_empty() {
            out.push(s);
        }
    }
    let skip = out.len().saturating_sub(max_lines);
    out.split_off(skip)
}

/// Transcript bytes. Invariants: line accounting adds up; the streaming scanner, the
/// in-memory splitter and the file reader agree; the bounded tail read equals a simple
/// reference; tree, branch, history and context never panic; repair is idempotent and its
/// output (and a header recovery's) reads back whole; migrating keeps the leaf and branch.
pub fn transcript(data: &[u8]) {
    let sb = sandbox::init();
    let w = sb.fresh();

    // The tolerant reader.
    let t = reader::parse_bytes(data);
    assert_eq!(
        t.rows.len() + t.skipped.len() + t.blank_lines,
        t.total_lines,
        "rows + skipped + blank lines != total lines"
    );
    assert!(t.skipped.iter().filter(|s| s.torn_tail).count() <= 1);
    for r in &t.rows {
        assert!(r.offset as usize + r.len <= data.len(), "row out of bounds");
    }
    let split = reader::split_lines(data);
    assert_eq!(split.len(), t.total_lines);
    let step = 1 + data.first().map_or(0, |&b| b as usize % 7) * 3;
    let mut scanned: Vec<(usize, u64, Vec<u8>, bool)> = Vec::new();
    let n = reader::scan_lines(Trickle { data, step }, |l| {
        scanned.push((l.number, l.offset, l.bytes.to_vec(), l.terminated));
        true
    })
    .expect("reading from memory");
    assert_eq!(n, data.len() as u64, "scan_lines byte count");
    let split_owned: Vec<(usize, u64, Vec<u8>, bool)> = split
        .iter()
        .map(|(a, b, c, d)| (*a, *b, c.to_vec(), *d))
        .collect();
    assert_eq!(scanned, split_owned, "scan_lines and split_lines disagree");

    let p = w.join("t.jsonl");
    std::fs::write(&p, data).unwrap();
    let from_file = reader::read_file(&clawstate::fs::data_file::DataPath::given(&p)).expect("read_file");
    assert_eq!(from_file, t, "read_file and parse_bytes disagree");

    // Bounded tail reads against the reference.
    let f = std::fs::File::open(&p).unwrap();
    for (max_bytes, max_lines) in [(0u64, 3usize), (1500, 1), (4096, 1000), (1 << 20, 7)] {
        let got = tail::read_tail_lines(&f, max_bytes, max_lines).expect("tail read");
        assert_eq!(
            got,
            tail_reference(data, max_bytes, max_lines),
            "read_tail_lines({max_bytes}, {max_lines}) differs from the reference"
        );
    }
    let _ = tail::recent_messages(&f, 20, 200, 2048, NOW_MS).expect("recent messages");
    for (limit, offset) in [(None, None), (Some(3), Some(1))] {
        let q = tail::HistoryQuery {
            limit,
            offset,
            session_started_at: None,
            max_chars: 8000,
            now_ms: NOW_MS,
        };
        if let Err(e) = tail::chat_history(&clawstate::fs::data_file::DataPath::given(&p), &q) {
            assert_not_denied("chat_history", &e);
        }
    }
    if let Err(e) = clawstate::transcript::check::check_file(&clawstate::fs::data_file::DataPath::given(&p)) {
        assert_not_denied("check_file", &e);
    }

    // The tree: SessionManager's index and the gateway's scan.
    let values = t.values();
    let (ix, _) = migrate::open_index(values.clone());
    let branch = ix.branch(None);
    let _ = ix.tree();
    let _ = ix.entries();
    let _ = clawstate::transcript::stats::stats(&t, &ix);
    let _ = clawstate::transcript::build_context(&branch);
    let records: Vec<&Value> = values.iter().collect();
    let st = tree::scan_tree(&records);
    let path = tree::select_path(&st, &records, st.leaf_id.as_deref());
    let path_values: Vec<&Value> = path.iter().map(|&i| records[st.nodes[i].index]).collect();
    let _ = clawstate::transcript::history::records_to_messages(&path_values, NOW_MS);

    // Repair: idempotent, and what it writes reads back without skipped lines.
    let mut n_uuid = 0u32;
    let mut uuid = || {
        n_uuid += 1;
        format!("00000000-0000-4000-8000-{n_uuid:012}")
    };
    let out = repair::repair_content(data, NOW_MS, &mut uuid);
    if let Some(bytes) = &out.bytes {
        let back = reader::parse_bytes(bytes);
        assert!(
            back.skipped.is_empty(),
            "repair output has unparsable lines"
        );
        let again = repair::repair_content(bytes, NOW_MS, &mut uuid);
        assert!(
            again.bytes.is_none(),
            "repair is not idempotent: second pass {:?}",
            again.report
        );
    }
    if let Some(h) = repair::recover_header(data, "fuzz-session", "/fuzz", NOW_MS) {
        let back = reader::parse_bytes(&h.bytes);
        assert!(
            back.skipped.is_empty(),
            "recovered file has unparsable lines"
        );
        assert!(
            back.rows
                .first()
                .is_some_and(|r| clawstate::transcript::entry::is_header(&r.value)),
            "recovered file does not start with a header"
        );
        assert!(
            !migrate::open_index(back.values()).1.migrated,
            "a recovered file migrates again"
        );
    }
    if let Some(k) = repair::torn_tail_keep_len(data) {
        assert!(k < data.len());
        assert!(k == 0 || data[k - 1] == b'\n', "torn tail cut mid-line");
    }

    // migrate (as `claw-transcript migrate` does it: only files without skipped lines)
    // keeps the leaf and the branch the reader saw. A file whose first row is not a header
    // has its header recovered first (above: what that writes never migrates again).
    if t.skipped.is_empty() && values.first().is_some_and(entry::is_header) {
        check_migration_keeps_leaf_and_branch(&values);
    }
}

/// The reader's view (load normalisation, in-memory migration, index) against the view of
/// the file `migrate` writes, with the same ids drawn for v1 rows on both sides.
pub fn check_migration_keeps_leaf_and_branch(values: &[Value]) {
    let ids = |prefix: &'static str| {
        let mut n = 0u32;
        move |_: &dyn Fn(&str) -> bool| {
            n += 1;
            format!("{prefix}{n:07x}")
        }
    };
    let mut before_rows = values.to_vec();
    for r in before_rows.iter_mut() {
        migrate::normalize_loaded(r);
    }
    let mut draw = ids("m");
    migrate::migrate_rows(&mut before_rows, &mut draw);
    let before = tree::SessionIndex::build(before_rows);

    let mut rows = values.to_vec();
    let mut draw = ids("m");
    let report = migrate::migrate_rows(&mut rows, &mut draw);
    if !report.migrated {
        return;
    }
    let bytes = migrate::serialize_like_session_manager(&tree::SessionIndex::build(rows), NOW_MS);
    let back = reader::parse_bytes(&bytes);
    assert!(
        back.skipped.is_empty(),
        "migrated file has unparsable lines"
    );
    let (after, again) = migrate::open_index(back.values());
    assert!(!again.migrated, "a migrated file migrates again");
    assert_eq!(after.leaf_id, before.leaf_id, "migrate changed the leaf");
    // Compared as JavaScript sees them: `1e-999` reads as 0.0 and is written back as `0`,
    // which reads as the integer 0; both are the same JS number.
    let js = |b: Vec<Value>| clawstate::js::jsjson::to_string_compact(&Value::Array(b));
    assert_eq!(
        js(after.branch(None)),
        js(before.branch(None)),
        "migrate changed the branch"
    );
}

// ---------------------------------------------------------------------------------------
// session keys

fn contexts(sel: u8) -> sk::KeyContext {
    match sel % 4 {
        0 => sk::KeyContext::default(),
        1 => sk::KeyContext {
            default_agent_id: "ops".into(),
            main_key: "Work".into(),
            scope_global: false,
            configured_agents: vec!["ops".into(), "main".into()],
        },
        2 => sk::KeyContext {
            default_agent_id: "ops".into(),
            main_key: "main".into(),
            scope_global: false,
            configured_agents: vec!["ops".into()],
        },
        _ => sk::KeyContext {
            scope_global: true,
            ..sk::KeyContext::default()
        },
    }
}

/// Keys (`key \0 agent \0 other`). Invariants: normalisation is idempotent and trims;
/// a parsed agent key has a non-empty id and rest; store-key resolution is idempotent and
/// lands on a normalised key; agent ids normalise to a stable slug of `[a-z0-9_-]` (at most 64, no leading dash); chat
/// types are the three known ones.
pub fn session_key(data: &[u8]) {
    let ps = parts(data, 3);
    let key = text(ps[0]);
    let agent = ps.get(1).map(|b| text(b)).unwrap_or_else(|| "main".into());
    let other = ps.get(2).map(|b| text(b));
    let ctx = contexts(data.len() as u8);

    let n = sk::normalize_session_key(&key);
    assert_eq!(
        sk::normalize_session_key(&n),
        n,
        "normalize_session_key is not idempotent on {key:?}"
    );
    assert_eq!(
        clawstate::js::trim(&n),
        n,
        "normalised key {n:?} is not trimmed"
    );
    if let Some(a) = sk::parse_agent_session_key(&key) {
        assert!(!a.agent_id.is_empty() && !a.rest.is_empty());
        assert_eq!(
            sk::parse_agent_session_key(&n),
            Some(a.clone()),
            "parsing the normalised key gives another result"
        );
    }
    for id in [&key, &agent] {
        let a = sk::normalize_agent_id(id);
        // A slug may start with `_` (only dashes are stripped), as the gateway's does.
        assert!(
            !a.is_empty()
                && a.len() <= 64
                && !a.starts_with('-')
                && a.bytes().all(|b| b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || b == b'_'
                    || b == b'-'),
            "normalize_agent_id({id:?}) = {a:?}"
        );
        // Like the gateway's, the slug is cut to 64 after the dashes are stripped, so it
        // may end in `-`; a slug that also starts with `_` then loses that dash next time.
        if !(a.starts_with('_') && a.ends_with('-')) {
            assert_eq!(
                sk::normalize_agent_id(&a),
                a,
                "normalize_agent_id is not idempotent"
            );
        }
    }
    let mk = sk::normalize_main_key(&key);
    assert_eq!(sk::normalize_main_key(&mk), mk);

    let r = sk::resolve_store_key(&key, &ctx);
    assert_eq!(
        sk::resolve_store_key(&r, &ctx),
        r,
        "resolve_store_key is not idempotent on {key:?} ({ctx:?})"
    );
    let _ = sk::canonicalize_main_alias(&key, &agent, &ctx);
    let _ = ctx.main_session_key();

    let c = sk::chat_type_from_key(&key);
    assert!(matches!(
        c.chat_type,
        None | Some("direct" | "group" | "channel")
    ));
    let _ = sk::normalize_chat_type(&key);
    if let Some(t) = sk::thread_id(&key) {
        assert!(!t.is_empty());
    }
    let entry: Map<String, Value> = match other.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    };
    let _ = sk::is_cron_key(&key);
    let _ = sk::is_subagent_key(&key);
    let _ = sk::is_acp_key(&key);
    let _ = sk::is_synthetic_key(&key);
    let _ = sk::is_model_run_probe_key(&key);
    let _ = sk::cli_row_kind(&key, &entry);
    let _ = sk::gateway_row_kind(&key, &entry);
    let _ = sk::tool_kind(&key, &entry, &ctx);
    let _ = sk::is_durable_entry(&key, &entry);
    let preserve: HashSet<String> = sk::preserve_set([agent.as_str(), key.as_str()]);
    let _ = sk::is_protected_entry(&key, &entry, &preserve);
    let _ = sk::dm_scope_retirable(&key, &agent, other.as_deref());
    let _ = clawstate::session::send_policy::resolve_send_policy(
        &key,
        Some(&entry),
        clawstate::session::send_policy::EntryChannels::Delivery,
        &Value::Null,
        other.as_deref(),
        Some(&agent),
    );
}

// ---------------------------------------------------------------------------------------
// durations and byte sizes

/// Durations and byte sizes (`text`, or `text \0 unit-selector`). Invariants: a parsed
/// value re-parses from its canonical spelling; trimming and ASCII case do not matter.
pub fn units(data: &[u8]) {
    let ps = parts(data, 2);
    let raw = text(ps[0]);
    let unit = match ps.get(1).and_then(|b| b.first()).map_or(0, |b| b % 5) {
        0 => DurationUnit::Millis,
        1 => DurationUnit::Seconds,
        2 => DurationUnit::Minutes,
        3 => DurationUnit::Hours,
        _ => DurationUnit::Days,
    };
    let d = parse_duration_ms(&raw, unit);
    if let Ok(ms) = d {
        assert_eq!(
            parse_duration_ms(&format!("{ms}ms"), DurationUnit::Days),
            Ok(ms),
            "{raw:?} = {ms} ms does not re-parse"
        );
    }
    let b = parse_byte_size(&raw);
    if let Ok(n) = b {
        if n < (1u64 << 53) {
            assert_eq!(
                parse_byte_size(&format!("{n}b")),
                Ok(n),
                "{raw:?} = {n} bytes does not re-parse"
            );
        }
    }
    if raw.is_ascii() {
        let upper = raw.to_ascii_uppercase();
        assert_eq!(
            parse_duration_ms(&upper, unit).is_ok(),
            d.is_ok(),
            "duration case"
        );
        assert_eq!(parse_byte_size(&upper).is_ok(), b.is_ok(), "byte size case");
        if let (Ok(x), Ok(y)) = (parse_duration_ms(&upper, unit), &d) {
            assert_eq!(x, *y);
        }
        let padded = format!(" \t{raw}\n ");
        assert_eq!(
            parse_duration_ms(&padded, unit).ok(),
            d.ok(),
            "duration padding"
        );
        assert_eq!(parse_byte_size(&padded).ok(), b.ok(), "byte size padding");
    }
}

// ---------------------------------------------------------------------------------------
// config

/// JSON5 config text. Invariants: `Config::load` of the file and `parse_json5` +
/// `Config::from_value` agree; a valid config answers every accessor without panicking
/// and names a default agent among its agents.
pub fn config(data: &[u8]) {
    let sb = sandbox::init();
    let w = sb.fresh();
    let p = w.join("openclaw.json");
    std::fs::write(&p, data).unwrap();
    let loaded = Config::load(&p);
    if let Err(e) = &loaded {
        assert_not_denied("config load", e);
    }
    let Ok(s) = std::str::from_utf8(data) else {
        assert!(loaded.is_err(), "a non-UTF-8 config loaded");
        let _ = parse_json5(&String::from_utf8_lossy(data));
        return;
    };
    let parsed = parse_json5(s);
    let via_value = parsed
        .clone()
        .map_err(|e| format!("{e:?}"))
        .and_then(|v| Config::from_value(&p, v).map_err(|e| e.to_string()));
    assert_eq!(
        loaded.is_ok(),
        via_value.is_ok(),
        "Config::load and parse_json5+from_value disagree: {:?} vs {:?}",
        loaded.as_ref().err(),
        via_value.as_ref().err()
    );
    let Ok(c) = loaded else { return };
    assert_eq!(Some(&c.root), parsed.as_ref().ok());
    let _ = c.session();
    let _ = c.main_key();
    let _ = c.scope_global();
    let _ = c.store_template();
    let _ = c.dm_scope();
    let ids = c.agent_ids();
    let all = c.all_agent_ids();
    let def = c.default_agent_id();
    assert!(!def.is_empty());
    if !ids.is_empty() {
        assert!(
            all.contains(&def),
            "default agent {def:?} not among {all:?}"
        );
    }
    for id in all.iter().chain(ids.iter()) {
        let _ = c.agent_entry(id);
    }
    let _ = clawstate::maintenance::config::MaintenanceConfig::from_config(&c);
    let _ = clawstate::transcript::write_lock::WriteLockSettings::resolve(&c.root, |_| None);
    for rt in [
        clawstate::session::freshness::ResetType::Direct,
        clawstate::session::freshness::ResetType::Group,
        clawstate::session::freshness::ResetType::Thread,
    ] {
        let _ = clawstate::session::freshness::resolve_reset_policy(c.session(), rt, Some("telegram"));
    }
    let _ = clawstate::session::send_policy::resolve_send_policy(
        "agent:main:telegram:group:1",
        None,
        clawstate::session::send_policy::EntryChannels::Legacy,
        c.session(),
        None,
        None,
    );
}

// ---------------------------------------------------------------------------------------
// --merge patches

const DEFAULT_STORE: &str = r#"{"agent:main:main":{"sessionId":"0b6b5a3e-1f57-4e8e-9a6e-0c3f1d2e4a5b","updatedAt":1767225000000,"label":"x"}}"#;

/// `store \0 patch \0 key` (a missing store or key takes a default). Invariants: applying
/// a merge patch twice equals applying it once; a refused or no-op patch leaves every
/// file byte-identical; an applied one re-loads with the patched entry (normalised as the
/// gateway loads it), the other entries unchanged and a second identical patch writing
/// nothing.
pub fn patch(data: &[u8]) {
    let ps = parts(data, 3);
    let (store_bytes, patch_bytes) = if ps.len() >= 2 {
        (ps[0], ps[1])
    } else {
        (DEFAULT_STORE.as_bytes(), ps[0])
    };
    let Ok(patch_value) = serde_json::from_slice::<Value>(patch_bytes) else {
        return;
    };
    let Value::Object(_) = patch_value else {
        return;
    };

    // Pure merge patch: idempotent, against every entry of the store as target.
    if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(store_bytes) {
        for (k, v) in m.iter().take(8) {
            let mut once = v.clone();
            merge_patch(&mut once, &patch_value);
            let mut twice = once.clone();
            merge_patch(&mut twice, &patch_value);
            assert_eq!(once, twice, "merge_patch is not idempotent");
            let _ = validate_patched_entry(k, &once);
        }
    }

    let sb = sandbox::init();
    let w = sb.fresh();
    let state = w.join("state");
    let dir = state.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let store_path = dir.join("sessions.json");
    std::fs::write(&store_path, store_bytes).unwrap();
    let key = match ps.get(2) {
        Some(k) => text(k),
        None => SessionStore::load(&store_path, LoadOptions::default())
            .ok()
            .and_then(|s| s.entries().keys().next().cloned())
            .unwrap_or_else(|| "main".into()),
    };
    let env = Environment::from_vars(
        [("HOME", w.join("home").to_string_lossy().into_owned())],
        w.clone(),
    );
    let options = GlobalOptions {
        state_dir: Some(state.clone()),
        config: None,
        targets: TargetSelection {
            store: Some(store_path.to_string_lossy().into_owned()),
            agent: None,
            all_agents: false,
        },
        now: Some(NOW_MS.to_string()),
    };
    let ctx = StateContext::with_environment(env, options).expect("context");
    let original = SessionStore::load(&store_path, LoadOptions::default()).ok();
    let before = snapshot(&w);
    let opts = WriteOptions {
        dry_run: false,
        wait: clawstate::store::store_lock::LockWait::no_wait(),
    };
    match session_ops::patch(&ctx, &key, &patch_value, opts) {
        Err(e) => {
            assert_not_denied("patch", &e);
            assert!(
                snapshot(&w) == before,
                "a refused patch ({e}) changed files in the state dir"
            );
        }
        Ok(out) => {
            if !out.written {
                assert!(
                    snapshot(&w) == before,
                    "a patch that wrote nothing changed files"
                );
            }
            let mut expected = out.after.clone();
            normalize_entry(&mut expected);
            let reloaded = SessionStore::load(&store_path, LoadOptions::default())
                .unwrap_or_else(|e| panic!("the patched store does not load: {e}"));
            // Compared as JavaScript sees values (-0 and 0, 1.0 and 1 are the same).
            let js = |m: Option<&Map<String, Value>>| {
                m.map(|m| clawstate::js::jsjson::to_string_compact(&Value::Object(m.clone())))
            };
            assert_eq!(
                js(reloaded.entry(&out.key)),
                js(Some(&expected)),
                "the patched entry did not survive a reload"
            );
            let original = original.expect("the store loaded before the patch");
            for (k, v) in original.entries() {
                if *k != out.key {
                    assert_eq!(
                        js(reloaded.entry(k)),
                        js(v.as_object()),
                        "patch changed entry {k:?}"
                    );
                }
            }
            let mid = snapshot(&w);
            // The same patch again (by store key: a sessionId request may have moved)
            // leaves the bytes as they are (`written` may still be reported when the
            // load normalised something, e.g. a legacy field the patch sets again).
            let second = session_ops::patch(&ctx, &out.key, &patch_value, opts)
                .unwrap_or_else(|e| panic!("the same patch failed the second time: {e}"));
            let _ = second.written;
            // Legacy fields are migrated by the next load (`provider` → `channel`, …), so
            // a patch that sets them converges one round later: known, see README.
            let legacy = ["provider", "lastProvider", "room"]
                .iter()
                .any(|k| patch_value.get(k).is_some());
            if !legacy {
                assert!(snapshot(&w) == mid, "a repeated patch changed files");
            }
        }
    }
    // The dry run never writes.
    let now = snapshot(&w);
    let dry = WriteOptions {
        dry_run: true,
        wait: clawstate::store::store_lock::LockWait::no_wait(),
    };
    if let Err(e) = session_ops::patch(&ctx, &key, &patch_value, dry) {
        assert_not_denied("patch --dry-run", &e);
    }
    assert!(snapshot(&w) == now, "a dry-run patch changed files");

    // The shorthand expansion itself.
    let mut p = patch_value.clone();
    expand_patch_shorthands(&mut p);
    expand_patch_shorthands(&mut p);
}
