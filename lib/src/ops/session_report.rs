//! The documents `claw-sessions` prints for the operations of [`crate::ops::session_ops`] (and
//! [`crate::ops::session_restore`]): one `#[derive(Serialize)]` type per command, its fields in
//! the order the JSON shows them, camelCase as the gateway's, built from the operation's
//! outcome by `of`. The binary writes them through the one emit of `clawstate-cli`
//! (`jsjson`'s bytes); the text forms stay with the binary.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::install::targets::StoreTarget;
use crate::ops::session_ops::{
    DeleteOutcome, PatchBatch, PatchOutcome, RelocateOutcome, ResetOutcome, ResolveOutcome,
};
use crate::ops::session_restore::RestoreOutcome;
use crate::session::freshness::ResetPolicy;
use crate::store::entry_lookup::ShownEntry;

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A file moved (archived): from, to.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    /// Where it was.
    pub from: String,
    /// Where it is now.
    pub to: String,
}

fn moved(pairs: &[(PathBuf, PathBuf)]) -> Vec<Moved> {
    pairs
        .iter()
        .map(|(a, b)| Moved {
            from: lossy(a),
            to: lossy(b),
        })
        .collect()
}

/// A store of a batch: its agent and path.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStore {
    /// The agent.
    pub agent_id: String,
    /// Its `sessions.json`.
    pub store_path: String,
}

/// Where a transcript outside this state dir would be here.
#[derive(Debug, Clone, Serialize)]
pub struct OutsideTranscript {
    /// Its counterpart in this state dir.
    pub here: String,
}

/// `show`: an entry, where it is and its transcript.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShowReport {
    /// The store key.
    pub key: String,
    /// The agent.
    pub agent_id: String,
    /// The store (the agent database on that layout).
    pub store_path: String,
    /// `db` on the agent-DB layout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<&'static str>,
    /// The transcript (the database on that layout), `null` when unresolvable.
    pub transcript_path: Option<String>,
    /// Whether it exists.
    pub transcript_exists: bool,
    /// Why its path cannot be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_error: Option<String>,
    /// Where a transcript outside this state dir would be here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_outside: Option<OutsideTranscript>,
    /// The entry.
    pub entry: Map<String, Value>,
}

impl ShowReport {
    /// The report of a shown entry.
    pub fn of(s: &ShownEntry) -> Self {
        let transcript_path = match (&s.agent_db, &s.transcript) {
            (Some(db), _) => Some(lossy(db)),
            (None, Ok(p)) => Some(lossy(p.path())),
            (None, Err(_)) => None,
        };
        ShowReport {
            key: s.matched.store_key.clone(),
            agent_id: s.target.agent_id.clone(),
            store_path: lossy(s.agent_db.as_deref().unwrap_or(&s.target.store_path)),
            layout: s.agent_db.as_ref().map(|_| "db"),
            transcript_path,
            transcript_exists: s.transcript_exists,
            transcript_error: s.transcript.as_ref().err().cloned(),
            transcript_outside: s.transcript_foreign.as_ref().map(|f| OutsideTranscript {
                here: lossy(&f.here),
            }),
            entry: s.entry.clone(),
        }
    }
}

/// `patch KEY`: the entry after the patch (and with `--dry-run` the save's changes).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchReport {
    /// The store key.
    pub key: String,
    /// The store.
    pub store_path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether the store was written.
    pub written: bool,
    /// The entry after the patch.
    pub entry: Map<String, Value>,
    /// The changes the save would make (dry runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Value>>,
}

impl PatchReport {
    /// The report of a patch.
    pub fn of(r: &PatchOutcome, dry_run: bool) -> Self {
        PatchReport {
            key: r.key.clone(),
            store_path: lossy(&r.target.store_path),
            dry_run,
            written: r.written,
            entry: r.after.clone(),
            changes: dry_run.then(|| r.changes.iter().map(|c| c.to_json()).collect()),
        }
    }
}

/// One entry of `patch KEY KEY…` (`--ndjson` prints one per line).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchedRow {
    /// The store key.
    pub key: String,
    /// Its store.
    pub store_path: String,
    /// Whether that store was written.
    pub written: bool,
    /// The entry after the patch.
    pub entry: Map<String, Value>,
    /// The save's changes of this entry (dry runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Value>>,
}

/// A store of `patch KEY KEY…`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchedStoreRow {
    /// The agent.
    pub agent_id: String,
    /// The store.
    pub store_path: String,
    /// Whether it was written.
    pub written: bool,
}

/// `patch KEY KEY… --json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchBatchReport {
    /// Every store the batch touched.
    pub stores: Vec<PatchedStoreRow>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The entries.
    pub patched: Vec<PatchedRow>,
    /// Every store's changes, each with its `storePath` (dry runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Value>>,
}

