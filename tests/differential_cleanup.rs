//! Differential tests: `claw-sessions cleanup` against `openclaw sessions cleanup`
//! (openclaw@2026.7.1) on generated state directories.
//!
//! Every agent of a generated state dir is one case: a store with entries of every key
//! family of `store.md` §4.2, ages in buckets well away from every threshold (the peer
//! reads the real clock), transcripts that are missing, empty, header-only, large or
//! normal, custom / stale / sibling-agent `sessionFile`s, archives with valid, invalid and
//! impossible timestamps, temps, checkpoints, trajectories, prompt blobs and notes. One
//! peer process covers all agents through `--all-agents` (about 1.5 s each).
//!
//! For each batch (one maintenance config and one set of flags):
//! * the dry-run JSON of both programs on the same directory must be byte-identical;
//! * `--enforce` (or the configured warn mode) on twin copies must print the same JSON
//!   and leave the same store bytes and the same set of files (sizes included), with the
//!   timestamps of archives created during the run normalised.
//!
//! Deliberate difference checked explicitly: a trajectory runtime file outside the
//! sessions directory that the peer deletes is left in place (and reported) by us.
//!
//! `CLAWSTATE_DIFF_SEEDS=N` runs N seeds per batch instead of 1.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use support::{claw, now_ms, peer, run_peer, Rng};

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

/// One batch: a maintenance config and the flags of both runs.
struct Batch {
    name: &'static str,
    maintenance: Value,
    /// `pruneAfter` in days, for choosing ages away from it.
    prune_days: i64,
    flags: &'static [&'static str],
    /// Enforce flag for the apply run (without it the configured mode applies).
    enforce: bool,
    agents: usize,
    /// Outside trajectory runtime files (the deliberate difference).
    outside_trajectories: bool,
    /// Keys, `sessionId`s and `sessionFile`s (and checkpoint and trajectory paths) padded
    /// with whitespace that JavaScript's `trim` removes, at random.
    padded: bool,
}

fn batches() -> Vec<Batch> {
    vec![
        Batch {
            name: "defaults",
            maintenance: json!({}),
            prune_days: 30,
            flags: &[],
            enforce: true,
            agents: 24,
            outside_trajectories: true,
            padded: false,
        },
        Batch {
            name: "fix-missing+dm-scope+cap",
            maintenance: json!({"pruneAfter": "10d", "maxEntries": 9, "resetArchiveRetention": "3d"}),
            prune_days: 10,
            flags: &["--fix-missing", "--fix-dm-scope"],
            enforce: true,
            agents: 24,
            outside_trajectories: false,
            padded: false,
        },
        Batch {
            name: "budget+active-key",
            maintenance: json!({"pruneAfter": 20, "maxEntries": 14, "maxDiskBytes": "14kb", "highWaterBytes": "10kb"}),
            prune_days: 20,
            flags: &[
                "--active-key",
                "agent:main:telegram:direct:777",
                "--fix-missing",
            ],
            enforce: true,
            agents: 24,
            outside_trajectories: false,
            padded: false,
        },
        Batch {
            name: "warn-mode+budget",
            maintenance: json!({"mode": "warn", "pruneDays": 12, "maxEntries": 6, "maxDiskBytes": 9000, "resetArchiveRetention": false}),
            prune_days: 12,
            flags: &["--fix-missing", "--fix-dm-scope"],
            enforce: false,
            agents: 20,
            outside_trajectories: false,
            padded: false,
        },
        Batch {
            name: "no-reset-retention+model-runs",
            maintenance: json!({"pruneAfter": "15d", "maxEntries": 4, "resetArchiveRetention": false, "maxDiskBytes": "1mb"}),
            prune_days: 15,
            flags: &["--active-key", "AGENT:MAIN:TELEGRAM:DIRECT:777"],
            enforce: true,
            agents: 20,
            outside_trajectories: false,
            padded: false,
        },
    ]
}

/// Keys, `sessionId`s, `sessionFile`s, checkpoint files and trajectory pointers padded
/// with whitespace (issue 22 item 6): the gateway trims them where it resolves a file.
fn padded_batch() -> Batch {
    Batch {
        name: "padded+fix-missing",
        maintenance: json!({"pruneAfter": "10d", "maxEntries": 12, "maxDiskBytes": "40kb", "highWaterBytes": "30kb"}),
        prune_days: 10,
        flags: &[
            "--fix-missing",
            "--fix-dm-scope",
            "--active-key",
            "agent:main:telegram:direct:777",
        ],
        enforce: true,
        agents: 20,
        outside_trajectories: false,
        padded: true,
    }
}

/// Generation context for one state dir.
struct Gen<'a> {
    rng: Rng,
    now: i64,
    prune: i64,
    state: &'a Path,
    agents: Vec<String>,
    outside_trajectories: bool,
    padded: bool,
}

fn set_mtime(p: &Path, ms: i64) {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(t).unwrap();
}

