//! The OpenClaw config file (`openclaw.json`, JSON5): loading with clear errors, and
//! validation of the parts clawstate reads (`session.*`, `agents.list`, `acp`).
//!
//! The gateway's schema is strict everywhere; clawstate validates strictly only the
//! sections whose meaning it depends on, so a config written for a newer gateway with
//! new top-level sections still works offline.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::js::byte_size::parse_byte_size;
use crate::js::duration::{parse_duration_ms, DurationUnit};
use crate::session::session_key::normalize_agent_id;

/// Why a config could not be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("{path}: cannot read config: {source}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The path is not a regular file, or is larger than a config can be.
    #[error(transparent)]
    Unusable(crate::fs::data_file::DataFileError),
    /// The file is not valid JSON5.
    #[error("{path}:{line}:{column}: config is not valid JSON5: {message}")]
    Parse {
        /// The config file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The file parses but a value is invalid (the gateway would refuse it too).
    #[error("{path}: config is invalid: {key}: {message}")]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// The dotted key path, e.g. `session.maintenance.mode`.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// The largest config read (a config is a few KiB; 64 MiB is far beyond any real one).
pub const CONFIG_MAX_BYTES: u64 = 64 << 20;

impl ExitCode for ConfigError {
    fn exit_code(&self) -> i32 {
        match self {
            ConfigError::Read { source, .. }
                if source.kind() == std::io::ErrorKind::InvalidData =>
            {
                exit::DATA_ERR
            }
            ConfigError::Read { .. } => exit::CANT_CREATE,
            ConfigError::Unusable(e) => e.exit_code(),
            _ => exit::DATA_ERR,
        }
    }
}

/// A loaded config (an empty object when the file does not exist).
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the config was looked for.
    pub path: PathBuf,
    /// Whether the file exists.
    pub exists: bool,
    /// The parsed document.
    pub root: Value,
}

