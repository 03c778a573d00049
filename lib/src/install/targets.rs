//! Which stores a command works on: `--store`, `--agent`, `--all-agents`, or the default
//! agent's store (`store.md` §1.2).

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::install::config::Config;
use crate::install::paths::{resolve_store_template, Environment, StateLayout};
use crate::session::session_key::normalize_agent_id;

/// One store to work on and the agent it is reported under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreTarget {
    /// The agent id (for `--store`: the configured default agent, as the gateway reports).
    pub agent_id: String,
    /// The absolute store path.
    pub store_path: PathBuf,
}

/// The target options given on the command line.
#[derive(Debug, Clone, Default)]
pub struct TargetSelection {
    /// `--store PATH`.
    pub store: Option<String>,
    /// `--agent ID[,ID…]`: one agent, or several separated by commas (no agent id holds
    /// a comma).
    pub agent: Option<String>,
    /// `--all-agents`.
    pub all_agents: bool,
}

/// Target options that do not make sense.
#[derive(Debug, Error)]
pub enum TargetError {
    /// `--store` with `--agent` or `--all-agents`.
    #[error("--store cannot be combined with --agent or --all-agents")]
    StoreWithAgent,
    /// `--agent` names an agent that is not configured.
    #[error("Unknown agent id \"{0}\". Configured agents: {1}")]
    UnknownAgent(String, String),
}

impl ExitCode for TargetError {
    fn exit_code(&self) -> i32 {
        match self {
            TargetError::StoreWithAgent => exit::USAGE,
            TargetError::UnknownAgent(..) => exit::NOT_FOUND,
        }
    }
}

/// The store path of `agent_id` under `config` (`session.store` template or default).
pub fn store_path_for_agent(
    layout: &StateLayout,
    config: &Config,
    env: &Environment,
    agent_id: &str,
) -> PathBuf {
    match config.store_template() {
        Some(t) if !t.trim().is_empty() => {
            resolve_store_template(t, agent_id, &layout.home, env.cwd())
        }
        _ => layout.default_store_path(agent_id),
    }
}

/// Resolves the selection into stores, de-duplicated by path, in agent order.
pub fn resolve_targets(
    layout: &StateLayout,
    config: &Config,
    env: &Environment,
    sel: &TargetSelection,
) -> Result<Vec<StoreTarget>, TargetError> {
    if let Some(store) = &sel.store {
        if sel.agent.is_some() || sel.all_agents {
            return Err(TargetError::StoreWithAgent);
        }
        let agent_id = config.default_agent_id();
        return Ok(vec![StoreTarget {
            store_path: resolve_store_template(store, &agent_id, &layout.home, env.cwd()),
            agent_id,
        }]);
    }
    let agents = if sel.all_agents {
        config.all_agent_ids()
    } else if let Some(list) = &sel.agent {
        let known = config.all_agent_ids();
        let mut ids = Vec::new();
        for a in list
            .split(',')
            .filter(|a| !a.trim().is_empty() || !list.contains(','))
        {
            let id = normalize_agent_id(a);
            if !known.contains(&id) {
                return Err(TargetError::UnknownAgent(a.to_string(), known.join(", ")));
            }
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    } else {
        vec![config.default_agent_id()]
    };
    let mut out: Vec<StoreTarget> = Vec::new();
    for agent_id in agents {
        let store_path = store_path_for_agent(layout, config, env, &agent_id);
        if !out.iter().any(|t| t.store_path == store_path) {
            out.push(StoreTarget {
                agent_id,
                store_path,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn setup(cfg: serde_json::Value) -> (Environment, StateLayout, Config) {
        let env = Environment::from_vars([("HOME", "/h"), ("OPENCLAW_STATE_DIR", "/s")], "/cwd");
        let layout = StateLayout::resolve(&env, None, None);
        (
            env,
            layout,
            Config::from_value("/s/openclaw.json", cfg).unwrap(),
        )
    }

    #[test]
    fn store_flag_uses_default_agent() {
        let (env, layout, config) = setup(json!({"agents": {"list": [{"id": "Work"}]}}));
        let sel = TargetSelection {
            store: Some("~/x/{agentId}/sessions.json".into()),
            ..Default::default()
        };
        let t = resolve_targets(&layout, &config, &env, &sel).unwrap();
        assert_eq!(t[0].agent_id, "work");
        assert_eq!(t[0].store_path, PathBuf::from("/h/x/work/sessions.json"));
        let bad = TargetSelection {
            store: Some("x".into()),
            all_agents: true,
            ..Default::default()
        };
        assert!(matches!(
            resolve_targets(&layout, &config, &env, &bad),
            Err(TargetError::StoreWithAgent)
        ));
    }

    #[test]
    fn all_agents_dedupes_by_path() {
        let (env, layout, config) = setup(
            json!({"agents": {"list": [{"id": "main"}, {"id": "work"}]}, "session": {"store": "/one/sessions.json"}}),
        );
        let sel = TargetSelection {
            all_agents: true,
            ..Default::default()
        };
        assert_eq!(
            resolve_targets(&layout, &config, &env, &sel).unwrap().len(),
            1
        );
        let sel = TargetSelection {
            agent: Some("nope".into()),
            ..Default::default()
        };
        assert!(matches!(
            resolve_targets(&layout, &config, &env, &sel),
            Err(TargetError::UnknownAgent(..))
        ));
    }

    #[test]
    fn agent_takes_several_ids_separated_by_commas() {
        let (env, layout, config) =
            setup(json!({"agents": {"list": [{"id": "main"}, {"id": "work"}, {"id": "ops"}]}}));
        let sel = |a: &str| TargetSelection {
            agent: Some(a.into()),
            ..Default::default()
        };
        let ids = |a: &str| -> Vec<String> {
            resolve_targets(&layout, &config, &env, &sel(a))
                .unwrap()
                .into_iter()
                .map(|t| t.agent_id)
                .collect()
        };
        assert_eq!(ids("ops,main"), ["ops", "main"]);
        assert_eq!(ids("work, work,"), ["work"]);
        assert!(matches!(
            resolve_targets(&layout, &config, &env, &sel("main,nope")),
            Err(TargetError::UnknownAgent(a, _)) if a == "nope"
        ));
    }
}