fn archive_ts(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}.{millis:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

impl Gen<'_> {
    /// `s` as written into the store: in a padded batch, at times with whitespace around
    /// it that JavaScript's `trim` removes (the generator draws nothing otherwise, so
    /// the other batches stay as they were).
    fn pad(&mut self, s: &str) -> String {
        if !self.padded || !self.rng.chance(40) {
            return s.to_string();
        }
        let ws = [
            " ", "  ", "\t", "\n", "\u{a0}", "\u{feff}", "\u{2028}", "\r\n ",
        ];
        let before = *self.rng.pick(&ws);
        let after = *self.rng.pick(&ws);
        match self.rng.below(3) {
            0 => format!("{before}{s}"),
            1 => format!("{s}{after}"),
            _ => format!("{before}{s}{after}"),
        }
    }

    fn jitter(&mut self) -> i64 {
        self.rng.below(59_000) as i64 + 500
    }

    /// An age in ms well away from every threshold.
    fn entry_age(&mut self) -> Option<i64> {
        let p = self.prune;
        let j = self.jitter();
        Some(match self.rng.below(12) {
            0 | 1 => self.rng.below(6 * 60) as i64 * MIN + j,
            2 => 22 * HOUR + self.rng.below(60) as i64 * MIN + j,
            3 => 26 * HOUR + self.rng.below(100) as i64 * MIN + j,
            4 | 5 => (2 + self.rng.below((p - 4) as u64) as i64) * DAY + j,
            6..=8 => (p + 2 + self.rng.below(200) as i64) * DAY + j,
            9 => -(1 + self.rng.below(300) as i64) * DAY - j,
            10 => return None,
            _ => 3 * HOUR + self.rng.below(600) as i64 * MIN + j,
        })
    }

    /// A file age: fresh (hours) or older than `pruneAfter`.
    fn file_age(&mut self) -> i64 {
        let j = self.jitter();
        if self.rng.chance(50) {
            (1 + self.rng.below(48) as i64) * HOUR + j
        } else {
            (self.prune + 2 + self.rng.below(100) as i64) * DAY + j
        }
    }

    fn write(&mut self, p: &Path, content: &[u8], age: i64) {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, content).unwrap();
        set_mtime(p, self.now - age);
    }

    fn key(&mut self, a: &str, i: usize) -> String {
        let u = self.rng.uuid();
        let fams = [
            format!("agent:{a}:main"),
            format!("agent:{a}:telegram:group:-100{i}"),
            format!("agent:{a}:discord:channel:{i}"),
            format!("agent:{a}:slack:channel:c{i}:thread:17{i}"),
            format!("agent:{a}:main:thread:{i}"),
            format!("agent:{a}:main:THREAD:Abc{i}"),
            format!("agent:{a}:telegram:group:-100{i}:topic:7"),
            format!("agent:{a}:telegram:direct:{i}:topic:5"),
            format!("agent:{a}:whatsapp:group:{i}@g.us"),
            format!("agent:{a}:telegram:direct:{i}"),
            format!("agent:{a}:telegram:acct1:direct:{i}"),
            format!("agent:{a}:direct:user{i}"),
            format!("agent:{a}:dm:user{i}"),
            format!("agent:{a}:direct:{i}:thread:9"),
            format!("agent:{a}:cron:job{i}"),
            format!("agent:{a}:cron:job{i}:run:r{i}"),
            format!("agent:{a}:hook:h{i}"),
            format!("agent:{a}:hook:x:thread:{i}"),
            format!("agent:{a}:node:n{i}"),
            format!("agent:{a}:subagent:{u}"),
            format!("agent:{a}:acp:{u}"),
            format!("agent:{a}:acp-bridge:b{i}"),
            format!("agent:{a}:heartbeat"),
            format!("agent:{a}:discord:channel:{i}:heartbeat"),
            format!("agent:{a}:explicit:model-run-{u}"),
            format!(
                "agent:{}:explicit:MODEL-RUN-{}",
                a.to_uppercase(),
                u.to_uppercase()
            ),
            format!("agent:{a}:explicit:model-run-zzz{i}"),
            format!("agent:{a}:explicit:other{i}"),
            format!("agent:{a}:slack:slash:u{i}"),
            format!("agent:other{i}:direct:bob"),
            format!("cron:legacy{i}"),
            format!("hook:legacy{i}"),
            format!("group:legacy{i}"),
            format!("telegram:group:legacy{i}"),
            "global".to_string(),
            "unknown".to_string(),
            format!("{i}"),
            "main".to_string(),
            format!("Agent:{}:MixedCase{i}", a.to_uppercase()),
            format!("agent:{a}:foo:group:"),
            "agent:main:telegram:direct:777".to_string(),
            "AGENT:MAIN:TELEGRAM:DIRECT:777".to_string(),
            format!("agent:{a}:explicit:model-run-{u}"),
            format!("agent:{a}:explicit:model-run-{u}"),
        ];
        self.rng.pick(&fams).clone()
    }

    fn transcript(&mut self, p: &Path, sid: &str) {
        let header = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{sid}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}}\n"
        );
        let msg = "{\"type\":\"message\",\"id\":\"m1\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n";
        let body: String = match self.rng.below(20) {
            0..=2 => return,
            3 => String::new(),
            4 => "  \n\n".into(),
            5..=6 => header.clone(),
            7 => format!("{header}{{\"type\":\"custom\",\"customType\":\"x\"}}\n"),
            8 => format!("{header}{}", "{\"type\":\"custom\",\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n".repeat(90)),
            9 => format!("{header}not json\n"),
            10 => "{\"role\":\"assistant\",\"content\":\"x\"}\r\n".into(),
            11 => format!("{header}{}", msg.repeat(40 + self.rng.below(60) as usize)),
            _ => format!("{header}{}", msg.repeat(1 + self.rng.below(4) as usize)),
        };
        let age = self.file_age();
        self.write(p, body.as_bytes(), age);
    }

    fn entry(
        &mut self,
        dir: &Path,
        agent: &str,
        key: &str,
        i: usize,
        prev_sid: &Option<String>,
    ) -> Value {
        let mut e = Map::new();
        let sid: Option<String> = match self.rng.below(20) {
            0 => None,
            1 if prev_sid.is_some() => prev_sid.clone(),
            2 => Some(format!("s{i}-{agent}")),
            _ => Some(self.rng.uuid()),
        };
        if let Some(s) = &sid {
            let stored = self.pad(s);
            e.insert("sessionId".into(), json!(stored));
        }
        match self.rng.below(25) {
            0 => {
                e.insert("updatedAt".into(), json!("notanumber"));
            }
            1 => {
                e.insert("updatedAt".into(), json!(-5));
            }
            _ => {
                if let Some(age) = self.entry_age() {
                    e.insert("updatedAt".into(), json!(self.now - age));
                }
            }
        }
        if self.rng.chance(10) {
            e.insert(
                "chatType".into(),
                json!(*self
                    .rng
                    .pick(&["group", "direct", "channel", "thread", "dm"])),
            );
        }
        if self.rng.chance(6) {
            e.insert(
                "origin".into(),
                json!({"chatType": "channel", "provider": "discord"}),
            );
        }
        if self.rng.chance(30) {
            e.insert(
                "label".into(),
                json!(*self.rng.pick(&["ops", "Home", "cron", "  "])),
            );
        }
        if self.rng.chance(20) {
            e.insert("thinkingLevel".into(), json!("high"));
        }
        if self.rng.chance(8) {
            e.insert("provider".into(), json!("telegram"));
        }
        // Normalisations that change an entry on load, or only on the second (save) pass.
        match self.rng.below(25) {
            0 => {
                e.insert("lastThreadId".into(), json!({}));
                e.insert(
                    "origin".into(),
                    json!({"provider": "telegram", "threadId": 7}),
                );
            }
            1 => {
                e.insert("room".into(), json!("#r"));
            }
            2 => {
                e.insert("model".into(), json!("  gpt-x  "));
                e.insert("modelProvider".into(), json!(" "));
            }
            3 => {
                e.insert("channel".into(), json!("Discord"));
                e.insert("lastTo".into(), json!(format!("discord:{i}")));
            }
            _ => {}
        }
        // The transcript: the file named by sessionFile or <sessionId>.jsonl.
        let other_uuid = self.rng.uuid();
        let mut transcript: Option<PathBuf> = sid.as_ref().map(|s| dir.join(format!("{s}.jsonl")));
        match self.rng.below(14) {
            0 => {
                let f = self.pad(&format!("custom-{i}.jsonl"));
                e.insert("sessionFile".into(), json!(f));
                transcript = Some(dir.join(format!("custom-{i}.jsonl")));
            }
            1 => {
                let p = dir.join(format!("abs-{i}.jsonl"));
                let f = self.pad(&p.to_string_lossy());
                e.insert("sessionFile".into(), json!(f));
                transcript = Some(p);
            }
            2 => {
                // A stale generated name (inherited from an earlier session).
                let p = dir.join(format!("{other_uuid}.jsonl"));
                let f = self.pad(&p.to_string_lossy());
                e.insert("sessionFile".into(), json!(f));
                if self.rng.chance(50) {
                    self.transcript(&p, &other_uuid);
                }
            }
            3 => {
                // A sibling agent's directory.
                let other = self.rng.pick(&self.agents).clone();
                let p = self
                    .state
                    .join(format!("agents/{other}/sessions/sib-{agent}-{i}.jsonl"));
                let f = self.pad(&p.to_string_lossy());
                e.insert("sessionFile".into(), json!(f));
                transcript = Some(p);
            }
            4 => {
                e.insert("sessionFile".into(), json!("/nonexistent/dir/x.jsonl"));
            }
            5 => {
                if let Some(s) = &sid {
                    let p = dir.join(format!("{s}-topic-7.jsonl"));
                    let f = self.pad(&p.to_string_lossy());
                    e.insert("sessionFile".into(), json!(f));
                    transcript = Some(p);
                }
            }
            _ => {}
        }
        if let Some(t) = &transcript {
            let s = sid.clone().unwrap_or_default();
            self.transcript(t, &s);
            if self.rng.chance(20) && t.starts_with(dir) {
                let base = t.to_string_lossy().trim_end_matches(".jsonl").to_string();
                let runtime = PathBuf::from(format!("{base}.trajectory.jsonl"));
                let line = json!({"traceSchema": "openclaw-trajectory", "schemaVersion": 1, "source": "runtime", "sessionId": s});
                let age = self.file_age();
                self.write(&runtime, format!("{line}\n").as_bytes(), age);
                let runtime_file = if self.outside_trajectories && self.rng.chance(60) {
                    let safe: String = s
                        .chars()
                        .map(|c| {
                            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                                c
                            } else {
                                '_'
                            }
                        })
                        .collect();
                    let out = self.state.join(format!("traj/{safe}.jsonl"));
                    let age = self.file_age();
                    self.write(&out, format!("{line}\n").as_bytes(), age);
                    out
                } else {
                    runtime.clone()
                };
                let pointer = json!({"traceSchema": "openclaw-trajectory-pointer", "schemaVersion": 1, "sessionId": s, "runtimeFile": self.pad(&runtime_file.to_string_lossy())});
                let age = self.file_age();
                self.write(
                    &PathBuf::from(format!("{base}.trajectory-path.json")),
                    format!("{pointer:#}\n").as_bytes(),
                    age,
                );
            }
        }
        if self.rng.chance(8) {
            if let Some(s) = &sid {
                let cp = dir.join(format!("{s}.checkpoint.{}.jsonl", self.rng.uuid()));
                let age = self.file_age();
                self.write(&cp, b"{\"type\":\"session\"}\n", age);
                let post = transcript.clone().unwrap_or_else(|| dir.join("none.jsonl"));
                let pre_file = self.pad(&cp.to_string_lossy());
                let post_file = self.pad(&post.to_string_lossy());
                e.insert(
                    "compactionCheckpoints".into(),
                    json!([{
                        "checkpointId": "c1", "sessionKey": key, "sessionId": s, "createdAt": self.now - DAY,
                        "reason": "manual",
                        "preCompaction": {"sessionId": s, "sessionFile": pre_file},
                        "postCompaction": {"sessionId": s, "sessionFile": post_file}
                    }]),
                );
            }
        }
        if self.rng.chance(7) {
            let prompt = format!("skill prompt {i} {} ", agent).repeat(40);
            if self.rng.chance(50) {
                e.insert(
                    "skillsSnapshot".into(),
                    json!({"prompt": prompt, "skills": []}),
                );
            } else {
                let hash = format!("{:x}", Sha256::digest(prompt.as_bytes()));
                let blob = dir.join(format!("skills-prompts/sha256/{}/{hash}.txt", &hash[..2]));
                let age = self.file_age();
                self.write(&blob, prompt.as_bytes(), age);
                e.insert(
                    "skillsSnapshot".into(),
                    json!({"skills": [], "promptRef": {"version": 1, "algorithm": "sha256", "hash": hash, "bytes": prompt.len()}}),
                );
            }
        }
        Value::Object(e)
    }

    fn orphans(&mut self, dir: &Path) {
        let p = self.prune;
        let n = self.rng.below(8) as usize;
        for k in 0..n {
            let u = self.rng.uuid();
            let old_ts = archive_ts(self.now - (p + 5 + self.rng.below(300) as i64) * DAY);
            let mid_ts = archive_ts(self.now - (2 * HOUR + self.rng.below(20) as i64 * HOUR));
            let (name, content, age): (String, Vec<u8>, i64) = match self.rng.below(19) {
                0 => (
                    format!("orphan-{k}.jsonl"),
                    b"{\"type\":\"session\"}\n".to_vec(),
                    self.file_age(),
                ),
                1 => (format!("orphan-empty-{k}.jsonl"), Vec::new(), (p + 3) * DAY),
                2 => (
                    format!("{u}.checkpoint.{}.jsonl", self.rng.uuid()),
                    b"{}\n".to_vec(),
                    self.file_age(),
                ),
                3 => (
                    format!("orph-{k}.trajectory.jsonl"),
                    b"{}\n".to_vec(),
                    self.file_age(),
                ),
                4 => (
                    format!("orph-{k}.trajectory-path.json"),
                    b"{}\n".to_vec(),
                    self.file_age(),
                ),
                5 => (
                    format!("sessions.json.{}.{u}.tmp", 1000 + k),
                    b"{}".to_vec(),
                    HOUR + self.jitter(),
                ),
                6 => (
                    format!("sessions.json.{u}.tmp"),
                    b"{}".to_vec(),
                    30_000 + self.rng.below(60_000) as i64,
                ),
                7 => (
                    format!("a{k}.jsonl.reset.{old_ts}"),
                    vec![b'r'; 300],
                    self.file_age(),
                ),
                8 => (
                    format!("b{k}.jsonl.deleted.{old_ts}"),
                    vec![b'd'; 200],
                    self.file_age(),
                ),
                9 => (
                    format!("c{k}.jsonl.reset.{mid_ts}"),
                    vec![b'r'; 100],
                    self.file_age(),
                ),
                10 => (
                    format!("d{k}.jsonl.bak.{old_ts}"),
                    vec![b'b'; 150],
                    self.file_age(),
                ),
                11 => (
                    format!("e{k}.jsonl.reset.2026-13-45T99-99-99.000Z"),
                    vec![b'x'; 120],
                    self.file_age(),
                ),
                12 => (
                    format!("f{k}.jsonl.reset.garbage"),
                    vec![b'x'; 80],
                    self.file_age(),
                ),
                13 => (
                    "sessions.json.bak.123".into(),
                    b"{}".to_vec(),
                    self.file_age(),
                ),
                14 => ("notes.txt".into(), b"notes".to_vec(), self.file_age()),
                15 => (format!("{u}.jsonl.lock"), b"{}".to_vec(), self.file_age()),
                16 => {
                    let h: String = format!("{:x}", Sha256::digest(u.as_bytes()));
                    (
                        format!("skills-prompts/sha256/{}/{h}.txt", &h[..2]),
                        vec![b'p'; 700],
                        self.file_age(),
                    )
                }
                17 => {
                    let h: String = format!("{:x}", Sha256::digest(u.as_bytes()));
                    (
                        format!("skills-prompts/sha256/{}/{h}.txt.{}.{u}.tmp", &h[..2], 77),
                        vec![b'p'; 70],
                        HOUR + self.jitter(),
                    )
                }
                _ => (
                    format!("g{k}.jsonl.deleted.2020-01-01T00-00-00Z"),
                    vec![b'x'; 60],
                    self.file_age(),
                ),
            };
            self.write(&dir.join(name), &content, age);
        }
    }

    fn store(&mut self, agent: &str, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        let mut m = Map::new();
        let n = 3 + self.rng.below(22) as usize;
        let mut prev: Option<String> = None;
        for i in 0..n {
            let key = self.key(agent, i);
            let key = self.pad(&key);
            let v = self.entry(dir, agent, &key, i, &prev);
            prev = v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
            m.insert(key, v);
        }
        self.orphans(dir);
        let v = Value::Object(m);
        let text = if self.rng.chance(50) {
            serde_json::to_string(&v).unwrap()
        } else {
            serde_json::to_string_pretty(&v).unwrap()
        };
        let age = self.file_age();
        self.write(&dir.join("sessions.json"), text.as_bytes(), age);
    }
}

