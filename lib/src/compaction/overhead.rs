//! The fixed prompt overhead of every turn, which a transcript estimate leaves out: the
//! system prompt, the workspace bootstrap files injected into it ([`super::bootstrap`])
//! and the tool schemas sent with it. A session whose transcript is small but whose
//! overhead fills the window overflows on every turn; its failed turns carry no usage, so
//! only the estimate sees it, and only with the overhead added.
//!
//! Where the numbers come from, in order:
//! 1. `--overhead-tokens N`: taken as given (`source: "option"`; 0 is the transcript alone).
//! 2. Otherwise an estimate (`source: "estimate"`): the bootstrap files as the gateway
//!    would inject them now; the rest of the system prompt and the tool schemas from the
//!    entry's `systemPromptReport` (the gateway's measurement of its last run:
//!    `systemPrompt.chars` less its injected files, `tools.schemaChars`), or without one
//!    from what openclaw 2026.7.1 sends with the default config: a 17997-character
//!    system prompt besides the files and 31 tools of 21086 schema characters (17585 and
//!    22 tools of 12489 with `plugins.enabled: false`). Tool policy (profiles,
//!    allow/deny), skills and plugins are not resolved offline: the report covers them
//!    after one run; `--overhead-tokens` overrides.
//!
//! Tokens are `ceil(chars / 4)` (`estimateStringChars` for file text, as the gateway's
//! estimates count). The overhead is added to an estimated context only: an assistant's
//! usage already counts what the provider received, system prompt and tools included.

use serde_json::{json, Map, Value};

use super::bootstrap::{self, BootstrapFile};
use crate::install::config::Config;
use crate::install::paths::Environment;
use crate::transcript::tokens::estimate_string_chars;

/// The system prompt besides the bootstrap files, with the default config (measured on
/// openclaw 2026.7.1: `systemPrompt.chars` less the injected files' characters).
pub const DEFAULT_SYSTEM_PROMPT_CHARS: u64 = 17_997;
/// The same with `plugins.enabled: false`.
pub const DEFAULT_SYSTEM_PROMPT_CHARS_NO_PLUGINS: u64 = 17_585;
/// The tools sent with the default config, and their schemas' characters.
pub const DEFAULT_TOOLS: (u64, u64) = (31, 21_086);
/// The same with `plugins.enabled: false` (the core tools only).
pub const DEFAULT_TOOLS_NO_PLUGINS: (u64, u64) = (22, 12_489);

/// One part of the overhead measured in characters.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Its tokens.
    pub tokens: u64,
    /// Its characters.
    pub chars: u64,
    /// How many (tools only).
    pub count: Option<u64>,
    /// `systemPromptReport` or `default`.
    pub source: &'static str,
}

/// The estimated parts (absent for `--overhead-tokens`).
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// The agent's workspace.
    pub workspace: std::path::PathBuf,
    /// The per-file and total caps.
    pub limits: (usize, usize),
    /// The system prompt besides the bootstrap files.
    pub system_prompt: Part,
    /// The bootstrap files, with their tokens.
    pub bootstrap_files: Vec<(BootstrapFile, u64)>,
    /// The tool schemas.
    pub tools: Part,
}

/// The overhead of one session's turns.
#[derive(Debug, Clone, PartialEq)]
pub struct Overhead {
    /// The tokens in all.
    pub total: u64,
    /// How they were found, when estimated.
    pub parts: Option<Parts>,
}

/// What the estimate reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The config.
    pub config: &'a Config,
    /// The environment (`OPENCLAW_WORKSPACE_DIR`, `OPENCLAW_PROFILE`).
    pub env: &'a Environment,
    /// The effective home.
    pub home: &'a std::path::Path,
    /// The state dir.
    pub state_dir: &'a std::path::Path,
    /// The session's agent.
    pub agent_id: &'a str,
    /// The session's key, when it has one.
    pub session_key: Option<&'a str>,
    /// The session's entry, when it has one.
    pub entry: Option<&'a Map<String, Value>>,
}

fn tokens_of_chars(chars: u64) -> u64 {
    chars.div_ceil(4)
}

fn count(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f >= 0.0)
        .map(|f| f.floor() as u64)
}

impl Overhead {
    /// `--overhead-tokens N`.
    pub fn given(tokens: u64) -> Overhead {
        Overhead {
            total: tokens,
            parts: None,
        }
    }

