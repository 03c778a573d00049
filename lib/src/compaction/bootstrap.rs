//! The agent's workspace bootstrap files as the gateway injects them into every turn's
//! system prompt (openclaw 2026.7.1 `loadWorkspaceBootstrapFiles`,
//! `resolveBootstrapFilesForRun`, `buildBootstrapContextFiles`, `trimBootstrapContent`):
//! which files, from which workspace, cut to the per-file and total caps.
//!
//! The workspace is `agents.list[].workspace`, else (for the default agent)
//! `agents.defaults.workspace`, `OPENCLAW_WORKSPACE_DIR`, `~/.openclaw/workspace[-<profile>]`;
//! another agent's is `<agents.defaults.workspace>/<id>` or `<stateDir>/workspace-<id>`.
//! The files are AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md, HEARTBEAT.md,
//! BOOTSTRAP.md and MEMORY.md (only when it exists); subagent sessions get AGENTS.md and
//! TOOLS.md, cron sessions those two and SOUL.md, IDENTITY.md, USER.md; BOOTSTRAP.md goes
//! once the workspace's setup is complete; HEARTBEAT.md goes for the default agent when its
//! heartbeat guidance is off; `contextInjection: "never"` injects none. A file that cannot
//! be read (missing, over 2 MiB, not a regular file) is injected as a `[MISSING]` marker.
//! Each file is cut to `bootstrapMaxChars` (default 20000) and all of them to
//! `bootstrapTotalMaxChars` (default 60000), with the gateway's markers and AGENTS.md's
//! policy digest, so that the injected lengths are the gateway's. Not followed offline:
//! bootstrap hooks of plugins, `extraBootstrapFiles`, and the `continuation-skip`
//! injection mode (its files are counted).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::fs::data_file::open_named;
use crate::install::config::Config;
use crate::install::paths::{absolutize, expand_tilde, Environment};
use crate::js;
use crate::session::session_key::{is_cron_key, is_subagent_key, normalize_agent_id};

/// `DEFAULT_BOOTSTRAP_MAX_CHARS`: the cap on one file.
pub const DEFAULT_BOOTSTRAP_MAX_CHARS: usize = 20_000;
/// `DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS`: the cap on all of them.
pub const DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS: usize = 60_000;
/// `MAX_WORKSPACE_BOOTSTRAP_FILE_BYTES`: a larger file is not read (it counts as missing).
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// `MIN_BOOTSTRAP_FILE_BUDGET_CHARS`: less total budget left stops the injection.
const MIN_FILE_BUDGET_CHARS: i64 = 64;
/// `MIN_BOOTSTRAP_TRIMMED_CONTENT_CHARS`.
const MIN_TRIMMED_CONTENT_CHARS: i64 = 16;
/// The workspace setup state file, and its legacy place.
const STATE_FILE: &str = "openclaw-workspace-state.json";
const LEGACY_STATE_FILE: &str = ".openclaw/workspace-state.json";

/// The bootstrap files in the gateway's order.
const NAMES: [&str; 8] = [
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
];

/// One bootstrap file as injected (the gateway's `injectedWorkspaceFiles` row).
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapFile {
    /// The file name (`AGENTS.md`, …).
    pub name: &'static str,
    /// Its path in the workspace.
    pub path: PathBuf,
    /// Whether it could not be read.
    pub missing: bool,
    /// Its length without trailing whitespace, in UTF-16 units (0 when missing).
    pub raw_chars: usize,
    /// What is injected for it (the cut text, or the `[MISSING]` marker; empty when the
    /// total budget ran out before it).
    pub injected: String,
    /// The injected text's length in UTF-16 units.
    pub injected_chars: usize,
    /// Whether less than the file was injected.
    pub truncated: bool,
}

/// The per-file and total caps for an agent: `agents.list[].bootstrapMaxChars` /
/// `bootstrapTotalMaxChars`, else `agents.defaults.*`, else the defaults.
pub fn limits(config: &Config, agent_id: &str) -> (usize, usize) {
    let pick = |key: &str, default: usize| {
        let raw = config
            .agent_entry(agent_id)
            .and_then(|e| e.get(key))
            .filter(|v| !v.is_null())
            .or_else(|| config.root.pointer(&format!("/agents/defaults/{key}")));
        raw.and_then(Value::as_f64)
            .filter(|f| f.is_finite() && *f > 0.0)
            .map_or(default, |f| f.floor() as usize)
    };
    (
        pick("bootstrapMaxChars", DEFAULT_BOOTSTRAP_MAX_CHARS),
        pick("bootstrapTotalMaxChars", DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS),
    )
}

