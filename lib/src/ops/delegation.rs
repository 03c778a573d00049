//! Writes to a state dir a live gateway owns go through that gateway's RPC (issue 27), so
//! they join its own write queue: `cleanup` → `sessions.cleanup`, `patch` →
//! `sessions.patch`, `reset` → `sessions.reset`, `delete` → `sessions.delete`,
//! `claw-compact truncate` → `sessions.compact {maxLines}`; `list --live` asks
//! `sessions.list`.
//!
//! The route ([`GatewayRoute`], from `--offline` / `--via-gateway`):
//!
//! | route        | no live gateway            | live gateway                       |
//! |--------------|----------------------------|------------------------------------|
//! | auto         | offline                    | through the gateway                |
//! | `--offline`  | offline                    | offline, with a warning            |
//! | `--via-gateway` | through the gateway (75 if unreachable) | through the gateway |
//!
//! (`--store` is the old spelling of "offline, with a warning" and still means it.) Dry
//! runs are reads and stay offline. Once the route is the gateway there is no way back:
//! refused credentials exit 77, an unreachable or vanished gateway 75, and nothing is ever
//! written locally instead (the peer's CLI falls back to writing the live store itself
//! when its connect fails, whatever the reason). Where the gateway has no method with
//! clawstate's semantics (`claw-compact run` and `auto` summarize with their own summary
//! source; a patch that merges into nested objects; `relocate`; transcript writes) the
//! command keeps refusing with 75 and says why.
//!
//! Keys are resolved offline first (a read), exactly as the offline command resolves
//! them, so a sessionId or an alias names the same entry and an unknown key exits 3
//! before anything is sent.

use std::time::Duration;

use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::gateway_rpc::{
    self, ConnectOptions, DeviceIdentity, Direction, GatewayAddress, GatewayClient, GatewayRpcError,
};
use crate::install::context::{GatewayRoute, StateContext};
use crate::install::live_gateway::GatewayOwner;
use crate::ops::session_ops::OpsError;
use crate::report::terminal_text::escape_line;
use crate::store::entry_lookup;