/// Builds a state dir for a batch; returns the agent ids.
fn build_state(state: &Path, seed: u64, b: &Batch, now: i64) -> Vec<String> {
    let mut ids: Vec<String> = vec!["main".into()];
    for i in 1..b.agents {
        ids.push(format!("a{seed}x{i}"));
    }
    // Two configured agents without any directory: enforce creates their empty stores.
    let mut list: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    list.push(json!({"id": format!("empty{seed}a")}));
    list.push(json!({"id": format!("Empty{seed}B")}));
    std::fs::create_dir_all(state).unwrap();
    let config = json!({
        "agents": {"list": list},
        "session": {"maintenance": b.maintenance},
        // A token and a closed port: the peer's gateway call fails as a transport
        // error and it falls back to local maintenance.
        "gateway": {"port": 9, "auth": {"mode": "token", "token": "differential"}},
    });
    std::fs::write(
        state.join("openclaw.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    let mut g = Gen {
        rng: Rng::new(seed * 7919 + b.name.len() as u64),
        now,
        prune: b.prune_days,
        state,
        agents: ids.clone(),
        outside_trajectories: b.outside_trajectories,
        padded: b.padded,
    };
    for id in &ids {
        let dir = state.join("agents").join(id).join("sessions");
        g.store(id, &dir);
    }
    ids
}

/// Every file under `root` (relative path → size), archive timestamps within an hour of
/// `now` normalised; `skip` names top-level directories to leave out.
fn file_set(root: &Path, now: i64, skip: &[&str]) -> BTreeMap<String, u64> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, u64)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                walk(&e.path(), &r, out);
            } else {
                out.push((r, m.len()));
            }
        }
    }
    let mut files = Vec::new();
    walk(root, "", &mut files);
    let re = regex_lite(now);
    files
        .into_iter()
        .filter(|(r, _)| !skip.iter().any(|s| r.starts_with(&format!("{s}/"))))
        .map(|(r, s)| (re(&r), s))
        .collect()
}