impl PatchBatchReport {
    /// The report of a batch patch.
    pub fn of(b: &PatchBatch, dry_run: bool) -> Self {
        let patched = b
            .entries
            .iter()
            .map(|e| {
                let store = &b.stores[e.store];
                PatchedRow {
                    key: e.key.clone(),
                    store_path: lossy(&store.target.store_path),
                    written: store.written,
                    entry: e.after.clone(),
                    changes: dry_run.then(|| {
                        store
                            .changes
                            .iter()
                            .filter(|c| c.key == e.key)
                            .map(|c| c.to_json())
                            .collect()
                    }),
                }
            })
            .collect();
        let changes = dry_run.then(|| {
            b.stores
                .iter()
                .flat_map(|s| {
                    s.changes.iter().map(|c| {
                        let mut v = c.to_json();
                        v["storePath"] = Value::String(lossy(&s.target.store_path));
                        v
                    })
                })
                .collect()
        });
        PatchBatchReport {
            stores: b
                .stores
                .iter()
                .map(|s| PatchedStoreRow {
                    agent_id: s.target.agent_id.clone(),
                    store_path: lossy(&s.target.store_path),
                    written: s.written,
                })
                .collect(),
            dry_run,
            patched,
            changes,
        }
    }
}

/// `reset`: the new session and what was archived.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetReport {
    /// The store key.
    pub key: String,
    /// The store.
    pub store_path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The session replaced.
    pub previous_session_id: Option<String>,
    /// The new session.
    pub session_id: Option<Value>,
    /// Its transcript.
    pub session_file: String,
    /// Whether its header was written.
    pub header_written: bool,
    /// The files archived.
    pub archived: Vec<Moved>,
    /// Watcher cursors reset (`null` when the state database was not touched).
    pub signal_cursors_reset: Option<usize>,
    /// The new entry.
    pub entry: Map<String, Value>,
}

impl ResetReport {
    /// The report of a reset.
    pub fn of(r: &ResetOutcome, dry_run: bool) -> Self {
        ResetReport {
            key: r.key.clone(),
            store_path: lossy(&r.target.store_path),
            dry_run,
            previous_session_id: r.previous_session_id.clone(),
            session_id: r.entry.get("sessionId").cloned(),
            session_file: lossy(&r.session_file),
            header_written: r.header_written,
            archived: moved(&r.archived),
            signal_cursors_reset: match &r.signal_cursors {
                Some(Ok(n)) => Some(*n),
                _ => None,
            },
            entry: r.entry.clone(),
        }
    }
}

/// One session of `delete` (`--ndjson` prints one per line).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletedRow {
    /// The store key.
    pub key: String,
    /// Its session.
    pub session_id: Option<String>,
    /// Whether the transcript was kept for another entry with the same sessionId.
    pub transcript_shared: bool,
    /// The files archived.
    pub archived: Vec<Moved>,
    /// The sidecar files removed.
    pub removed_files: Vec<String>,
    /// What the state database forgot (`null` when not touched).
    pub signals_forgotten: Value,
    /// Its store, in a batch over several stores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_path: Option<String>,
}

/// `delete --json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteReport {
    /// The store (`null` over several stores).
    pub store_path: Option<String>,
    /// The stores, over several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stores: Option<Vec<AgentStore>>,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The sessions.
    pub deleted: Vec<DeletedRow>,
}

impl DeleteReport {
    /// The report of a deletion over `targets`.
    pub fn of(targets: &[StoreTarget], results: &[DeleteOutcome], dry_run: bool) -> Self {
        let several = targets.len() > 1;
        let deleted = results
            .iter()
            .map(|r| DeletedRow {
                key: r.key.clone(),
                session_id: r.session_id.clone(),
                transcript_shared: r.transcript_shared,
                archived: moved(&r.archived),
                removed_files: r.removed_sidecars.iter().map(|p| lossy(p)).collect(),
                signals_forgotten: match &r.signal_state {
                    Some(Ok(f)) => f.to_json(),
                    _ => Value::Null,
                },
                store_path: several.then(|| lossy(&targets[r.store].store_path)),
            })
            .collect();
        DeleteReport {
            store_path: (!several)
                .then(|| targets.first().map(|t| lossy(&t.store_path)))
                .flatten(),
            stores: several.then(|| {
                targets
                    .iter()
                    .map(|t| AgentStore {
                        agent_id: t.agent_id.clone(),
                        store_path: lossy(&t.store_path),
                    })
                    .collect()
            }),
            dry_run,
            deleted,
        }
    }
}

/// An entry `relocate` pointed here.
#[derive(Debug, Clone, Serialize)]
pub struct RelocatedRow {
    /// The store key.
    pub key: String,
    /// Its old `sessionFile`.
    pub from: String,
    /// The new one.
    pub to: String,
}

/// An entry `relocate` left alone.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftRow {
    /// The store key.
    pub key: String,
    /// Its `sessionFile`.
    pub session_file: String,
    /// Its counterpart here.
    pub here: String,
    /// Why it was left.
    pub reason: String,
}