/// Why a delegated command did not succeed.
#[derive(Debug, Error)]
pub enum DelegationError {
    /// The gateway call failed.
    #[error(transparent)]
    Rpc(#[from] GatewayRpcError),
    /// Resolving the key offline failed.
    #[error(transparent)]
    Ops(#[from] OpsError),
    /// The command has no counterpart with the same semantics on the gateway.
    #[error("{what} cannot go through the gateway: {why}; {owner}stop it first, or pass --offline to write anyway (the gateway may overwrite the change)")]
    NotDelegable {
        /// The command.
        what: String,
        /// Why not.
        why: String,
        /// `the gateway (pid …) owns <dir>; ` when one was detected.
        owner: String,
    },
    /// The gateway reached serves another state dir (its `hello-ok` says which): nothing
    /// was sent to it.
    #[error("the gateway at {url} serves {theirs}, not {ours}; nothing was changed (set OPENCLAW_GATEWAY_URL or gateway.port to the gateway of this state dir)")]
    OtherStateDir {
        /// The gateway's URL.
        url: String,
        /// The state dir it serves.
        theirs: String,
        /// This command's.
        ours: String,
    },
    /// The gateway answered, but not with what the command expects.
    #[error("{method}: {what}")]
    Unexpected {
        /// The method.
        method: String,
        /// What is wrong with the answer.
        what: String,
    },
}

impl ExitCode for DelegationError {
    fn exit_code(&self) -> i32 {
        match self {
            DelegationError::Rpc(e) => e.exit_code(),
            DelegationError::Ops(e) => e.exit_code(),
            DelegationError::NotDelegable { .. } | DelegationError::OtherStateDir { .. } => {
                exit::TEMP_FAIL
            }
            DelegationError::Unexpected { .. } => exit::FAILURE,
        }
    }
}

/// A gateway that writes of this state dir go to.
#[derive(Debug)]
pub struct Delegate {
    address: GatewayAddress,
    owner: Option<GatewayOwner>,
    device: Option<DeviceIdentity>,
    config_path: std::path::PathBuf,
    state_dir: std::path::PathBuf,
    trace: bool,
}

/// How long a delegated call may take (`CLAWSTATE_GATEWAY_TIMEOUT` seconds, default 120).
fn call_limit(ctx: &StateContext) -> Duration {
    ctx.env
        .meaningful_var("CLAWSTATE_GATEWAY_TIMEOUT")
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(gateway_rpc::REQUEST_TIMEOUT, Duration::from_secs)
}

/// The gateway a write (not a dry run) goes to, or `None` for the offline path (see the
/// module doc).
pub fn route(ctx: &StateContext, dry_run: bool) -> Option<Delegate> {
    if dry_run {
        return None;
    }
    let owner = match ctx.options.route {
        GatewayRoute::Offline => return None,
        GatewayRoute::Auto if ctx.explicit_store() => return None,
        GatewayRoute::Auto => Some(ctx.live_gateway()?),
        GatewayRoute::Required => ctx.live_gateway(),
    };
    Some(Delegate::new(ctx, owner))
}

/// The refusal of a command the gateway cannot do, when a gateway owns the state dir or
/// `--via-gateway` asks for one; `Ok(())` when the offline path may go on.
pub fn refuse_unless_offline(
    ctx: &StateContext,
    dry_run: bool,
    what: &str,
    why: &str,
) -> Result<(), DelegationError> {
    match route(ctx, dry_run) {
        None => Ok(()),
        Some(d) => Err(d.not_delegable(what, why)),
    }
}

impl Delegate {
    fn new(ctx: &StateContext, owner: Option<GatewayOwner>) -> Delegate {
        let port = owner.as_ref().and_then(|o| o.port);
        Delegate {
            address: GatewayAddress::resolve(&ctx.config.root, &ctx.env, port),
            owner,
            device: DeviceIdentity::load(&gateway_rpc::device::identity_path(
                &ctx.layout.state_dir,
            )),
            config_path: ctx.config.path.clone(),
            state_dir: ctx.layout.state_dir.clone(),
            trace: ctx.env.meaningful_var("CLAWSTATE_GATEWAY_TRACE").is_some(),
        }
    }

    /// The refusal of `what`, which has no counterpart on the gateway.
    pub fn not_delegable(&self, what: &str, why: &str) -> DelegationError {
        DelegationError::NotDelegable {
            what: what.into(),
            why: why.into(),
            owner: self
                .owner
                .as_ref()
                .map(|o| format!("the OpenClaw gateway is running ({o}); "))
                .unwrap_or_default(),
        }
    }

    /// The gateway's URL.
    pub fn url(&self) -> &str {
        &self.address.url
    }

    /// One call on a fresh connection with the least scopes `method` needs.
    pub fn call(
        &self,
        ctx: &StateContext,
        method: &str,
        params: &Value,
    ) -> Result<Value, DelegationError> {
        self.calls(ctx, method, std::slice::from_ref(params))
            .map(|mut v| v.remove(0))
    }

    /// Several calls of `method` on one connection, in order; stops at the first failure.
    pub fn calls(
        &self,
        ctx: &StateContext,
        method: &str,
        params: &[Value],
    ) -> Result<Vec<Value>, DelegationError> {
        let scopes = params
            .iter()
            .map(|p| gateway_rpc::least_scopes(method, p))
            .max_by_key(|s| rank(s))
            .unwrap_or(&["operator.admin"]);
        let mut client = GatewayClient::connect(&ConnectOptions {
            address: &self.address,
            scopes,
            device: self.device.as_ref(),
            config_path: &self.config_path,
        })?;
        // A loopback gateway names the state dir it serves: one that serves another (a
        // second gateway on the configured port) never gets this state dir's writes.
        if let Some(theirs) = client.state_dir().filter(|_| self.address.is_loopback()) {
            let canonical =
                |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if canonical(std::path::Path::new(theirs)) != canonical(&self.state_dir) {
                let e = DelegationError::OtherStateDir {
                    url: self.address.url.clone(),
                    theirs: theirs.to_string(),
                    ours: self.state_dir.display().to_string(),
                };
                self.print_trace(&client);
                client.close();
                return Err(e);
            }
        }
        let limit = call_limit(ctx);
        let mut out = Vec::with_capacity(params.len());
        let mut result = Ok(());
        for p in params {
            match client.call(method, p, limit) {
                Ok(v) => out.push(v),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.print_trace(&client);
        client.close();
        result?;
        Ok(out)
    }

    fn print_trace(&self, client: &GatewayClient) {
        if !self.trace {
            return;
        }
        for (dir, text) in client.trace() {
            let arrow = match dir {
                Direction::Sent => ">>",
                Direction::Received => "<<",
            };
            eprintln!("gateway {arrow} {}", escape_line(text));
        }
    }
}

/// Scopes ordered by power, so several calls ask for the most any of them needs.
fn rank(scopes: &[&str]) -> u8 {
    if scopes.contains(&"operator.admin") {
        2
    } else if scopes.contains(&"operator.write") {
        1
    } else {
        0
    }
}

/// Adds `"via": "gateway"` to an answer (an object; anything else is wrapped).
fn via_gateway(v: Value) -> Value {
    match v {
        Value::Object(mut m) => {
            m.insert("via".into(), json!("gateway"));
            Value::Object(m)
        }
        other => json!({"result": other, "via": "gateway"}),
    }
}

/// The options of a delegated cleanup (`sessions.cleanup` takes the CLI's names).
#[derive(Debug, Clone, Default)]
pub struct CleanupRequest {
    /// `--enforce`.
    pub enforce: bool,
    /// `--fix-missing`.
    pub fix_missing: bool,
    /// `--fix-dm-scope`.
    pub fix_dm_scope: bool,
    /// `--active-key`.
    pub active_key: Option<String>,
}

/// `sessions.cleanup` with the command's options: the gateway's summary (the shape of
/// `cleanup --json` offline) with `"via": "gateway"`.
pub fn cleanup(
    d: &Delegate,
    ctx: &StateContext,
    r: &CleanupRequest,
) -> Result<Value, DelegationError> {
    let mut p = Map::new();
    if let Some(a) = &ctx.options.targets.agent {
        p.insert("agent".into(), json!(a));
    }
    if ctx.options.targets.all_agents {
        p.insert("allAgents".into(), json!(true));
    }
    p.insert("enforce".into(), json!(r.enforce));
    if let Some(k) = &r.active_key {
        p.insert("activeKey".into(), json!(k));
    }
    p.insert("fixMissing".into(), json!(r.fix_missing));
    p.insert("fixDmScope".into(), json!(r.fix_dm_scope));
    Ok(via_gateway(d.call(
        ctx,
        "sessions.cleanup",
        &Value::Object(p),
    )?))
}

/// The text of a delegated cleanup: what the offline run prints (silent when nothing
/// changed, for cron).
pub fn cleanup_text(v: &Value) -> String {
    let stores: Vec<&Value> = match v.get("stores").and_then(Value::as_array) {
        Some(a) => a.iter().collect(),
        None => vec![v],
    };
    let several = stores.len() > 1;
    let mut out = Vec::new();
    for s in stores {
        if s.get("wouldMutate") != Some(&json!(true)) {
            continue;
        }
        let text = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let mut t = String::new();
        if several {
            t.push_str(&format!("Agent: {}\n", text("agentId")));
        }
        t.push_str(&format!("Session store: {}\n", text("storePath")));
        t.push_str(&format!(
            "Applied maintenance. Current entries: {} (through the gateway)\n",
            s.get("appliedCount").and_then(Value::as_u64).unwrap_or(0)
        ));
        let removed = s
            .pointer("/unreferencedArtifacts/removedFiles")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if removed > 0 {
            t.push_str(&format!("Pruned unreferenced artifacts: {removed}\n"));
        }
        out.push(t);
    }
    out.join("\n")
}

/// The entry a request names, resolved offline: (store key, agent id, store path, entry).
fn resolve_key(
    ctx: &StateContext,
    request: &str,
) -> Result<(String, String, String, Map<String, Value>), DelegationError> {
    let shown = entry_lookup::show(ctx, request).map_err(OpsError::from)?;
    Ok((
        shown.matched.store_key,
        shown.target.agent_id,
        shown.target.store_path.to_string_lossy().into_owned(),
        shown.entry,
    ))
}

/// `sessions.patch` of the fields in `patch` (top-level fields only: the gateway sets a
/// field or, with `null`, clears it; it does not merge into objects): the offline JSON
/// shape (`key`, `storePath`, `dryRun`, `written`, `entry`) with `"via": "gateway"`.
pub fn patch(
    d: &Delegate,
    ctx: &StateContext,
    request: &str,
    patch: &Value,
) -> Result<Value, DelegationError> {
    let fields = patch.as_object().cloned().unwrap_or_default();
    if let Some((k, _)) = fields.iter().find(|(_, v)| v.is_object()) {
        return Err(d.not_delegable(
            "this patch",
            &format!("it merges into the object {k:?}, and the gateway's sessions.patch only sets or clears top-level fields"),
        ));
    }
    let (key, agent, store_path, before) = resolve_key(ctx, request)?;
    let mut params = fields.clone();
    params.insert("key".into(), json!(key));
    params.insert("agentId".into(), json!(agent));
    let v = d.call(ctx, "sessions.patch", &Value::Object(params))?;
    let entry = v.get("entry").cloned().unwrap_or(Value::Null);
    let written = entry.as_object() != Some(&before);
    Ok(via_gateway(json!({
        "key": key,
        "storePath": v.get("path").and_then(Value::as_str).unwrap_or(&store_path),
        "dryRun": false,
        "written": written,
        "entry": entry,
    })))
}

/// `sessions.reset` (reason `reset`): the offline JSON shape with `"via": "gateway"`
/// (the gateway does not say which files it archived: `archived` is what it renamed,
/// found by the old transcript's `.reset.` name, `headerWritten` is null).
pub fn reset(d: &Delegate, ctx: &StateContext, request: &str) -> Result<Value, DelegationError> {
    let (key, agent, store_path, before) = resolve_key(ctx, request)?;
    let v = d.call(
        ctx,
        "sessions.reset",
        &json!({"key": key, "agentId": agent, "reason": "reset"}),
    )?;
    let entry = v.get("entry").cloned().unwrap_or(Value::Null);
    if !entry.is_object() {
        return Err(DelegationError::Unexpected {
            method: "sessions.reset".into(),
            what: "the answer has no entry".into(),
        });
    }
    Ok(via_gateway(json!({
        "key": key,
        "storePath": store_path,
        "dryRun": false,
        "previousSessionId": before.get("sessionId"),
        "sessionId": entry.get("sessionId"),
        "sessionFile": entry.get("sessionFile"),
        "headerWritten": null,
        "archived": [],
        "signalCursorsReset": null,
        "entry": entry,
    })))
}

/// `sessions.delete` of each request (transcripts archived, as offline), on one
/// connection: the offline JSON shape (`storePath`, `dryRun`, `deleted: [{key,
/// sessionId, archived, …}]`) with `"via": "gateway"`. Every key is resolved before the
/// first is sent, so an unknown one deletes nothing.
pub fn delete(
    d: &Delegate,
    ctx: &StateContext,
    requests: &[String],
) -> Result<Value, DelegationError> {
    let mut resolved = Vec::new();
    for r in requests {
        let (key, agent, store_path, entry) = resolve_key(ctx, r)?;
        if !resolved
            .iter()
            .any(|(k, ..): &(String, String, String, Map<String, Value>)| *k == key)
        {
            resolved.push((key, agent, store_path, entry));
        }
    }
    let params: Vec<Value> = resolved
        .iter()
        .map(|(key, agent, ..)| json!({"key": key, "agentId": agent, "deleteTranscript": true}))
        .collect();
    let answers = d.calls(ctx, "sessions.delete", &params)?;
    let rows: Vec<Value> = resolved
        .iter()
        .zip(&answers)
        .map(|((key, _, _, entry), a)| {
            let archived: Vec<Value> = a
                .get("archived")
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .map(|to| json!({"from": Value::Null, "to": to}))
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "key": key,
                "sessionId": entry.get("sessionId"),
                "deleted": a.get("deleted"),
                "transcriptShared": null,
                "archived": archived,
                "removedFiles": [],
                "signalsForgotten": null,
            })
        })
        .collect();
    let store_path = resolved.first().map(|r| r.2.clone()).unwrap_or_default();
    Ok(via_gateway(json!({
        "storePath": store_path,
        "dryRun": false,
        "deleted": rows,
    })))
}

/// `sessions.compact {maxLines}` (what `claw-compact truncate --max-lines` does
/// offline): the gateway's answer with `"via": "gateway"`.
pub fn truncate(
    d: &Delegate,
    ctx: &StateContext,
    request: &str,
    max_lines: u64,
) -> Result<Value, DelegationError> {
    if request.contains('/') || request.ends_with(".jsonl") {
        return Err(d.not_delegable(
            "truncating a transcript by path",
            "the gateway compacts sessions by key, and a path names no key",
        ));
    }
    let (key, agent, ..) = resolve_key(ctx, request)?;
    let v = d.call(
        ctx,
        "sessions.compact",
        &json!({"key": key, "agentId": agent, "maxLines": max_lines}),
    )?;
    Ok(via_gateway(v))
}

/// `sessions.list` (the gateway's in-memory view): its answer with `"via": "gateway"`.
pub fn list(
    d: &Delegate,
    ctx: &StateContext,
    limit: Option<u64>,
    active_minutes: Option<u64>,
) -> Result<Value, DelegationError> {
    let mut p = Map::new();
    if let Some(l) = limit {
        p.insert("limit".into(), json!(l));
    }
    if let Some(a) = active_minutes {
        p.insert("activeMinutes".into(), json!(a));
    }
    if let Some(a) = &ctx.options.targets.agent {
        p.insert("agentId".into(), json!(a));
    }
    Ok(via_gateway(d.call(
        ctx,
        "sessions.list",
        &Value::Object(p),
    )?))
}

/// The gateway `list --live` asks: the live one, or the configured address.
pub fn live_reader(ctx: &StateContext) -> Delegate {
    Delegate::new(ctx, ctx.live_gateway())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn via_is_added_to_the_answer() {
        assert_eq!(
            via_gateway(json!({"a": 1})),
            json!({"a": 1, "via": "gateway"})
        );
    }

    #[test]
    fn cleanup_text_is_silent_when_nothing_changed() {
        let unchanged = json!({"storePath": "/s", "wouldMutate": false, "appliedCount": 2});
        assert_eq!(cleanup_text(&unchanged), "");
        let changed = json!({"storePath": "/s", "wouldMutate": true, "appliedCount": 2,
            "unreferencedArtifacts": {"removedFiles": 1}});
        assert_eq!(
            cleanup_text(&changed),
            "Session store: /s\nApplied maintenance. Current entries: 2 (through the gateway)\nPruned unreferenced artifacts: 1\n"
        );
    }

    #[test]
    fn several_calls_ask_for_the_most_powerful_scope_any_needs() {
        assert!(rank(&["operator.admin"]) > rank(&["operator.write"]));
        assert!(rank(&["operator.write"]) > rank(&["operator.read"]));
    }
}