/// Replaces `.<reason>.<ts>` suffixes whose time is within an hour of `now` by `.<reason>.<TS>`.
fn regex_lite(now: i64) -> impl Fn(&str) -> String {
    move |name: &str| {
        for reason in ["deleted", "reset", "bak"] {
            let marker = format!(".{reason}.");
            if let Some(i) = name.rfind(&marker) {
                let ts = &name[i + marker.len()..];
                if let Some(ms) = parse_ts(ts) {
                    if (ms - now).abs() < HOUR {
                        return format!("{}{marker}<TS>", &name[..i]);
                    }
                }
            }
        }
        name.to_string()
    }
}

fn parse_ts(ts: &str) -> Option<i64> {
    // YYYY-MM-DDTHH-MM-SS.mmmZ
    let b = ts.as_bytes();
    if b.len() != 24 || b[10] != b'T' || b[23] != b'Z' {
        return None;
    }
    let n = |s: &str| s.parse::<i64>().ok();
    let (y, mo, d) = (n(&ts[0..4])?, n(&ts[5..7])?, n(&ts[8..10])?);
    let (h, mi, s, ms) = (
        n(&ts[11..13])?,
        n(&ts[14..16])?,
        n(&ts[17..19])?,
        n(&ts[20..23])?,
    );
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms)
}

