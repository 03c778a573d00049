//! Which state schema the host's OpenClaw uses, so that clawstate never writes a state
//! database the host's gateway cannot open.
//!
//! Every gateway refuses a state database whose `PRAGMA user_version` is newer than its
//! own (2026.7.1: "uses newer schema version 15; this OpenClaw build supports 1", and its
//! CLI and gateway exit 1; 2026.8.1 and later: "… this build supports 15. Refused by …",
//! the gateway exits 78) and migrates an older one forward when its gateway starts or
//! `openclaw doctor --fix` runs. The signal log arrived with state schema 15 (2026.8.1);
//! 2026.7 builds use schema 1, have no signal tables and know no other schema, so on a
//! 2026.7 host there is nothing clawstate may create or write.
//!
//! What decides: an existing database's own `user_version` (see [`super::db`]); for a
//! missing one, `--schema N` when given, else the release that last wrote the config
//! (`meta.lastTouchedVersion` of `openclaw.json`, e.g. `"2026.8.1"`; every release
//! examined stamps it on each config write), else nothing is known and schema 15 is created:
//! the oldest with the signal log, which every release from 2026.8.1 on opens (later ones
//! migrate it forward).
//!
//! The releases' schemas, measured (the schema check in each npm package's `dist/`, and
//! the databases 2026.7.1, 2026.8.1 and 2026.9.6 create): 2026.7.x and older → 1;
//! 2026.8.1, 2026.8.2, 2026.9.1, 2026.9.2 → 15; 2026.9.3 → 16; 2026.9.4, 2026.9.5 → 17;
//! 2026.9.6 → 18. clawstate creates the two canonical forms it has the exact DDL of:
//! 18 for a host at 18 or later, else 15.

use std::fmt;
use std::path::PathBuf;

use crate::install::config::Config;

/// The first state schema with the signal log (openclaw@2026.8.1).
pub const SIGNAL_LOG_SCHEMA: i64 = 15;
/// The state schema of OpenClaw 2026.7 (no signal log).
pub const SCHEMA_2026_7: i64 = 1;

/// The state schema each release line starts (release, schema), oldest first; releases
/// before the first have no signal log (2026.7.x: schema 1).
const RELEASE_SCHEMAS: [((u32, u32, u32), i64); 4] = [
    ((2026, 8, 1), 15),
    ((2026, 9, 3), 16),
    ((2026, 9, 4), 17),
    ((2026, 9, 6), 18),
];

/// The state schemas clawstate can create (it has their exact DDL), newest first.
pub const CREATABLE: [i64; 2] = [18, 15];

/// An OpenClaw release as `meta.lastTouchedVersion` spells it: `2026.8.1`, a revision
/// `2026.7.1-1` (the same release line), or a prerelease `2026.8.1-beta.2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// Year, month and patch.
    pub number: (u32, u32, u32),
    /// Whether a prerelease tag follows (`-beta.2`; a bare `-N` revision is not one).
    pub prerelease: bool,
}

impl Release {
    /// Parses `YYYY.M.P` with an optional `-suffix` (and an optional leading `v`).
    pub fn parse(text: &str) -> Option<Release> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let (core, suffix) = match t.split_once('-') {
            Some((c, s)) => (c, Some(s)),
            None => (t, None),
        };
        let mut parts = core.split('.');
        let mut next = || -> Option<u32> {
            let p = parts.next()?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok()
        };
        let number = (next()?, next()?, next()?);
        if parts.next().is_some() {
            return None;
        }
        let prerelease = match suffix {
            None => false,
            Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => false,
            Some(_) => true,
        };
        Some(Release { number, prerelease })
    }

    /// The state schema this release uses: a prerelease counts as the release line before
    /// it (its own schema is unknown, and an older guess is the safe one: newer gateways
    /// migrate an older schema, older ones refuse a newer one).
    pub fn state_schema(&self) -> i64 {
        let key = (self.number, u8::from(!self.prerelease));
        RELEASE_SCHEMAS
            .iter()
            .rev()
            .find(|(n, _)| key >= (*n, 1))
            .map_or(SCHEMA_2026_7, |(_, schema)| *schema)
    }
}

/// The schema clawstate creates for a host whose gateway uses `host_schema`: the newest
/// canonical form not newer than it, or `None` when the host has no signal log.
pub fn creatable_schema(host_schema: i64) -> Option<i64> {
    CREATABLE
        .iter()
        .copied()
        .find(|schema| *schema <= host_schema)
}

/// How the host's state schema is known before its database is opened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HostSchema {
    /// `--schema N`: the caller says the host's gateway uses schema N.
    Given(i64),
    /// The config's `meta.lastTouchedVersion`.
    Config {
        /// The version as written.
        version: String,
        /// The config file.
        path: PathBuf,
    },
    /// Nothing says: a missing database is created at schema 15.
    #[default]
    Unknown,
}

impl HostSchema {
    /// The host as `--schema` (when given) or the config describes it.
    pub fn of(config: &Config, given: Option<i64>) -> HostSchema {
        if let Some(n) = given {
            return HostSchema::Given(n);
        }
        match config.last_touched_version() {
            Some(v) if Release::parse(v).is_some() => HostSchema::Config {
                version: v.to_string(),
                path: config.path.clone(),
            },
            _ => HostSchema::Unknown,
        }
    }

    /// The host gateway's state schema, when known.
    pub fn schema(&self) -> Option<i64> {
        match self {
            HostSchema::Given(n) => Some(*n),
            HostSchema::Config { version, .. } => Release::parse(version).map(|r| r.state_schema()),
            HostSchema::Unknown => None,
        }
    }