/// `resolveUserPath`: `~` against the effective home, then absolute.
fn user_path(input: &str, home: &Path, cwd: &Path) -> PathBuf {
    absolutize(&expand_tilde(js::trim(input), home), cwd)
}

fn trimmed_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
        .map(js::trim)
        .filter(|s| !s.is_empty())
}

/// `resolveAgentWorkspaceDir`: the agent's workspace directory.
pub fn workspace_dir(
    config: &Config,
    agent_id: &str,
    env: &Environment,
    home: &Path,
    state_dir: &Path,
) -> PathBuf {
    let cwd = env.cwd();
    if let Some(w) = trimmed_str(
        config
            .agent_entry(agent_id)
            .and_then(|e| e.get("workspace")),
    ) {
        return user_path(w, home, cwd);
    }
    let fallback = trimmed_str(config.root.pointer("/agents/defaults/workspace"));
    if agent_id == config.default_agent_id() {
        if let Some(f) = fallback {
            return user_path(f, home, cwd);
        }
        if let Some(w) = env.var("OPENCLAW_WORKSPACE_DIR").map(js::trim) {
            if !w.is_empty() {
                return absolutize(Path::new(w), cwd);
            }
        }
        let profile = env.var("OPENCLAW_PROFILE").map(js::trim).unwrap_or("");
        if !profile.is_empty() && profile.to_lowercase() != "default" {
            return home.join(".openclaw").join(format!("workspace-{profile}"));
        }
        return home.join(".openclaw/workspace");
    }
    match fallback {
        Some(f) => user_path(f, home, cwd).join(agent_id),
        None => state_dir.join(format!("workspace-{agent_id}")),
    }
}

/// Reads a small workspace file the config names, when it is a regular file of at most
/// `limit` bytes (`None` otherwise, whatever the reason: the gateway treats them alike).
fn read_small(path: &Path, limit: u64) -> Option<String> {
    let bytes = open_named(path)
        .ok()?
        .read_limited(limit, "workspace file")
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `isWorkspaceSetupCompleted`: the state file (or its legacy place) has a non-blank
/// `setupCompletedAt` (or `onboardingCompletedAt`).
fn setup_completed(workspace: &Path) -> bool {
    let state = |p: PathBuf| -> Option<Value> {
        let v: Value = serde_json::from_str(&read_small(&p, 64 * 1024)?).ok()?;
        v.is_object().then_some(v)
    };
    let Some(v) =
        state(workspace.join(STATE_FILE)).or_else(|| state(workspace.join(LEGACY_STATE_FILE)))
    else {
        return false;
    };
    v.get("setupCompletedAt")
        .and_then(Value::as_str)
        .or_else(|| v.get("onboardingCompletedAt").and_then(Value::as_str))
        .is_some_and(|s| !js::trim(s).is_empty())
}

/// `shouldExcludeHeartbeatBootstrapFile` for a default run: the default agent's
/// HEARTBEAT.md goes when its heartbeat guidance is not in the system prompt (another
/// agent has the heartbeat, `includeSystemPromptSection: false`, or no cadence).
fn exclude_heartbeat(config: &Config, agent_id: &str) -> bool {
    if agent_id != config.default_agent_id() {
        return false;
    }
    let list = config
        .root
        .pointer("/agents/list")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let has = |e: &Value| e.get("heartbeat").is_some_and(crate::js::truthy);
    if list.iter().any(has)
        && !list.iter().any(|e| {
            has(e)
                && e.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| normalize_agent_id(id) == agent_id)
        })
    {
        return true;
    }
    let mut merged = Map::new();
    for part in [
        config.root.pointer("/agents/defaults/heartbeat"),
        config
            .agent_entry(agent_id)
            .and_then(|e| e.get("heartbeat")),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_object)
    {
        merged.extend(part.clone());
    }
    if merged.get("includeSystemPromptSection") == Some(&Value::Bool(false)) {
        return true;
    }
    let every = match merged.get("every") {
        None | Some(Value::Null) => "30m".to_string(),
        Some(Value::String(s)) => js::trim(s).to_string(),
        Some(_) => return true,
    };
    // `parseDurationMs(every) > 0`: a leading number that is zero (or none) disables.
    let number: String = every
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    !number.parse::<f64>().is_ok_and(|n| n > 0.0)
}