fn first_diff(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            let ctx: Vec<&str> = a.lines().take(i + 1).collect();
            let store = ctx
                .iter()
                .rev()
                .find(|l| l.contains("\"storePath\""))
                .copied()
                .unwrap_or("");
            return format!("line {i}: ours {x:?} vs peer {y:?} ({})", store.trim());
        }
    }
    format!(
        "lengths differ: {} vs {} lines",
        a.lines().count(),
        b.lines().count()
    )
}

fn run_ours(home: &Path, state: &Path, args: &[&str]) -> String {
    let now = now_ms().to_string();
    let o = claw("claw-sessions", home)
        .env("OPENCLAW_STATE_DIR", state)
        .args(["cleanup", "--all-agents", "--json", "--now", &now])
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ours failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn run_theirs(peer: &Path, home: &Path, state: &Path, args: &[&str]) -> String {
    let mut a = vec!["sessions", "cleanup", "--all-agents", "--json"];
    a.extend_from_slice(args);
    let p = run_peer(peer, home, &[("OPENCLAW_STATE_DIR", state)], &a);
    assert!(
        p.status.success(),
        "peer failed on {args:?}: {}",
        String::from_utf8_lossy(&p.stderr)
    );
    String::from_utf8(p.stdout).unwrap()
}

struct Counts {
    cases: usize,
    outside_kept: usize,
    /// Sums of the summary counters over every store, to show the cases are not vacuous.
    totals: BTreeMap<String, i64>,
}

impl Counts {
    fn add(&mut self, doc: &str, phase: &str) {
        let v: Value = serde_json::from_str(doc).unwrap();
        let stores = match v.get("stores") {
            Some(Value::Array(a)) => a.clone(),
            _ => vec![v],
        };
        for s in &stores {
            for k in [
                "repaired",
                "missing",
                "dmScopeRetired",
                "modelRunPruned",
                "pruned",
                "capped",
            ] {
                *self.totals.entry(format!("{phase}.{k}")).or_default() +=
                    s[k].as_i64().unwrap_or(0);
            }
            *self.totals.entry(format!("{phase}.artifacts")).or_default() += s
                ["unreferencedArtifacts"]["removedFiles"]
                .as_i64()
                .unwrap_or(0);
            if let Some(b) = s["diskBudget"].as_object() {
                let over = b["overBudget"] == json!(true);
                *self
                    .totals
                    .entry(format!("{phase}.budget.over"))
                    .or_default() += over as i64;
                *self
                    .totals
                    .entry(format!("{phase}.budget.under"))
                    .or_default() += !over as i64;
                for k in ["removedFiles", "removedEntries"] {
                    *self
                        .totals
                        .entry(format!("{phase}.budget.{k}"))
                        .or_default() += b[k].as_i64().unwrap_or(0);
                }
            }
        }
    }
}

fn run_batch(peer: &Path, b: &Batch, seed: u64, counts: &mut Counts) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let state_a = tmp.path().join("a");
    let state_b = tmp.path().join("b");
    let now = now_ms();
    let ids = build_state(&state_a, seed, b, now);
    let what = format!("batch {} seed {seed}", b.name);

    // Dry run, same directory.
    let mut dry = vec!["--dry-run"];
    dry.extend_from_slice(b.flags);
    let theirs = run_theirs(peer, &home, &state_a, &dry);
    let ours = run_ours(&home, &state_a, &dry);
    if ours != theirs {
        if std::env::var_os("CLAWSTATE_DIFF_KEEP").is_some() {
            eprintln!("kept {}", tmp.keep().display());
        }
        panic!(
            "{what}: dry-run JSON differs: {}",
            first_diff(&ours, &theirs)
        );
    }
    counts.cases += ids.len() + 2;
    counts.add(&ours, "dry");

    // Apply on twins: the same generation again under a path of the same length (stores
    // hold absolute paths into their own directory).
    build_state(&state_b, seed, b, now);
    if std::env::var_os("CLAWSTATE_DIFF_KEEP").is_some() {
        // A pristine third twin, for debugging a mismatch by hand.
        build_state(&tmp.path().join("c"), seed, b, now);
    }
    let outside_before = file_set(&state_a.join("traj"), now_ms(), &[]);
    let mut apply: Vec<&str> = Vec::new();
    if b.enforce {
        apply.push("--enforce");
    }
    apply.extend_from_slice(b.flags);
    let theirs = run_theirs(peer, &home, &state_a, &apply);
    let ours = run_ours(&home, &state_b, &apply);
    let a_prefix = state_a.to_string_lossy().into_owned();
    let b_prefix = state_b.to_string_lossy().into_owned();
    let ours_norm = ours.replace(&b_prefix, &a_prefix);
    // Same store bytes and the same files.
    let skip = ["state", "identity", "traj", "logs"];
    let fa = file_set(&state_a, now_ms(), &skip);
    let fb = file_set(&state_b, now_ms(), &skip);
    if fa != fb || ours_norm != theirs {
        let only_a: Vec<_> = fa.iter().filter(|(k, v)| fb.get(*k) != Some(v)).collect();
        let only_b: Vec<_> = fb.iter().filter(|(k, v)| fa.get(*k) != Some(v)).collect();
        if std::env::var_os("CLAWSTATE_DIFF_KEEP").is_some() {
            eprintln!("kept {}", tmp.keep().display());
        }
        panic!(
            "{what}: apply differs: {}\n peer only: {only_a:?}\n ours only: {only_b:?}",
            if ours_norm == theirs {
                "same JSON".to_string()
            } else {
                first_diff(&ours_norm, &theirs)
            }
        );
    }
    for (rel, _) in fa.iter().filter(|(r, _)| r.ends_with("sessions.json")) {
        let x = std::fs::read_to_string(state_a.join(rel)).unwrap();
        let y = std::fs::read_to_string(state_b.join(rel)).unwrap();
        assert!(
            x == y.replace(&b_prefix, &a_prefix),
            "{what}: {rel} differs after apply"
        );
    }
    // The deliberate difference: runtime files outside the directory stay with us.
    let ta = file_set(&state_a.join("traj"), now_ms(), &[]);
    let tb = file_set(&state_b.join("traj"), now_ms(), &[]);
    assert_eq!(
        tb, outside_before,
        "{what}: ours touched a file outside the sessions dirs"
    );
    assert!(ta.keys().all(|k| outside_before.contains_key(k)));
    counts.outside_kept += outside_before.len() - ta.len();
    counts.add(&theirs, "apply");
    counts.cases += ids.len() + 2;
}