    /// The estimate described in the module doc.
    pub fn estimate(i: &Inputs<'_>) -> Overhead {
        let workspace = bootstrap::workspace_dir(i.config, i.agent_id, i.env, i.home, i.state_dir);
        let files = bootstrap::injected_files(i.config, i.agent_id, i.session_key, &workspace);
        let bootstrap_files: Vec<(BootstrapFile, u64)> = files
            .into_iter()
            .map(|f| {
                let t = tokens_of_chars(estimate_string_chars(&f.injected) as u64);
                (f, t)
            })
            .collect();
        let report = i
            .entry
            .and_then(|e| e.get("systemPromptReport"))
            .filter(|r| r.get("source").and_then(Value::as_str) == Some("run"));
        let no_plugins = i.config.root.pointer("/plugins/enabled") == Some(&Value::Bool(false));
        let system_prompt = report
            .and_then(|r| {
                let chars = count(r.pointer("/systemPrompt/chars"))?;
                let files: u64 = r
                    .get("injectedWorkspaceFiles")
                    .and_then(Value::as_array)
                    .map_or(0, |a| {
                        a.iter().filter_map(|f| count(f.get("injectedChars"))).sum()
                    });
                let chars = chars.saturating_sub(files);
                Some(Part {
                    tokens: tokens_of_chars(chars),
                    chars,
                    count: None,
                    source: "systemPromptReport",
                })
            })
            .unwrap_or_else(|| {
                let chars = if no_plugins {
                    DEFAULT_SYSTEM_PROMPT_CHARS_NO_PLUGINS
                } else {
                    DEFAULT_SYSTEM_PROMPT_CHARS
                };
                Part {
                    tokens: tokens_of_chars(chars),
                    chars,
                    count: None,
                    source: "default",
                }
            });
        let tools = report
            .and_then(|r| {
                let chars = count(r.pointer("/tools/schemaChars"))?;
                let n = r
                    .pointer("/tools/entries")
                    .and_then(Value::as_array)
                    .map(|a| a.len() as u64);
                Some(Part {
                    tokens: tokens_of_chars(chars),
                    chars,
                    count: n,
                    source: "systemPromptReport",
                })
            })
            .unwrap_or_else(|| {
                let (n, chars) = if no_plugins {
                    DEFAULT_TOOLS_NO_PLUGINS
                } else {
                    DEFAULT_TOOLS
                };
                Part {
                    tokens: tokens_of_chars(chars),
                    chars,
                    count: Some(n),
                    source: "default",
                }
            });
        let total = system_prompt.tokens
            + tools.tokens
            + bootstrap_files.iter().map(|(_, t)| t).sum::<u64>();
        Overhead {
            total,
            parts: Some(Parts {
                workspace,
                limits: bootstrap::limits(i.config, i.agent_id),
                system_prompt,
                bootstrap_files,
                tools,
            }),
        }
    }

    /// The `overhead` document of `check` (and of `plan`'s and `auto`'s decisions);
    /// `applied` says whether it was added (only to an estimate).
    pub fn to_json(&self, applied: bool) -> Value {
        let Some(p) = &self.parts else {
            return json!({
                "source": "option",
                "applied": applied,
                "total": self.total,
                "systemPrompt": null,
                "bootstrapFiles": [],
                "bootstrapTokens": null,
                "tools": null,
            });
        };
        let part = |x: &Part| {
            let mut m = json!({"tokens": x.tokens, "chars": x.chars, "source": x.source});
            if let Some(n) = x.count {
                m["count"] = json!(n);
            }
            m
        };
        let files: Vec<Value> = p
            .bootstrap_files
            .iter()
            .map(|(f, t)| {
                json!({
                    "name": f.name,
                    "path": f.path.to_string_lossy(),
                    "missing": f.missing,
                    "rawChars": f.raw_chars,
                    "injectedChars": f.injected_chars,
                    "truncated": f.truncated,
                    "tokens": t,
                })
            })
            .collect();
        json!({
            "source": "estimate",
            "applied": applied,
            "total": self.total,
            "workspace": p.workspace.to_string_lossy(),
            "bootstrapMaxChars": p.limits.0,
            "bootstrapTotalMaxChars": p.limits.1,
            "systemPrompt": part(&p.system_prompt),
            "bootstrapFiles": files,
            "bootstrapTokens": p.bootstrap_files.iter().map(|(_, t)| t).sum::<u64>(),
            "tools": part(&p.tools),
        })
    }
}