/// One store of `relocate` (`--ndjson` prints one per line).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RelocatedStore {
    /// The store.
    pub store_path: String,
    /// The agent.
    pub agent_id: String,
    /// The entries pointed here.
    pub relocated: Vec<RelocatedRow>,
    /// The entries left alone.
    pub left: Vec<LeftRow>,
    /// Whether the store was written.
    pub written: bool,
}

impl RelocatedStore {
    /// The row of one store's relocation.
    pub fn of(o: &RelocateOutcome) -> Self {
        RelocatedStore {
            store_path: lossy(&o.target.store_path),
            agent_id: o.target.agent_id.clone(),
            relocated: o
                .relocated
                .iter()
                .map(|r| RelocatedRow {
                    key: r.key.clone(),
                    from: r.from.clone(),
                    to: r.to.clone(),
                })
                .collect(),
            left: o
                .left
                .iter()
                .map(|l| LeftRow {
                    key: l.key.clone(),
                    session_file: l.session_file.clone(),
                    here: lossy(&l.here),
                    reason: l.why.clone(),
                })
                .collect(),
            written: o.written,
        }
    }
}

/// `relocate --json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RelocateReport {
    /// Whether nothing was written.
    pub dry_run: bool,
    /// One row per store.
    pub stores: Vec<RelocatedStore>,
}

/// `restore`: the archive restored and the entry it belongs to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreReport {
    /// The store key.
    pub key: String,
    /// The store.
    pub store_path: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// The archive.
    pub archive: String,
    /// The transcript it became.
    pub restored: String,
    /// Why it had been archived.
    pub reason: &'static str,
    /// Its session.
    pub session_id: String,
    /// The entry added (`null` when one already held the session).
    pub entry_added: Option<Map<String, Value>>,
    /// Whether anything was written.
    pub written: bool,
}

impl RestoreReport {
    /// The report of a restore.
    pub fn of(r: &RestoreOutcome, dry_run: bool) -> Self {
        RestoreReport {
            key: r.key.clone(),
            store_path: lossy(&r.target.store_path),
            dry_run,
            archive: lossy(&r.archive),
            restored: lossy(&r.restored),
            reason: r.reason.as_str(),
            session_id: r.session_id.clone(),
            entry_added: r.added_entry.clone(),
            written: r.written,
        }
    }
}

/// A reset policy as `resolve` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetPolicyView {
    /// `daily` or `idle`.
    pub mode: &'static str,
    /// The daily reset hour.
    pub at_hour: u32,
    /// The idle timeout.
    pub idle_minutes: Option<u64>,
    /// Whether a policy is configured.
    pub configured: bool,
}

impl ResetPolicyView {
    /// The view of a policy.
    pub fn of(p: &ResetPolicy) -> Self {
        ResetPolicyView {
            mode: p.mode.as_str(),
            at_hour: p.at_hour,
            idle_minutes: p.idle_minutes,
            configured: p.configured,
        }
    }
}

/// `resolve`: whether the session is fresh under its reset policy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveReport {
    /// The store key.
    pub key: String,
    /// Its session.
    pub session_id: Option<Value>,
    /// Whether it is fresh.
    pub fresh: bool,
    /// Why not.
    pub stale_reason: Option<&'static str>,
    /// The next daily reset (epoch ms).
    pub daily_reset_at: Option<i64>,
    /// When it goes idle (epoch ms).
    pub idle_expires_at: Option<i64>,
    /// Why the implicit reset does not apply.
    pub exemption: Option<&'static str>,
    /// The policy.
    pub policy: ResetPolicyView,
    /// The clock used.
    pub now: i64,
}

impl ResolveReport {
    /// The report of a resolution at `now_ms`.
    pub fn of(r: &ResolveOutcome, now_ms: i64) -> Self {
        let f = &r.freshness;
        ResolveReport {
            key: r.key.clone(),
            session_id: r.entry.get("sessionId").cloned(),
            fresh: f.fresh,
            stale_reason: f.stale_reason,
            daily_reset_at: f.daily_reset_at,
            idle_expires_at: f.idle_expires_at,
            exemption: r.exemption,
            policy: ResetPolicyView::of(&r.policy),
            now: now_ms,
        }
    }
}

/// `policy`: the sendPolicy decision for a session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendPolicyReport {
    /// The store key.
    pub key: String,
    /// Whether the entry exists.
    pub entry_found: bool,
    /// `allow` or `deny`.
    pub decision: &'static str,
    /// What decided it, in words.
    pub decided_by: String,
}

/// The counts `doctor --json` prints before its findings.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorCounts {
    /// Whether nothing at warning level or above was found.
    pub healthy: bool,
    /// Stores checked.
    pub stores: usize,
    /// Transcripts checked.
    pub transcripts: usize,
    /// Error-level findings.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
}

/// `du --json`: one usage document per agent database.
#[derive(Debug, Clone, Serialize)]
pub struct DuReport {
    /// The agents' usage (`agent_db::du::to_json`).
    pub agents: Vec<Value>,
}