    /// Whether the host is known to have the signal log.
    pub fn has_signal_log(&self) -> Option<bool> {
        self.schema().map(|s| s >= SIGNAL_LOG_SCHEMA)
    }

    /// The schema a missing database is created as, or `None` when the host has no signal
    /// log.
    pub fn creation(&self) -> Option<i64> {
        creatable_schema(self.schema().unwrap_or(SIGNAL_LOG_SCHEMA))
    }
}

impl fmt::Display for HostSchema {
    /// The host as a message names it: "the host's OpenClaw 2026.7.1 (meta.lastTouchedVersion
    /// of PATH; state schema 1)", "the host's gateway (--schema 15)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostSchema::Given(n) => write!(f, "the host's gateway (--schema {n})"),
            HostSchema::Config { version, path } => write!(
                f,
                "the host's OpenClaw {version} (meta.lastTouchedVersion of {}; state schema {})",
                crate::report::terminal_text::escape_path(path),
                self.schema().unwrap_or(SCHEMA_2026_7)
            ),
            HostSchema::Unknown => f.write_str("the host's OpenClaw"),
        }
    }
}

/// Why a state database has, or a host can have, no signal log: what a writer refuses
/// with and what a reader notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoSignalLog {
    /// The database.
    pub path: PathBuf,
    /// Its `user_version`, when it exists.
    pub db_schema: Option<i64>,
    /// What is known about the host.
    pub host: HostSchema,
}

impl NoSignalLog {
    /// Whether the host already runs a release with the signal log and only has to
    /// migrate the database (its gateway does so when it starts).
    pub fn migration_pending(&self) -> bool {
        self.db_schema.is_some() && self.host.has_signal_log() == Some(true)
    }
}

impl fmt::Display for NoSignalLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = crate::report::terminal_text::escape_path(&self.path);
        match self.db_schema {
            Some(0) => write!(
                f,
                "{path}: not an OpenClaw state database (user_version 0, with tables clawstate did not create)"
            ),
            Some(v) if self.migration_pending() => write!(
                f,
                "{path}: state schema {v} predates the signal log (schema {SIGNAL_LOG_SCHEMA}), and {} has not migrated it yet; start its gateway once (or run `openclaw doctor --fix`) to migrate it, then retry",
                self.host
            ),
            Some(SCHEMA_2026_7) => write!(
                f,
                "{path}: state schema 1 is OpenClaw 2026.7's, which has no signal log; the signal log needs OpenClaw 2026.8 or later (its gateway migrates this database when it first starts)"
            ),
            Some(v) => write!(
                f,
                "{path}: state schema {v} predates the signal log (schema {SIGNAL_LOG_SCHEMA}); the signal log needs OpenClaw 2026.8 or later (its gateway migrates this database when it first starts)"
            ),
            None => write!(
                f,
                "{path}: no state database, and {} has no signal log; the signal log needs OpenClaw 2026.8 or later (pass --schema N if the host's gateway uses state schema N)",
                self.host
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(v: &str) -> i64 {
        Release::parse(v).unwrap().state_schema()
    }

    #[test]
    fn releases_map_to_their_measured_schemas() {
        for (v, s) in [
            ("2026.6.35", 1),
            ("2026.7.1", 1),
            ("2026.7.1-1", 1),
            ("2026.7.35", 1),
            ("2026.8.1-beta.3", 1),
            ("2026.8.1", 15),
            ("2026.8.2", 15),
            ("2026.9.1-beta.1", 15),
            ("2026.9.2", 15),
            ("2026.9.3", 16),
            ("2026.9.4", 17),
            ("2026.9.5", 17),
            ("2026.9.6-beta.1", 17),
            ("2026.9.6", 18),
            ("v2026.9.6", 18),
            ("2026.10.1", 18),
            ("2027.1.1", 18),
        ] {
            assert_eq!(schema(v), s, "{v}");
        }
        for bad in ["", "2026.8", "2026.8.x", "2026.8.1.2", "latest", " . . "] {
            assert_eq!(Release::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn creation_follows_the_host() {
        assert_eq!(creatable_schema(1), None);
        assert_eq!(creatable_schema(14), None);
        assert_eq!(creatable_schema(15), Some(15));
        assert_eq!(creatable_schema(17), Some(15));
        assert_eq!(creatable_schema(18), Some(18));
        assert_eq!(creatable_schema(40), Some(18));
        assert_eq!(HostSchema::Unknown.creation(), Some(15));
        let cfg = |v: &str| HostSchema::Config {
            version: v.into(),
            path: "/c/openclaw.json".into(),
        };
        assert_eq!(cfg("2026.7.1").creation(), None);
        assert_eq!(cfg("2026.9.6").creation(), Some(18));
        assert_eq!(HostSchema::Given(1).creation(), None);
    }

    #[test]
    fn the_config_version_is_read_and_a_flag_wins() {
        let c = Config::from_value(
            "/c/openclaw.json",
            serde_json::json!({"meta": {"lastTouchedVersion": "2026.7.1"}}),
        )
        .unwrap();
        assert_eq!(HostSchema::of(&c, None).schema(), Some(1));
        assert_eq!(HostSchema::of(&c, Some(18)).schema(), Some(18));
        let odd = Config::from_value(
            "/c/openclaw.json",
            serde_json::json!({"meta": {"lastTouchedVersion": "dev"}}),
        )
        .unwrap();
        assert_eq!(HostSchema::of(&odd, None), HostSchema::Unknown);
        assert_eq!(
            HostSchema::of(&Config::empty("/c/openclaw.json"), None),
            HostSchema::Unknown
        );
    }
}
