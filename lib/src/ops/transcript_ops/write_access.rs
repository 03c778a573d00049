//! Whether a transcript may be written here and now: a `SESSION` resolved for writing (a
//! transcript outside the state dir, or one kept in the agent database, is refused) and
//! the live-gateway rule (a dry run is always allowed; `--via-gateway` is refused, the
//! gateway's RPC has no transcript writes; a live gateway refuses unless writing offline
//! was asked for, which only warns).

use crate::install::context::GatewayRoute;
use crate::install::context::StateContext;
use crate::ops::delegation;
use crate::transcript::session::{self, SessionRef};
use crate::transcript::write_lock::WriteLockSettings;

use super::TranscriptOpError;

/// The session `arg` resolved for writing, after the live-gateway rule; `warn` receives
/// the warning of an offline write while a gateway runs.
pub fn writable_session(
    ctx: &StateContext,
    arg: &str,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<SessionRef, TranscriptOpError> {
    let s = session::resolve(ctx, arg).and_then(SessionRef::for_writing)?;
    live_gateway_rule(ctx, dry_run, warn)?;
    Ok(s)
}

/// The live-gateway rule of a transcript write (see the module doc).
pub fn live_gateway_rule(
    ctx: &StateContext,
    dry_run: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<(), TranscriptOpError> {
    if dry_run {
        return Ok(());
    }
    // `--via-gateway` asks that the write go through the gateway or not at all, and its RPC
    // has no transcript writes: refuse (75), whether or not a gateway was detected.
    if ctx.options.route == GatewayRoute::Required {
        delegation::refuse_unless_offline(
            ctx,
            dry_run,
            "a transcript write",
            "the gateway's RPC has no method that writes a transcript; run it offline (--offline) with the gateway stopped",
        )?;
        return Ok(());
    }
    if let Some(w) = ctx
        .check_live_gateway()
        .map_err(crate::ops::session_ops::OpsError::from)?
    {
        warn(&w);
    }
    Ok(())
}

/// The write-lock settings of this installation (config and environment).
pub fn lock_settings(ctx: &StateContext) -> WriteLockSettings {
    WriteLockSettings::resolve(&ctx.config.root, |k| ctx.env.var(k).map(String::from))
}