/// The injection mode: `agents.list[].contextInjection` when valid, else the defaults'.
fn injects_nothing(config: &Config, agent_id: &str) -> bool {
    let valid = ["always", "continuation-skip", "never"];
    let mode = config
        .agent_entry(agent_id)
        .and_then(|e| e.get("contextInjection"))
        .and_then(Value::as_str)
        .filter(|m| valid.contains(m))
        .or_else(|| {
            config
                .root
                .pointer("/agents/defaults/contextInjection")
                .and_then(Value::as_str)
        });
    mode == Some("never")
}

/// The bootstrap files a turn of `session_key` (of `agent_id`) gets from `workspace`, as
/// injected.
pub fn injected_files(
    config: &Config,
    agent_id: &str,
    session_key: Option<&str>,
    workspace: &Path,
) -> Vec<BootstrapFile> {
    if injects_nothing(config, agent_id) {
        return Vec::new();
    }
    let keep = |name: &str| match session_key {
        Some(k) if is_subagent_key(k) => matches!(name, "AGENTS.md" | "TOOLS.md"),
        Some(k) if is_cron_key(k) => matches!(
            name,
            "AGENTS.md" | "TOOLS.md" | "SOUL.md" | "IDENTITY.md" | "USER.md"
        ),
        _ => true,
    };
    let completed = setup_completed(workspace);
    let no_heartbeat = exclude_heartbeat(config, agent_id);
    let mut files: Vec<(&'static str, PathBuf, Option<String>)> = Vec::new();
    for name in NAMES {
        let path = workspace.join(name);
        let content = read_small(&path, MAX_FILE_BYTES);
        if name == "MEMORY.md" && content.is_none() && path.symlink_metadata().is_err() {
            continue;
        }
        if !keep(name)
            || (name == "BOOTSTRAP.md" && completed)
            || (name == "HEARTBEAT.md" && no_heartbeat)
        {
            continue;
        }
        files.push((name, path, content));
    }
    let (max, total) = limits(config, agent_id);
    build_context(files, max, total)
}

/// `buildBootstrapContextFiles` and `buildBootstrapInjectionStats`.
fn build_context(
    files: Vec<(&'static str, PathBuf, Option<String>)>,
    max: usize,
    total: usize,
) -> Vec<BootstrapFile> {
    let mut remaining = total.max(1) as i64;
    let mut out = Vec::new();
    let mut open = true;
    for (name, path, content) in files {
        let raw_chars = content
            .as_deref()
            .map_or(0, |c| utf16(js::trim_end(c)).len());
        let mut injected = String::new();
        if open && remaining > 0 {
            match &content {
                None => {
                    let marker = format!("[MISSING] Expected at: {}", path.display());
                    let text = clamp_to_budget(&utf16(&marker), remaining);
                    if text.is_empty() {
                        open = false;
                    } else {
                        remaining = (remaining - text.len() as i64).max(0);
                        injected = String::from_utf16_lossy(&text);
                    }
                }
                Some(_) if remaining < MIN_FILE_BUDGET_CHARS => open = false,
                Some(c) => {
                    let file_max = (max as i64).min(remaining).max(1);
                    let trimmed = trim_bootstrap(c, name, file_max);
                    let text = clamp_to_budget(&trimmed, remaining);
                    if !text.is_empty() {
                        remaining = (remaining - text.len() as i64).max(0);
                        injected = String::from_utf16_lossy(&text);
                    }
                }
            }
        }
        let injected_chars = utf16(&injected).len();
        out.push(BootstrapFile {
            name,
            path,
            missing: content.is_none(),
            raw_chars,
            truncated: content.is_some() && injected_chars < raw_chars,
            injected,
            injected_chars,
        });
    }
    out
}

fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn high(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

fn low(u: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&u)
}

/// `truncateUtf16Safe`: the first `n` units, without the first half of a pair at the end.
fn truncate_safe(s: &[u16], n: i64) -> Vec<u16> {
    let n = n.max(0) as usize;
    if s.len() <= n {
        return s.to_vec();
    }
    let mut end = n;
    if end > 0 && high(s[end - 1]) && low(s[end]) {
        end -= 1;
    }
    s[..end].to_vec()
}

/// `clampToBudget`.
fn clamp_to_budget(s: &[u16], budget: i64) -> Vec<u16> {
    if budget <= 0 {
        return Vec::new();
    }
    if s.len() as i64 <= budget {
        return s.to_vec();
    }
    if budget <= 3 {
        return truncate_safe(s, budget);
    }
    let mut t = truncate_safe(s, budget - 1);
    t.push(0x2026);
    t
}

/// `String.prototype.slice(0, n)`.
fn head(s: &[u16], n: i64) -> &[u16] {
    &s[..(n.max(0) as usize).min(s.len())]
}

/// `String.prototype.slice(-n)` for `n > 0`.
fn tail(s: &[u16], n: i64) -> &[u16] {
    &s[s.len().saturating_sub(n.max(0) as usize)..]
}

/// `trimBootstrapContent`: the file without trailing whitespace, cut to `max` units with
/// the gateway's marker (AGENTS.md: head, policy digest and tail).
fn trim_bootstrap(content: &str, name: &str, max: i64) -> Vec<u16> {
    let trimmed = utf16(js::trim_end(content));
    if trimmed.len() as i64 <= max {
        return trimmed;
    }
    if name.eq_ignore_ascii_case("AGENTS.md") {
        return trim_agents(js::trim_end(content), &trimmed, max);
    }
    let len = trimmed.len();
    let full = |h: i64, t: i64| {
        utf16(&format!(
            "\n[...truncated, read {name} for full content...]\n…(truncated {name}: kept {h}+{t} chars of {len})…\n"
        ))
    };
    let compact = |h: i64, t: i64| utf16(&format!("[…truncated {h}+{t}/{len}]"));
    let seps = |h: i64, t: i64, m: &[u16]| -> i64 {
        if m.contains(&10) {
            i64::from(h > 0) + i64::from(t > 0)
        } else {
            0
        }
    };
    let full0 = full(0, 0);
    let use_full = max - full0.len() as i64 - seps(1, 1, &full0) >= MIN_TRIMMED_CONTENT_CHARS;
    let marker_of = |h: i64, t: i64| if use_full { full(h, t) } else { compact(h, t) };
    let (mut h, mut t) = (0i64, 0i64);
    let mut marker = marker_of(h, t);
    for _ in 0..3 {
        let budget = (max - marker.len() as i64 - seps(h, t, &marker)).max(0);
        let nh = (budget as f64 * 0.75).floor() as i64;
        let nt = (budget as f64 * 0.25).floor() as i64;
        let nm = marker_of(nh, nt);
        if nh == h && nt == t && nm.len() == marker.len() {
            break;
        }
        (h, t, marker) = (nh, nt, nm);
    }
    let mut rendered = h + t + marker.len() as i64 + seps(h, t, &marker);
    while rendered > max && (t > 0 || h > 0) {
        let overflow = rendered - max;
        if t > 0 {
            t = (t - overflow).max(0);
        } else {
            h = (h - overflow).max(0);
        }
        marker = marker_of(h, t);
        rendered = h + t + marker.len() as i64 + seps(h, t, &marker);
    }
    if h == 0 && t == 0 && len > 0 {
        let single = marker_of(1, 0);
        if 1 + single.len() as i64 + seps(1, 0, &single) <= max {
            h = 1;
            marker = single;
        }
    }
    let joiner: &[u16] = if marker.contains(&10) { &[10] } else { &[] };
    let parts: Vec<&[u16]> = [
        head(&trimmed, h),
        &marker[..],
        if t > 0 { tail(&trimmed, t) } else { &[] },
    ]
    .into_iter()
    .filter(|p| !p.is_empty())
    .collect();
    let out = parts.join(joiner);
    if out.len() as i64 > max {
        truncate_safe(&out, max)
    } else {
        out
    }
}

fn policy_candidate() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)(?-u:\b)(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|owner|security|secret|credential|test|validation|command|commit|push|github|pr)(?-u:\b)").expect("valid regex")
    })
}