impl Config {
    /// An empty config at `path` (nothing configured: all defaults).
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        Config {
            path: path.into(),
            exists: false,
            root: Value::Object(Map::new()),
        }
    }

    /// Loads and validates the config at `path`; a missing file yields [`Config::empty`].
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        // Never a FIFO or a device (a read would block or not end); the size is bounded.
        let bytes = match crate::fs::data_file::open_named(path)
            .and_then(|f| f.read_limited(CONFIG_MAX_BYTES, "a config file"))
        {
            Ok(b) => b,
            Err(e) if e.is_not_found() => return Ok(Config::empty(path)),
            Err(crate::fs::data_file::DataFileError::Io { source, .. }) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
            Err(e) => return Err(ConfigError::Unusable(e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
        })?;
        let root = parse_json5(&text).map_err(|(line, column, message)| ConfigError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message,
        })?;
        let config = Config {
            path: path.to_path_buf(),
            exists: true,
            root,
        };
        config.validate()?;
        Ok(config)
    }

    /// Builds a config from an in-memory document (validated).
    pub fn from_value(path: impl Into<PathBuf>, root: Value) -> Result<Self, ConfigError> {
        let c = Config {
            path: path.into(),
            exists: true,
            root,
        };
        c.validate()?;
        Ok(c)
    }

    /// `meta.lastTouchedVersion`: the OpenClaw release that last wrote the config (every
    /// release stamps it on each write, e.g. `"2026.7.1"`), trimmed; `None` when absent.
    pub fn last_touched_version(&self) -> Option<&str> {
        self.root
            .get("meta")
            .and_then(|m| m.get("lastTouchedVersion"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// The `session` object, or `Null`.
    pub fn session(&self) -> &Value {
        self.root.get("session").unwrap_or(&Value::Null)
    }

    /// The main session key segment: always `main`. The gateway ignores `session.mainKey`
    /// at runtime (it warns "session.mainKey is ignored; main session is always \"main\"").
    pub fn main_key(&self) -> String {
        "main".to_string()
    }

    /// Whether `session.scope` is `global`.
    pub fn scope_global(&self) -> bool {
        self.session().get("scope").and_then(Value::as_str) == Some("global")
    }

    /// `session.store`, the store path template, if set.
    pub fn store_template(&self) -> Option<&str> {
        self.session().get("store").and_then(Value::as_str)
    }

    /// `session.dmScope` (default `main`).
    pub fn dm_scope(&self) -> &str {
        self.session()
            .get("dmScope")
            .and_then(Value::as_str)
            .unwrap_or("main")
    }

    fn agent_list(&self) -> &[Value] {
        self.root
            .pointer("/agents/list")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The configured agent ids, normalised, in list order (`["main"]` when none).
    pub fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for a in self.agent_list() {
            if let Some(id) = a.get("id").and_then(Value::as_str) {
                let id = normalize_agent_id(id);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        if ids.is_empty() {
            ids.push("main".to_string());
        }
        ids
    }

    /// The default agent: the first `agents.list[]` with `default: true`, else the first,
    /// else `main`.
    pub fn default_agent_id(&self) -> String {
        let list = self.agent_list();
        let chosen = list
            .iter()
            .find(|a| a.get("default").and_then(Value::as_bool) == Some(true))
            .or_else(|| list.first())
            .and_then(|a| a.get("id"))
            .and_then(Value::as_str);
        normalize_agent_id(chosen.unwrap_or("main"))
    }

    /// The agent ids `--all-agents` covers: configured agents plus ACP agents
    /// (`acp.defaultAgent`, `acp.allowedAgents`), de-duplicated, in that order.
    pub fn all_agent_ids(&self) -> Vec<String> {
        let mut ids = self.agent_ids();
        let mut push = |id: &str| {
            let id = normalize_agent_id(id);
            if !ids.contains(&id) {
                ids.push(id);
            }
        };
        if let Some(d) = self
            .root
            .pointer("/acp/defaultAgent")
            .and_then(Value::as_str)
        {
            push(d);
        }
        if let Some(list) = self
            .root
            .pointer("/acp/allowedAgents")
            .and_then(Value::as_array)
        {
            for a in list.iter().filter_map(Value::as_str) {
                push(a);
            }
        }
        ids
    }

    /// The configured entry of an agent in `agents.list`, if any.
    pub fn agent_entry(&self, agent_id: &str) -> Option<&Map<String, Value>> {
        self.agent_list()
            .iter()
            .filter_map(Value::as_object)
            .find(|a| {
                a.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| normalize_agent_id(id) == agent_id)
            })
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let mut v = Validator {
            path: &self.path,
            problems: Vec::new(),
        };
        if !self.root.is_object() {
            v.problem("<root>", "expected an object");
        } else {
            v.session(self.root.get("session"));
            v.agents(self.root.get("agents"));
        }
        match v.problems.into_iter().next() {
            Some((key, message)) => Err(ConfigError::Invalid {
                path: self.path.clone(),
                key,
                message,
            }),
            None => Ok(()),
        }
    }
}

/// Parses JSON5 text into an insertion-ordered JSON value; errors carry line and column.
pub fn parse_json5(text: &str) -> Result<Value, (usize, usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    json5::from_str::<Value>(text).map_err(|e| {
        let json5::Error::Message { msg, location } = &e;
        let (line, column) = location
            .as_ref()
            .map(|l| (l.line, l.column))
            .unwrap_or((1, 1));
        let first = msg.lines().last().unwrap_or(msg).trim().to_string();
        (line, column, first)
    })
}

struct Validator<'a> {
    #[allow(dead_code)]
    path: &'a Path,
    problems: Vec<(String, String)>,
}

fn allowed(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    format!("Invalid input (allowed: {})", quoted.join(", "))
}

impl Validator<'_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push((key.to_string(), message.into()));
    }

    /// Checks that `v` is an object with only `keys`; returns it.
    fn object<'v>(
        &mut self,
        key: &str,
        v: &'v Value,
        keys: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = v.as_object() else {
            self.problem(key, "expected an object");
            return None;
        };
        for k in map.keys() {
            if !keys.contains(&k.as_str()) {
                self.problem(key, format!("Unrecognized key: \"{k}\""));
            }
        }
        Some(map)
    }

    fn enum_of(&mut self, key: &str, v: Option<&Value>, values: &[&str]) {
        if let Some(v) = v {
            if !v.as_str().is_some_and(|s| values.contains(&s)) {
                self.problem(key, allowed(values));
            }
        }
    }

    fn int(&mut self, key: &str, v: Option<&Value>, min: i64, max: Option<i64>) {
        if let Some(v) = v {
            let ok = v.as_f64().is_some_and(|n| {
                n.fract() == 0.0 && n >= min as f64 && max.is_none_or(|m| n <= m as f64)
            });
            if !ok {
                let range = match max {
                    Some(m) => format!("an integer from {min} to {m}"),
                    None => format!("an integer ≥ {min}"),
                };
                self.problem(key, format!("expected {range}"));
            }
        }
    }

    fn string(&mut self, key: &str, v: Option<&Value>) {
        if v.is_some_and(|v| !v.is_string()) {
            self.problem(key, "expected a string");
        }
    }

    fn string_list(&mut self, key: &str, v: Option<&Value>) {
        if let Some(v) = v {
            if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                self.problem(key, "expected an array of strings");
            }
        }
    }

    fn reset_block(&mut self, key: &str, v: Option<&Value>) {
        let Some(v) = v else { return };
        if let Some(m) = self.object(key, v, &["mode", "atHour", "idleMinutes"]) {
            self.enum_of(&format!("{key}.mode"), m.get("mode"), &["daily", "idle"]);
            self.int(&format!("{key}.atHour"), m.get("atHour"), 0, Some(23));
            self.int(&format!("{key}.idleMinutes"), m.get("idleMinutes"), 1, None);
        }
    }

    fn session(&mut self, v: Option<&Value>) {
        let Some(v) = v else { return };
        let keys = [
            "scope",
            "dmScope",
            "identityLinks",
            "resetTriggers",
            "idleMinutes",
            "reset",
            "resetByType",
            "resetByChannel",
            "store",
            "typingIntervalSeconds",
            "typingMode",
            "mainKey",
            "sendPolicy",
            "writeLock",
            "agentToAgent",
            "threadBindings",
            "maintenance",
        ];
        let Some(s) = self.object("session", v, &keys) else {
            return;
        };
        self.enum_of("session.scope", s.get("scope"), &["per-sender", "global"]);
        self.enum_of(
            "session.dmScope",
            s.get("dmScope"),
            &[
                "main",
                "per-peer",
                "per-channel-peer",
                "per-account-channel-peer",
            ],
        );
        self.string_list("session.resetTriggers", s.get("resetTriggers"));
        self.int("session.idleMinutes", s.get("idleMinutes"), 1, None);
        self.reset_block("session.reset", s.get("reset"));
        if let Some(rbt) = s.get("resetByType") {
            if let Some(m) = self.object(
                "session.resetByType",
                rbt,
                &["direct", "dm", "group", "thread"],
            ) {
                for (k, b) in m {
                    self.reset_block(&format!("session.resetByType.{k}"), Some(b));
                }
            }
        }
        if let Some(rbc) = s.get("resetByChannel") {
            match rbc.as_object() {
                Some(m) => {
                    for (k, b) in m {
                        self.reset_block(&format!("session.resetByChannel.{k}"), Some(b));
                    }
                }
                None => self.problem("session.resetByChannel", "expected an object"),
            }
        }
        self.string("session.store", s.get("store"));
        self.string("session.mainKey", s.get("mainKey"));
        if let Some(sp) = s.get("sendPolicy") {
            self.send_policy(sp);
        }
        if let Some(wl) = s.get("writeLock") {
            if let Some(m) = self.object(
                "session.writeLock",
                wl,
                &["acquireTimeoutMs", "staleMs", "maxHoldMs"],
            ) {
                for k in ["acquireTimeoutMs", "staleMs", "maxHoldMs"] {
                    self.int(&format!("session.writeLock.{k}"), m.get(k), 1, None);
                }
            }
        }
        if let Some(m) = s.get("maintenance") {
            self.maintenance(m);
        }
    }

    fn send_policy(&mut self, v: &Value) {
        let Some(m) = self.object("session.sendPolicy", v, &["default", "rules"]) else {
            return;
        };
        self.enum_of(
            "session.sendPolicy.default",
            m.get("default"),
            &["allow", "deny"],
        );
        let Some(rules) = m.get("rules") else { return };
        let Some(rules) = rules.as_array() else {
            self.problem("session.sendPolicy.rules", "expected an array");
            return;
        };
        for (i, r) in rules.iter().enumerate() {
            let key = format!("session.sendPolicy.rules.{i}");
            let Some(r) = self.object(&key, r, &["action", "match"]) else {
                continue;
            };
            match r.get("action") {
                None => self.problem(&format!("{key}.action"), "required"),
                a => self.enum_of(&format!("{key}.action"), a, &["allow", "deny"]),
            }
            if let Some(mt) = r.get("match") {
                let mk = format!("{key}.match");
                if let Some(mm) = self.object(
                    &mk,
                    mt,
                    &["channel", "chatType", "keyPrefix", "rawKeyPrefix"],
                ) {
                    for k in ["channel", "keyPrefix", "rawKeyPrefix"] {
                        self.string(&format!("{mk}.{k}"), mm.get(k));
                    }
                    self.enum_of(
                        &format!("{mk}.chatType"),
                        mm.get("chatType"),
                        &["direct", "group", "channel", "dm"],
                    );
                }
            }
        }
    }

    fn maintenance(&mut self, v: &Value) {
        let keys = [
            "mode",
            "pruneAfter",
            "pruneDays",
            "maxEntries",
            "rotateBytes",
            "resetArchiveRetention",
            "maxDiskBytes",
            "highWaterBytes",
        ];
        let Some(m) = self.object("session.maintenance", v, &keys) else {
            return;
        };
        self.enum_of(
            "session.maintenance.mode",
            m.get("mode"),
            &["enforce", "warn"],
        );
        self.int("session.maintenance.pruneDays", m.get("pruneDays"), 1, None);
        self.int(
            "session.maintenance.maxEntries",
            m.get("maxEntries"),
            1,
            None,
        );
        for k in ["pruneAfter", "resetArchiveRetention"] {
            let key = format!("session.maintenance.{k}");
            match m.get(k) {
                None | Some(Value::Bool(false)) if k == "resetArchiveRetention" => {}
                None => {}
                Some(v) => match stringified(v) {
                    Some(s) if parse_duration_ms(&s, DurationUnit::Days).is_ok() => {}
                    Some(_) => self.problem(&key, "invalid duration (use ms, s, m, h, d)"),
                    None => self.problem(&key, "expected a string or a number"),
                },
            }
        }
        for k in ["rotateBytes", "maxDiskBytes", "highWaterBytes"] {
            let key = format!("session.maintenance.{k}");
            if let Some(v) = m.get(k) {
                match stringified(v) {
                    Some(_) if k == "rotateBytes" => {}
                    Some(s) if parse_byte_size(&s).is_ok() => {}
                    Some(_) => self.problem(&key, "invalid size (use b, kb, mb, gb, tb)"),
                    None => self.problem(&key, "expected a string or a number"),
                }
            }
        }
    }

    fn agents(&mut self, v: Option<&Value>) {
        let Some(list) = v.and_then(|a| a.get("list")) else {
            return;
        };
        let Some(list) = list.as_array() else {
            self.problem("agents.list", "expected an array");
            return;
        };
        for (i, a) in list.iter().enumerate() {
            match a.get("id") {
                Some(Value::String(_)) => {}
                _ => self.problem(&format!("agents.list.{i}.id"), "expected a string"),
            }
            if a.get("default").is_some_and(|d| !d.is_boolean()) {
                self.problem(&format!("agents.list.{i}.default"), "expected a boolean");
            }
        }
    }
}