#[test]
fn cleanup_matches_the_peer() {
    let Some(peer) = peer() else { return };
    let seeds: u64 = std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut counts = Counts {
        cases: 0,
        outside_kept: 0,
        totals: BTreeMap::new(),
    };
    for seed in 1..=seeds {
        for b in batches() {
            run_batch(&peer, &b, seed, &mut counts);
        }
    }
    eprintln!(
        "differential cleanup: {} store cases, 0 mismatches; {} runtime files outside the sessions dirs deleted by the peer, kept by us; totals {:?}",
        counts.cases, counts.outside_kept, counts.totals
    );
    // Every rule must have fired somewhere, or the comparison proves little.
    for phase in ["dry", "apply"] {
        for k in [
            "repaired",
            "missing",
            "dmScopeRetired",
            "modelRunPruned",
            "pruned",
            "capped",
            "artifacts",
            "budget.over",
            "budget.under",
            "budget.removedFiles",
            "budget.removedEntries",
        ] {
            let key = format!("{phase}.{k}");
            assert!(
                counts.totals.get(&key).copied().unwrap_or(0) > 0,
                "no case exercised {key}"
            );
        }
    }
    assert!(
        counts.outside_kept > 0,
        "no case exercised an outside trajectory runtime file"
    );
}

/// Issue 22 item 6: padded keys, `sessionId`s and `sessionFile`s resolve to the files the
/// gateway resolves them to. `--fix-missing` keeps what the gateway keeps, and no file
/// the gateway counts as referenced is removed as unreferenced.
#[test]
fn cleanup_matches_the_peer_with_padded_keys_and_paths() {
    let Some(peer) = peer() else { return };
    let seeds: u64 = std::env::var("CLAWSTATE_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let mut counts = Counts {
        cases: 0,
        outside_kept: 0,
        totals: BTreeMap::new(),
    };
    let b = padded_batch();
    for seed in 1..=seeds {
        run_batch(&peer, &b, seed, &mut counts);
    }
    eprintln!(
        "differential cleanup (padded): {} store cases, 0 mismatches; totals {:?}",
        counts.cases, counts.totals
    );
    for k in ["missing", "repaired", "pruned", "artifacts"] {
        let key = format!("apply.{k}");
        assert!(
            counts.totals.get(&key).copied().unwrap_or(0) > 0,
            "no case exercised {key}"
        );
    }
}