fn policy_list_item() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"^(?:#{1,6}|\s*[-*+]|\s*[0-9]+[.)])\s+\S").expect("valid regex"))
}

fn policy_high_priority() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)(?-u:\b)(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|security|secret|credential)(?-u:\b)").expect("valid regex")
    })
}

/// `normalizePolicyDigestLine`: trimmed, whitespace runs as one space, at most 240 units.
fn digest_line(line: &str) -> Vec<u16> {
    let mut s = String::new();
    let mut space = false;
    for c in js::trim(line).chars() {
        if js::is_whitespace(c) {
            space = true;
        } else {
            if space {
                s.push(' ');
                space = false;
            }
            s.push(c);
        }
    }
    let u = utf16(&s);
    if u.len() <= 240 {
        return u;
    }
    let mut t = truncate_safe(&u, 239);
    t.push(0x2026);
    t
}

/// `buildAgentsPolicyDigest`: the policy lines that fit `budget`, high priority first,
/// in file order; and how many candidates were left out.
fn policy_digest(content: &str, budget: i64) -> (Vec<u16>, usize) {
    if budget <= 0 {
        return (Vec::new(), 0);
    }
    let candidates: Vec<(Vec<u16>, bool)> = content
        .split('\n')
        .map(|l| digest_line(l.strip_suffix('\r').unwrap_or(l)))
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            let text = String::from_utf16_lossy(&l);
            (policy_list_item().is_match(&text) || policy_candidate().is_match(&text))
                .then(|| (l, policy_high_priority().is_match(&text)))
        })
        .collect();
    let mut selected = vec![false; candidates.len()];
    let mut used = 0i64;
    let mut count = 0usize;
    for pass_high in [true, false] {
        for (i, (line, hi)) in candidates.iter().enumerate() {
            if selected[i] || (pass_high && !hi) {
                continue;
            }
            let sep = i64::from(count > 0);
            if used + sep + line.len() as i64 > budget {
                continue;
            }
            selected[i] = true;
            used += sep + line.len() as i64;
            count += 1;
        }
    }
    let lines: Vec<&[u16]> = candidates
        .iter()
        .zip(&selected)
        .filter(|(_, s)| **s)
        .map(|((l, _), _)| l.as_slice())
        .collect();
    (lines.join(&10u16), candidates.len() - lines.len())
}