/// A string or number config value as the text the gateway's parsers see.
pub fn stringified(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) => Some(crate::js::jsjson::to_string_compact(v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invalid(v: Value) -> String {
        Config::from_value("/c.json", v).unwrap_err().to_string()
    }

    #[test]
    fn json5_with_comments_and_trailing_commas() {
        let v = parse_json5("// c\n{session: {maintenance: {pruneAfter: '2d', maxEntries: 3,},},}")
            .unwrap();
        assert_eq!(v["session"]["maintenance"]["maxEntries"], json!(3));
        let (line, _, _) = parse_json5("{\n  a: 1,\n  b: }").unwrap_err();
        assert_eq!(line, 3);
    }

    #[test]
    fn invalid_values_are_named() {
        assert_eq!(
            invalid(json!({"session": {"maintenance": {"mode": "bogus"}}})),
            "/c.json: config is invalid: session.maintenance.mode: Invalid input (allowed: \"enforce\", \"warn\")"
        );
        assert!(
            invalid(json!({"session": {"maintenance": {"pruneAfter": "abc"}}}))
                .contains("invalid duration")
        );
        assert!(
            invalid(json!({"session": {"maintenance": {"maxDiskBytes": "5xb"}}}))
                .contains("invalid size")
        );
        assert!(invalid(json!({"session": {"bogus": 1}})).contains("Unrecognized key: \"bogus\""));
        assert!(Config::from_value(
            "/c",
            json!({"session": {"maintenance": {"pruneAfter": 7, "resetArchiveRetention": false}}})
        )
        .is_ok());
    }

    #[test]
    fn agents_and_defaults() {
        let c = Config::from_value("/c", json!({"agents": {"list": [{"id": "Main"}, {"id": "Work", "default": true}]}, "acp": {"allowedAgents": ["codex"]}})).unwrap();
        assert_eq!(c.default_agent_id(), "work");
        assert_eq!(c.agent_ids(), ["main", "work"]);
        assert_eq!(c.all_agent_ids(), ["main", "work", "codex"]);
        let e = Config::empty("/x");
        assert_eq!(e.default_agent_id(), "main");
        assert_eq!(e.main_key(), "main");
    }
}
