//! Where OpenClaw keeps its state: effective home, state directory, config file and the
//! per-agent store paths (`store.md` §1.1–1.2).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::session::session_key::normalize_agent_id;

/// The environment variables and working directory that path resolution reads, captured
/// once so that resolution is reproducible and testable.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: HashMap<String, String>,
    cwd: PathBuf,
}

impl Environment {
    /// Captures the current process environment and working directory.
    pub fn from_process() -> Self {
        Environment {
            vars: std::env::vars().collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }

    /// Builds an environment from explicit variables (for tests and embedding).
    pub fn from_vars<I, K, V>(vars: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Environment {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            cwd: cwd.into(),
        }
    }

    /// A variable's value, if set.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A variable trimmed, treating blank, `undefined` and `null` as unset.
    pub fn meaningful_var(&self, name: &str) -> Option<&str> {
        let v = self.var(name)?.trim();
        (!v.is_empty() && v != "undefined" && v != "null").then_some(v)
    }

    /// The working directory relative paths resolve against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The OS home (`HOME`, `USERPROFILE`), ignoring `OPENCLAW_HOME`.
    pub fn os_home(&self) -> Option<PathBuf> {
        self.meaningful_var("HOME")
            .or_else(|| self.meaningful_var("USERPROFILE"))
            .map(PathBuf::from)
    }

    /// The effective home: `OPENCLAW_HOME` (with `~` expanded against the OS home), else
    /// `HOME`, else `USERPROFILE`, else the working directory.
    pub fn effective_home(&self) -> PathBuf {
        let os_home = self.os_home();
        if let Some(h) = self.meaningful_var("OPENCLAW_HOME") {
            let base = os_home.clone().unwrap_or_else(|| self.cwd.clone());
            return absolutize(&expand_tilde(h, &base), &self.cwd);
        }
        os_home.unwrap_or_else(|| self.cwd.clone())
    }
}

/// Expands a leading `~` (alone or followed by `/`) against `home`.
pub fn expand_tilde(input: &str, home: &Path) -> PathBuf {
    if input == "~" {
        home.to_path_buf()
    } else if let Some(rest) = input.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(input)
    }
}