/// `trimAgentsBootstrapContent`: head, the policy digest, tail.
fn trim_agents(text: &str, trimmed: &[u16], max: i64) -> Vec<u16> {
    let mut h = (max as f64 * 0.45).floor() as i64;
    let mut t = (max as f64 * 0.15).floor() as i64;
    let mut budget = (max as f64 * 0.35).floor() as i64;
    let mut digest = policy_digest(text, budget);
    let len = trimmed.len();
    let render = |h: i64, t: i64, d: &(Vec<u16>, usize)| -> Vec<u16> {
        let parts: Vec<Vec<u16>> = vec![
            head(trimmed, h).to_vec(),
            utf16("[...truncated, read AGENTS.md for full content...]"),
            if d.0.is_empty() {
                Vec::new()
            } else {
                utf16("[Policy digest from AGENTS.md]")
            },
            d.0.clone(),
            if d.1 > 0 {
                utf16(&format!("[...{} more policy lines omitted...]", d.1))
            } else {
                Vec::new()
            },
            utf16(&format!(
                "…(truncated AGENTS.md: kept {h}+policy {}+{t} chars of {len})…",
                d.0.len()
            )),
            if t > 0 {
                tail(trimmed, t).to_vec()
            } else {
                Vec::new()
            },
        ];
        parts
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(&10u16)
    };
    let mut rendered = render(h, t, &digest);
    while rendered.len() as i64 > max && (t > 0 || h > 1 || budget > 0) {
        let overflow = rendered.len() as i64 - max;
        if t > 0 {
            t = (t - overflow).max(0);
        } else if h > 1 {
            h = (h - overflow).max(1);
        } else {
            budget = (budget - overflow).max(0);
            digest = policy_digest(text, budget);
        }
        rendered = render(h, t, &digest);
    }
    if rendered.len() as i64 > max {
        truncate_safe(&rendered, max)
    } else {
        rendered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(v: Value) -> Config {
        Config::from_value("/c/openclaw.json", v).unwrap()
    }

    #[test]
    fn workspace_dirs_as_the_gateway_resolves_them() {
        let home = Path::new("/home/u");
        let state = Path::new("/home/u/.openclaw");
        let env = Environment::from_vars(Vec::<(String, String)>::new(), "/cwd");
        let c = cfg(json!({}));
        assert_eq!(
            workspace_dir(&c, "main", &env, home, state),
            Path::new("/home/u/.openclaw/workspace")
        );
        assert_eq!(
            workspace_dir(&c, "ops", &env, home, state),
            Path::new("/home/u/.openclaw/workspace-ops")
        );
        let env = Environment::from_vars([("OPENCLAW_PROFILE", "work")], "/cwd");
        assert_eq!(
            workspace_dir(&c, "main", &env, home, state),
            Path::new("/home/u/.openclaw/workspace-work")
        );
        let c = cfg(
            json!({"agents": {"defaults": {"workspace": "~/ws"}, "list": [
                {"id": "main"}, {"id": "ops", "workspace": " rel/ops "}
            ]}}),
        );
        assert_eq!(
            workspace_dir(&c, "main", &env, home, state),
            Path::new("/home/u/ws")
        );
        assert_eq!(
            workspace_dir(&c, "ops", &env, home, state),
            Path::new("/cwd/rel/ops")
        );
        assert_eq!(
            workspace_dir(&c, "dev", &env, home, state),
            Path::new("/home/u/ws/dev")
        );
    }

    #[test]
    fn caps_and_markers() {
        let c = cfg(
            json!({"agents": {"defaults": {"bootstrapMaxChars": 500}, "list": [
                {"id": "main", "bootstrapTotalMaxChars": 900.7}
            ]}}),
        );
        assert_eq!(limits(&c, "main"), (500, 900));
        assert_eq!(limits(&c, "ops"), (500, 60_000));
        let cut = trim_bootstrap(&"x".repeat(1000), "SOUL.md", 300);
        assert!(cut.len() <= 300);
        let text = String::from_utf16_lossy(&cut);
        assert!(text.contains("[...truncated, read SOUL.md for full content...]"));
        assert!(text.starts_with("xxx") && text.ends_with("xxx"), "{text}");
        // A tiny budget takes the compact marker.
        let tiny = String::from_utf16_lossy(&trim_bootstrap(&"y".repeat(100), "USER.md", 30));
        assert!(tiny.contains("[…truncated"), "{tiny}");
        let agents = format!(
            "# Rules\n{}\n- never push to main\n{}",
            "filler text\n".repeat(200),
            "end\n".repeat(50)
        );
        let cut =
            String::from_utf16_lossy(&trim_agents(&agents, &utf16(js::trim_end(&agents)), 400));
        assert!(utf16(&cut).len() <= 400);
        assert!(
            cut.contains("[Policy digest from AGENTS.md]\n# Rules\n- never push to main"),
            "{cut}"
        );
        // The total budget: the second file gets what is left, the third nothing.
        let files = vec![
            (
                "AGENTS.md",
                PathBuf::from("/w/AGENTS.md"),
                Some("a".repeat(50)),
            ),
            (
                "SOUL.md",
                PathBuf::from("/w/SOUL.md"),
                Some("s".repeat(200)),
            ),
            ("TOOLS.md", PathBuf::from("/w/TOOLS.md"), None),
        ];
        let out = build_context(files, 100, 130);
        assert_eq!(
            out.iter().map(|f| f.injected_chars).collect::<Vec<_>>(),
            vec![50, 79, 1]
        );
        assert!(out[1].truncated && !out[0].truncated && out[2].missing && !out[2].truncated);
        assert_eq!(
            out[1].injected,
            "sssssssssssssssssssssssssssssssssssssssssss[…truncated 43+14/200]ssssssssssssss"
        );
    }
}