/// Builds the padded-keys case of issue 22 item 6 under `state`: entries whose keys are
/// padded (alone, or beside a twin under the trimmed key with the same entry), one
/// `--fix-missing` repair under a padded key, and `--fix-dm-scope` retirements.
fn build_padded_case(state: &Path, now: i64) -> PathBuf {
    let dir = state.join("agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(state.join("agents/work/sessions")).unwrap();
    let (g1, g2, g3, g4) = (
        "123e4567-e89b-42d3-a456-426614174000",
        "223e4567-e89b-42d3-a456-426614174000",
        "323e4567-e89b-42d3-a456-426614174000",
        "423e4567-e89b-42d3-a456-426614174000",
    );
    let e = |sid: &str| json!({"sessionId": sid, "updatedAt": now - HOUR});
    let mut m = Map::new();
    m.insert(" agent:work:x ".into(), e("abc"));
    m.insert("agent:main:twin".into(), e("tw"));
    m.insert(" agent:main:twin".into(), e("tw"));
    let mut rep = e(g1);
    rep["sessionFile"] = json!(format!("{g2}.jsonl"));
    m.insert("agent:main:rep".into(), rep);
    let mut rep2 = e(g3);
    rep2["sessionFile"] = json!(format!("{g4}.jsonl"));
    m.insert(" agent:main:rep2 ".into(), rep2);
    m.insert(" agent:main:direct:bob ".into(), e("bob"));
    m.insert("agent:main:direct:carol".into(), e("carol"));
    m.insert("\tagent:main:direct:carol".into(), e("carol"));
    m.insert("agent:main:direct:dave".into(), e("dave"));
    m.insert("agent:main:direct:dave ".into(), e("dave2"));
    let store = dir.join("sessions.json");
    std::fs::write(
        &store,
        serde_json::to_string_pretty(&Value::Object(m)).unwrap(),
    )
    .unwrap();
    let old = now - 60 * DAY;
    for s in ["abc", "tw", g2, g4] {
        let p = dir.join(format!("{s}.jsonl"));
        std::fs::write(&p, format!("{{\"type\":\"session\",\"id\":\"{s}\"}}\n")).unwrap();
        set_mtime(&p, old);
    }
    for s in [g1, g3, "bob", "carol", "dave", "dave2"] {
        let p = dir.join(format!("{s}.jsonl"));
        std::fs::write(&p, "{\"type\":\"message\"}\n").unwrap();
        set_mtime(&p, old);
    }
    store
}

/// Issue 22 item 6, a fixed case: `cleanup --enforce --fix-missing` keeps an entry whose
/// padded key names no entry once trimmed, and its transcript (the gateway's removal
/// looks the trimmed key up); of a padded key and its identical twin, the twin goes; a
/// repair planned under a padded key is not made. The end state is the gateway's (as
/// measured with openclaw@2026.7.1), and is compared with the peer's when it is there.
#[test]
fn fix_missing_keeps_what_the_gateway_keeps_under_padded_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let now = now_ms();
    let state_a = tmp.path().join("a");
    let state_b = tmp.path().join("b");
    let store_b = build_padded_case(&state_b, now);
    let flags = ["--fix-missing", "--fix-dm-scope"];
    let o = claw("claw-sessions", &home)
        .env("OPENCLAW_STATE_DIR", &state_b)
        .args(["cleanup", "--enforce", "--json", "--now", &now.to_string()])
        .arg("--store")
        .arg(&store_b)
        .args(flags)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    for (k, want) in [
        ("beforeCount", 7),
        ("afterCount", 7),
        ("missing", 1),
        ("repaired", 1),
        ("dmScopeRetired", 2),
    ] {
        assert_eq!(summary[k], json!(want), "{k}: {summary}");
    }
    let store: Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&store_b).unwrap()).unwrap();
    let keys: Vec<&str> = store.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            " agent:work:x ",
            " agent:main:twin",
            "agent:main:rep",
            " agent:main:rep2 ",
            " agent:main:direct:bob ",
            "\tagent:main:direct:carol",
            "agent:main:direct:dave ",
        ]
    );
    assert_eq!(
        store[" agent:main:rep2 "]["sessionFile"],
        json!("423e4567-e89b-42d3-a456-426614174000.jsonl"),
        "a repair planned under a padded key is not made"
    );
    let files = file_set(&state_b.join("agents/main/sessions"), now_ms(), &[]);
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "123e4567-e89b-42d3-a456-426614174000.jsonl",
            "423e4567-e89b-42d3-a456-426614174000.jsonl",
            "abc.jsonl",
            "bob.jsonl",
            "carol.jsonl",
            "dave.jsonl.deleted.<TS>",
            "dave2.jsonl",
            "sessions.json",
            "tw.jsonl",
        ],
        "the padded entries' transcripts stay (they are referenced)"
    );
    let Some(peer) = peer() else { return };
    let store_a = build_padded_case(&state_a, now);
    let mut args = vec!["sessions", "cleanup", "--enforce", "--json", "--store"];
    let store_arg = store_a.to_string_lossy().into_owned();
    args.push(&store_arg);
    args.extend_from_slice(&flags);
    let p = run_peer(&peer, &home, &[("OPENCLAW_STATE_DIR", &state_a)], &args);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let (a, b) = (
        state_a.to_string_lossy().into_owned(),
        state_b.to_string_lossy().into_owned(),
    );
    let ours = String::from_utf8_lossy(&o.stdout).replace(&b, &a);
    assert_eq!(ours, String::from_utf8_lossy(&p.stdout), "the summary");
    assert_eq!(
        file_set(&state_a.join("agents/main/sessions"), now_ms(), &[]),
        files,
        "the files"
    );
    assert_eq!(
        std::fs::read_to_string(&store_b).unwrap().replace(&b, &a),
        std::fs::read_to_string(&store_a).unwrap(),
        "the store"
    );
}
