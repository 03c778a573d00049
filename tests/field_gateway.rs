//! The field suite (issue 23): a real openclaw@2026.7.1 gateway on a private state
//! directory and port, a fake OpenAI-compatible model on 127.0.0.1 (`field_support::model`),
//! real turns through the gateway's `/v1/chat/completions`, and clawstate checked against
//! what the gateway wrote and says: listing, history (vs its own `sessions_history`),
//! context (vs what the model received), cleanup previews, the round trip through
//! clawstate's writes and back into the gateway, and the live-gateway rules.
//!
//! Skipped, with a note, when the peer is unavailable or `CLAWSTATE_SKIP_PEER` is set.
//! Run time: about 40-70 s on 2 cores (each gateway start takes 10-15 s of CPU; at most two
//! gateways run at once). No wall-time assertion anywhere; every wait has a deadline.

mod field_support;
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use field_support::{
    assert_cleanup_preview_matches, assert_context_is_the_model_request, assert_history_matches,
    assert_listing_matches, changed, claw_json, snapshot, Field, Gateway,
};
use serde_json::{json, Value};

const MAIN: &str = "agent:main:main";
const B: &str = "agent:main:field-b";
/// Real turns of every kind on two sessions: plain (plain and streamed), a tool call,
/// NO_REPLY, a failed turn. The gateway records the failed turn's entry as `done`, and
/// about 15 s later rewrites its `status` as `failed` (even after later turns): the end
/// waits for that rewrite, so nothing changes under the checks.
fn drive_turns(gw: &Gateway) {
    assert_eq!(gw.chat(MAIN, "hello there"), "ack: hello there");
    let failed = gw.chat_raw(MAIN, "this one fails [[error]]", false);
    assert!(
        failed.status >= 400,
        "a failed turn: {} {}",
        failed.status,
        failed.body
    );
    assert_eq!(
        gw.chat_streamed(MAIN, "look it up [[tool:get_goal]]"),
        field_support::model::AFTER_TOOL
    );
    gw.chat(MAIN, "stay quiet [[noreply]]");
    assert_eq!(gw.chat(B, "first"), "ack: first");
    gw.chat(B, "second [[tool:get_goal]]");
    gw.wait_for_status(MAIN, "failed");
}

#[test]
fn field_views_match_the_gateway() {
    let Some(mut f) = Field::new() else { return };
    f.gw.start();
    drive_turns(&f.gw);
    assert_listing_matches(&f.gw);
    assert_history_matches(&f.gw, "main");
    assert_history_matches(&f.gw, B);
    assert_context_is_the_model_request(&f.gw, &f.model, B, "third");
    assert_cleanup_preview_matches(&f.gw, &[]);
    assert_cleanup_preview_matches(&f.gw, &["--enforce"]);
}

/// A caller that shares nothing with the gateway's environment: `env -i` with only its own
/// HOME and PATH (and TZ), its own or no TMPDIR, no OPENCLAW_* variable; the state dir is
/// given with `--state-dir`.
fn foreign(bin: &str, home: &Path, tmpdir: bool) -> assert_cmd::Command {
    let mut c = support::claw(bin, home);
    if !tmpdir {
        c.env_remove("TMPDIR");
    }
    c
}

/// Every command that writes a store or a transcript (the state DB writers are not refused:
/// see the README's Safety section).
const WRITES: &[&[&str]] = &[
    &["claw-sessions", "patch", MAIN, "--set", "label=cron"],
    &["claw-sessions", "reset", MAIN],
    &["claw-sessions", "delete", B],
    &["claw-sessions", "cleanup", "--enforce"],
    &[
        "claw-transcript",
        "append",
        MAIN,
        "--role",
        "user",
        "--text",
        "from cron",
    ],
    &["claw-transcript", "repair", MAIN],
    &["claw-transcript", "migrate", MAIN],
    &["claw-compact", "run", B],
    &["claw-compact", "truncate", B, "--max-lines", "2"],
    &["claw-compact", "auto", "--all"],
];

/// Item 3: the live gateway is found by what it holds, whatever the caller's environment:
/// every write exits 75 naming the gateway and changes nothing.
#[test]
fn field_live_gateway_refuses_writes_from_any_environment() {
    let Some(mut f) = Field::new() else { return };
    f.gw.start();
    drive_turns(&f.gw);
    f.gw.settle();
    let pid = f.gw.pid();
    let caller = tempfile::tempdir().unwrap();
    let agents = f.gw.state.join("agents");
    let before = snapshot(&agents);
    for tmpdir in [true, false] {
        for w in WRITES {
            let o = foreign(w[0], caller.path(), tmpdir)
                .args(&w[1..])
                .arg("--state-dir")
                .arg(&f.gw.state)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(
                o.status.code(),
                Some(75),
                "{w:?} (TMPDIR set: {tmpdir}) with the gateway live: {err}"
            );
            assert!(
                err.contains("gateway") && err.contains(&format!("pid {pid}")),
                "{w:?}: the refusal names the gateway (pid {pid}): {err}"
            );
        }
    }
    assert_eq!(
        changed(&before, &snapshot(&agents)),
        Vec::<String>::new(),
        "changed while refused"
    );
}
