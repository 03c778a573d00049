//! Everything a command needs to know about the installation it works on, built once
//! from the global options: environment, layout, config, clock and target stores.

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::ExitCode;
use crate::install::config::{Config, ConfigError};
use crate::install::live_gateway::{self, GatewayOwner, GatewayRunning};
use crate::install::paths::{Environment, StateLayout};
use crate::install::targets::{resolve_targets, StoreTarget, TargetError, TargetSelection};
use crate::js::clock::{parse_time_ms, system_now_ms, ClockError};
use crate::session::session_key::KeyContext;

/// The options every binary accepts (parsed by the binaries, interpreted here).
#[derive(Debug, Clone, Default)]
pub struct GlobalOptions {
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// `--agent`, `--all-agents`, `--store`.
    pub targets: TargetSelection,
    /// `--now`: epoch ms or ISO-8601; the system clock when absent.
    pub now: Option<String>,
    /// `--offline` / `--via-gateway`: how writes reach a state dir a gateway owns.
    pub route: GatewayRoute,
}

/// Why a context could not be built.
#[derive(Debug, Error)]
pub enum ContextError {
    /// The config is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--now` does not parse.
    #[error("--now: {0}")]
    Clock(#[from] ClockError),
    /// The target options conflict or name an unknown agent.
    #[error(transparent)]
    Targets(#[from] TargetError),
}

impl ExitCode for ContextError {
    fn exit_code(&self) -> i32 {
        match self {
            ContextError::Config(e) => e.exit_code(),
            ContextError::Clock(_) => crate::exit::USAGE,
            ContextError::Targets(e) => e.exit_code(),
        }
    }
}

/// A place a reader was pointed at that does not exist: a typo in `--store` or
/// `--state-dir` must not read as an installation without sessions.
#[derive(Debug, Error)]
pub enum MissingState {
    /// `--store` names no file.
    #[error("{}: no such session store (--store)", .0.display())]
    Store(PathBuf),
    /// `--state-dir` names no directory.
    #[error("{}: no such state directory (--state-dir)", .0.display())]
    StateDir(PathBuf),
}

impl ExitCode for MissingState {
    fn exit_code(&self) -> i32 {
        crate::exit::NOT_FOUND
    }
}

/// The resolved installation a command works on.
#[derive(Debug, Clone)]
pub struct StateContext {
    /// The captured environment.
    pub env: Environment,
    /// Home, state dir and config path.
    pub layout: StateLayout,
    /// The loaded config.
    pub config: Config,
    /// The clock, in epoch ms.
    pub now_ms: i64,
    /// Whether `--now` fixed the clock.
    pub fixed_clock: bool,
    /// The options given.
    pub options: GlobalOptions,
}

impl StateContext {
    /// Builds the context from the process environment and the global options.
    pub fn from_options(options: GlobalOptions) -> Result<Self, ContextError> {
        Self::with_environment(Environment::from_process(), options)
    }

    /// Builds the context from an explicit environment.
    pub fn with_environment(
        env: Environment,
        options: GlobalOptions,
    ) -> Result<Self, ContextError> {
        let layout = StateLayout::resolve(
            &env,
            options.state_dir.as_deref(),
            options.config.as_deref(),
        );
        let config = Config::load(&layout.config_path)?;
        let (now_ms, fixed_clock) = match &options.now {
            Some(n) => (parse_time_ms(n)?, true),
            None => (system_now_ms(), false),
        };
        Ok(StateContext {
            env,
            layout,
            config,
            now_ms,
            fixed_clock,
            options,
        })
    }

    /// The stores selected by `--store` / `--agent` / `--all-agents`.
    pub fn targets(&self) -> Result<Vec<StoreTarget>, TargetError> {
        resolve_targets(&self.layout, &self.config, &self.env, &self.options.targets)
    }

    /// Checks that what a reader of `targets` was pointed at exists: an explicit `--store`
    /// or `--state-dir` that does not is an error (exit 3); a state directory from
    /// `OPENCLAW_STATE_DIR` or the default one that does not exist gives the warning to
    /// print (the listing is then empty, as the gateway's).
    pub fn check_present(&self, targets: &[StoreTarget]) -> Result<Option<String>, MissingState> {
        if self.explicit_store() {
            return match targets.iter().find(|t| !t.store_path.exists()) {
                Some(t) => Err(MissingState::Store(t.store_path.clone())),
                None => Ok(None),
            };
        }
        let dir = &self.layout.state_dir;
        if dir.is_dir() {
            return Ok(None);
        }
        if self.options.state_dir.is_some() {
            return Err(MissingState::StateDir(dir.clone()));
        }
        let source = if self.layout.state_dir_overridden {
            "from OPENCLAW_STATE_DIR"
        } else {
            "give --state-dir DIR or set OPENCLAW_STATE_DIR"
        };
        Ok(Some(format!(
            "no OpenClaw state directory at {} ({source})",
            dir.display()
        )))
    }

    /// Whether `--store` was given (the explicit offline repair path).
    pub fn explicit_store(&self) -> bool {
        self.options.targets.store.is_some()
    }

    /// Whether writes go offline even while a gateway owns the state dir (`--offline`, or
    /// the older `--store`): they warn instead of refusing.
    pub fn writes_offline(&self) -> bool {
        self.explicit_store() || self.options.route == GatewayRoute::Offline
    }

    /// The key-resolution context for `agent_id` (or the default agent).
    pub fn key_context(&self) -> KeyContext {
        KeyContext {
            default_agent_id: self.config.default_agent_id(),
            main_key: self.config.main_key(),
            scope_global: self.config.scope_global(),
            configured_agents: self.config.agent_ids(),
        }
    }

    /// The live gateway of this state dir, if one is running: found by its lock file under
    /// any temp dir it may use or, on Linux, by the files of this state dir it holds open or
    /// its own environment, whatever this process's `TMPDIR` and config path
    /// (`live_gateway`).
    pub fn live_gateway(&self) -> Option<GatewayOwner> {
        live_gateway::find(&self.layout, &self.env)
    }

    /// Applies the live-gateway rule to a write (spec README, decision 4): refused with
    /// exit 75 while a gateway owns the state dir, unless the write goes offline
    /// (`--offline`, `--store`), in which case the warning to print.
    pub fn check_live_gateway(&self) -> Result<Option<String>, GatewayRunning> {
        let Some(owner) = self.live_gateway() else {
            return Ok(None);
        };
        if self.writes_offline() {
            return Ok(Some(format!(
                "the OpenClaw gateway (pid {}) is running; writing {} offline anyway ({}): the gateway may overwrite this change",
                owner.pid,
                self.options.targets.store.as_deref().unwrap_or("the store"),
                if self.explicit_store() { "--store" } else { "--offline" }
            )));
        }
        Err(GatewayRunning {
            owner,
            state_dir: self.layout.state_dir.clone(),
        })
    }
}

/// How writes reach the state dir (`--offline`, `--via-gateway`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GatewayRoute {
    /// Through the gateway when one owns the state dir, else offline.
    #[default]
    Auto,
    /// Offline, even when a gateway owns the state dir (with a warning).
    Offline,
    /// Through the gateway, whether or not one was detected.
    Required,
}