/// Makes `p` absolute against `cwd` and removes `.` and `..` lexically, as Node's
/// `path.resolve` does.
pub fn absolutize(p: &Path, cwd: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The resolved locations of one OpenClaw installation.
#[derive(Debug, Clone)]
pub struct StateLayout {
    /// The effective home directory.
    pub home: PathBuf,
    /// The state directory (`~/.openclaw`, `OPENCLAW_STATE_DIR`, legacy `~/.clawdbot`).
    pub state_dir: PathBuf,
    /// Whether the state directory was given explicitly (flag or `OPENCLAW_STATE_DIR`).
    pub state_dir_overridden: bool,
    /// The config file path (it may not exist).
    pub config_path: PathBuf,
}

impl StateLayout {
    /// Resolves the layout from the environment, with optional `--state-dir` and
    /// `--config` overrides (which act like `OPENCLAW_STATE_DIR` / `OPENCLAW_CONFIG_PATH`).
    pub fn resolve(
        env: &Environment,
        state_dir_flag: Option<&Path>,
        config_flag: Option<&Path>,
    ) -> Self {
        let home = env.effective_home();
        let state_override = state_dir_flag
            .map(|p| p.to_string_lossy().into_owned())
            .or_else(|| {
                env.var("OPENCLAW_STATE_DIR")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            });
        let (state_dir, overridden) = match &state_override {
            Some(s) => (absolutize(&expand_tilde(s, &home), env.cwd()), true),
            None => (default_state_dir(&home), false),
        };
        let config_override = config_flag
            .map(|p| p.to_string_lossy().into_owned())
            .or_else(|| {
                env.var("OPENCLAW_CONFIG_PATH")
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            });
        let config_path = match config_override {
            Some(c) => absolutize(&expand_tilde(&c, &home), env.cwd()),
            None => discover_config(&home, &state_dir, overridden),
        };
        StateLayout {
            home,
            state_dir,
            state_dir_overridden: overridden,
            config_path,
        }
    }

    /// The default store of an agent: `<stateDir>/agents/<id>/sessions/sessions.json`.
    pub fn default_store_path(&self, agent_id: &str) -> PathBuf {
        self.agent_sessions_dir(agent_id).join("sessions.json")
    }

    /// The default sessions directory of an agent.
    pub fn agent_sessions_dir(&self, agent_id: &str) -> PathBuf {
        self.state_dir
            .join("agents")
            .join(normalize_agent_id(agent_id))
            .join("sessions")
    }

    /// The legacy home-based transcript directory (`<home>/.openclaw/sessions`).
    pub fn legacy_sessions_dir(&self) -> PathBuf {
        self.home.join(".openclaw").join("sessions")
    }

    /// The shared state database, `<stateDir>/state/openclaw.sqlite`.
    pub fn state_db_path(&self) -> PathBuf {
        self.state_dir.join("state").join("openclaw.sqlite")
    }
}

fn default_state_dir(home: &Path) -> PathBuf {
    let new_dir = home.join(".openclaw");
    if new_dir.exists() {
        return new_dir;
    }
    let legacy = home.join(".clawdbot");
    if legacy.exists() {
        return legacy;
    }
    new_dir
}

fn discover_config(home: &Path, state_dir: &Path, state_overridden: bool) -> PathBuf {
    let in_state = [
        state_dir.join("openclaw.json"),
        state_dir.join("clawdbot.json"),
    ];
    if let Some(found) = in_state.iter().find(|p| p.exists()) {
        return found.clone();
    }
    if !state_overridden {
        let candidates = [
            home.join(".openclaw/openclaw.json"),
            home.join(".openclaw/clawdbot.json"),
            home.join(".clawdbot/openclaw.json"),
            home.join(".clawdbot/clawdbot.json"),
        ];
        if let Some(found) = candidates.iter().find(|p| p.exists()) {
            return found.clone();
        }
    }
    state_dir.join("openclaw.json")
}

/// Resolves a store path template (`session.store` or `--store`): `{agentId}` becomes
/// the normalised agent id, a leading `~` the effective home, and the result is made
/// absolute against the working directory.
pub fn resolve_store_template(template: &str, agent_id: &str, home: &Path, cwd: &Path) -> PathBuf {
    let t = template
        .trim()
        .replace("{agentId}", &normalize_agent_id(agent_id));
    absolutize(&expand_tilde(&t, home), cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Environment {
        Environment::from_vars(vars.iter().map(|(k, v)| (*k, *v)), "/work")
    }

    #[test]
    fn effective_home_prefers_openclaw_home() {
        assert_eq!(env(&[("HOME", "/h")]).effective_home(), PathBuf::from("/h"));
        assert_eq!(
            env(&[("HOME", "/h"), ("OPENCLAW_HOME", "~/alt")]).effective_home(),
            PathBuf::from("/h/alt")
        );
        assert_eq!(
            env(&[("HOME", "/h"), ("OPENCLAW_HOME", " null ")]).effective_home(),
            PathBuf::from("/h")
        );
    }

    #[test]
    fn state_dir_and_config_discovery() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().to_str().unwrap();
        let e = env(&[("HOME", home)]);
        let l = StateLayout::resolve(&e, None, None);
        assert_eq!(l.state_dir, tmp.path().join(".openclaw"));
        assert_eq!(l.config_path, tmp.path().join(".openclaw/openclaw.json"));

        std::fs::create_dir_all(tmp.path().join(".clawdbot")).unwrap();
        std::fs::write(tmp.path().join(".clawdbot/clawdbot.json"), "{}").unwrap();
        let l = StateLayout::resolve(&e, None, None);
        assert_eq!(l.state_dir, tmp.path().join(".clawdbot"));
        assert_eq!(l.config_path, tmp.path().join(".clawdbot/clawdbot.json"));

        // With a state-dir override, the home candidates are not read.
        let e2 = env(&[("HOME", home), ("OPENCLAW_STATE_DIR", "/s")]);
        let l = StateLayout::resolve(&e2, None, None);
        assert_eq!(l.state_dir, PathBuf::from("/s"));
        assert_eq!(l.config_path, PathBuf::from("/s/openclaw.json"));
        assert_eq!(
            l.default_store_path("Work"),
            PathBuf::from("/s/agents/work/sessions/sessions.json")
        );
    }

    #[test]
    fn store_templates() {
        let p = resolve_store_template(
            "~/custom/{agentId}/s.json",
            "Work",
            Path::new("/h"),
            Path::new("/cwd"),
        );
        assert_eq!(p, PathBuf::from("/h/custom/work/s.json"));
        let p = resolve_store_template(
            "rel/../x/sessions.json",
            "main",
            Path::new("/h"),
            Path::new("/cwd"),
        );
        assert_eq!(p, PathBuf::from("/cwd/x/sessions.json"));
    }
}
