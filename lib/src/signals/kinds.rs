//! Event kinds (signals spec §2.1): which kinds notify watchers, and the default actor,
//! summary, dedupe key and payload each producer gives them.

use serde_json::{Map, Value};

use crate::js;

/// Who caused an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorType {
    /// A person.
    Human,
    /// An agent session.
    Agent,
    /// The system (runs, compaction, monitors).
    System,
}

impl ActorType {
    /// Parses `human`, `agent` or `system`.
    pub fn parse(s: &str) -> Option<ActorType> {
        match s {
            "human" => Some(ActorType::Human),
            "agent" => Some(ActorType::Agent),
            "system" => Some(ActorType::System),
            _ => None,
        }
    }

    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorType::Human => "human",
            ActorType::Agent => "agent",
            ActorType::System => "system",
        }
    }
}

/// The terminal outcome of a failed child run (`run_failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The run failed.
    Error,
    /// The run timed out.
    Timeout,
    /// The run was cancelled.
    Cancelled,
}

impl Outcome {
    /// Parses `error`, `timeout` or `cancelled`.
    pub fn parse(s: &str) -> Option<Outcome> {
        match s {
            "error" => Some(Outcome::Error),
            "timeout" => Some(Outcome::Timeout),
            "cancelled" => Some(Outcome::Cancelled),
            _ => None,
        }
    }

    /// The payload text.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
        }
    }

    /// `SUBAGENT_TERMINAL_SUMMARY`.
    pub fn summary(self) -> &'static str {
        match self {
            Outcome::Error => "child run failed",
            Outcome::Timeout => "child run timed out",
            Outcome::Cancelled => "child run cancelled",
        }
    }
}

/// The kinds the gateway records, in the order of the spec's table.
pub const KNOWN_KINDS: [&str; 9] = [
    "created",
    "human_direct_message",
    "upstream_missing",
    "goal_changed",
    "child_spawned",
    "run_completed",
    "run_failed",
    "compacted",
    "adopted",
];

/// `NOTIFY_BY_SESSION_STATE_EVENT_KIND`: whether an event of `kind` notifies watchers
/// (unknown kinds do not).
pub fn notifies(kind: &str) -> bool {
    matches!(
        kind,
        "human_direct_message" | "upstream_missing" | "goal_changed"
    )
}

/// The actor a kind's producer uses when none is given (`None`: it must be given).
pub fn default_actor(kind: &str) -> Option<ActorType> {
    match kind {
        "human_direct_message" | "adopted" => Some(ActorType::Human),
        "child_spawned" => Some(ActorType::Agent),
        "upstream_missing" | "goal_changed" | "run_completed" | "run_failed" | "compacted" => {
            Some(ActorType::System)
        }
        _ => None,
    }
}

/// What the producer-side defaults are computed from.
#[derive(Debug, Clone, Default)]
pub struct DefaultsInput<'a> {
    /// The session key.
    pub session_key: &'a str,
    /// The agent id.
    pub agent_id: &'a str,
    /// The session id.
    pub session_id: Option<&'a str>,
    /// The run id.
    pub run_id: Option<&'a str>,
    /// The compaction operation id.
    pub operation_id: Option<&'a str>,
    /// The channel (`human_direct_message`) or catalog id (`upstream_missing`, `adopted`).
    pub via: Option<&'a str>,
    /// The outcome of a failed run.
    pub outcome: Option<Outcome>,
}

/// The producer's summary for `kind`, or `None` for kinds without one (a summary must be given).
pub fn default_summary(kind: &str, d: &DefaultsInput<'_>) -> Option<String> {
    let via = || {
        d.via
            .map(js::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_string()
    };
    Some(match kind {
        "created" => "session created".to_string(),
        "human_direct_message" => format!("human message via {}", via()),
        "upstream_missing" => format!("upstream missing via {}", via()),
        // The gateway's goal producers pass their own text ("goal created", "goal status
        // changed to <s>", …); the docs' example uses this one.
        "goal_changed" => "goal updated".to_string(),
        "child_spawned" => "child session spawned".to_string(),
        "run_completed" => "child run completed".to_string(),
        "run_failed" => d.outcome.unwrap_or(Outcome::Error).summary().to_string(),
        "compacted" => "session compacted".to_string(),
        "adopted" => format!("adopted from {}", via()),
        _ => return None,
    })
}

/// The producer's dedupe key for `kind`, when the inputs it is built from are present.
pub fn default_dedupe_key(kind: &str, d: &DefaultsInput<'_>) -> Option<String> {
    match kind {
        "created" => d
            .session_id
            .map(|sid| format!("created:{}:{}:{}", d.agent_id, d.session_key, sid)),
        "child_spawned" => d.run_id.map(|r| format!("child-spawned:{r}")),
        "run_completed" | "run_failed" => d.run_id.map(|r| format!("run-terminal:{r}")),
        "compacted" => d.operation_id.map(|o| format!("compacted:{o}")),
        "adopted" => Some(format!("adopted:{}", d.session_key)),
        _ => None,
    }
}

/// The producer's payload for `kind`, when it has one.
pub fn default_payload(kind: &str, d: &DefaultsInput<'_>) -> Option<Map<String, Value>> {
    let mut m = Map::new();
    match kind {
        "run_failed" => {
            m.insert(
                "outcome".into(),
                Value::String(d.outcome.unwrap_or(Outcome::Error).as_str().into()),
            );
        }
        "upstream_missing" => {
            m.insert("channel".into(), Value::String(d.via?.to_string()));
        }
        "adopted" => {
            m.insert("catalogId".into(), Value::String(d.via?.to_string()));
        }
        _ => return None,
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_producers() {
        let d = DefaultsInput {
            session_key: "agent:main:subagent:c1",
            agent_id: "main",
            session_id: Some("sid-1"),
            run_id: Some("run-1"),
            outcome: Some(Outcome::Timeout),
            via: Some("  "),
            ..Default::default()
        };
        assert_eq!(
            default_summary("run_failed", &d).unwrap(),
            "child run timed out"
        );
        assert_eq!(
            default_summary("human_direct_message", &d).unwrap(),
            "human message via unknown"
        );
        assert_eq!(
            default_dedupe_key("created", &d).unwrap(),
            "created:main:agent:main:subagent:c1:sid-1"
        );
        assert_eq!(
            default_dedupe_key("run_failed", &d).unwrap(),
            "run-terminal:run-1"
        );
        assert!(notifies("goal_changed") && !notifies("child_spawned") && !notifies("x"));
        assert_eq!(default_summary("mystery", &d), None);
    }
}
