//! `--offline` / `--via-gateway` in `claw-signals` and `claw-watch`: their writes follow the
//! live-gateway rule of the other binaries' writes that the gateway has no method for
//! (lib/src/ops/delegation.rs). While a gateway owns the state dir a write exits 75 and changes
//! nothing unless `--offline` (then with a warning); `--via-gateway` always exits 75; reads
//! and dry runs go on; a `--db` other than the state dir's is no gateway's.

mod signals_support;

use std::path::PathBuf;

use serde_json::json;
use signals_support::{dump_tables, ok, Sandbox};

const T0: i64 = 1_795_989_048_800;
const MAIN: &str = "agent:main:main";
const C1: &str = "agent:main:subagent:c1";

/// A gateway lock naming this (live) test process, for the sandbox's config path.
fn live_gateway_lock(sb: &Sandbox) -> PathBuf {
    use sha2::Digest;
    let config = sb.state_dir.join("openclaw.json");
    let hash = sha2::Sha256::digest(config.to_string_lossy().as_bytes());
    let hex: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    // SAFETY: getuid takes no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = sb.home.join("tmp").join(format!("openclaw-{uid}"));
    std::fs::create_dir_all(&dir).expect("dir");
    let lock = dir.join(format!("gateway.{hex}.lock"));
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let after = &stat[stat.rfind(')').expect(")") + 2..];
    let start: u64 = after
        .split(' ')
        .nth(19)
        .expect("field")
        .parse()
        .expect("num");
    std::fs::write(
        &lock,
        json!({"pid": std::process::id(), "createdAt": "2026-01-01T00:00:00.000Z",
            "configPath": config, "startTime": start})
        .to_string(),
    )
    .expect("lock");
    lock
}

fn seeded(root: &std::path::Path) -> Sandbox {
    let sb = Sandbox::new(root);
    ok(sb.signals(
        T0,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "child_spawned",
            "--actor-id",
            MAIN,
            "--run-id",
            "run-1",
        ],
    ));
    ok(sb.signals(
        T0,
        &[
            "record",
            "--session",
            C1,
            "--kind",
            "human_direct_message",
            "--via",
            "x",
        ],
    ));
    sb
}

#[test]
fn writes_refuse_while_a_gateway_owns_the_state_dir_unless_offline() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = seeded(root.path());
    live_gateway_lock(&sb);
    let before = dump_tables(&sb.db());
    let writes: Vec<(&str, Vec<&str>)> = vec![
        (
            "claw-signals",
            vec!["record", "--session", C1, "--kind", "compacted"],
        ),
        ("claw-signals", vec!["prune"]),
        ("claw-signals", vec!["forget", C1]),
        ("claw-watch", vec!["add", "agent:ops:main", C1]),
        ("claw-watch", vec!["drain", MAIN]),
        ("claw-watch", vec!["reset", MAIN]),
        ("claw-watch", vec!["sweep", "--all-watchers"]),
        ("claw-watch", vec!["follow", "--drain", "--for", "1s"]),
    ];
    let run = |bin: &str, pre: &[&str], args: &[&str]| {
        let mut all: Vec<&str> = pre.to_vec();
        all.extend_from_slice(args);
        if bin == "claw-signals" {
            sb.signals(T0 + 1000, &all)
        } else {
            sb.watch(T0 + 1000, &all)
        }
    };
    for (bin, args) in &writes {
        let o = run(bin, &[], args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(75), "{bin} {args:?}: {err}");
        assert!(
            err.contains("gateway") && err.contains("--offline"),
            "{err}"
        );
        let o = run(bin, &["--via-gateway"], args);
        assert_eq!(o.status.code(), Some(75), "{bin} --via-gateway {args:?}");
    }
    assert_eq!(dump_tables(&sb.db()), before, "nothing written");
    // Reads and dry runs go on.
    for (bin, args) in [
        ("claw-signals", vec!["list", "--ndjson"]),
        ("claw-signals", vec!["changes-since", C1, "0"]),
        ("claw-signals", vec!["forget", C1, "--dry-run"]),
        ("claw-watch", vec!["pending"]),
        ("claw-watch", vec!["sweep", "--all-watchers", "--dry-run"]),
    ] {
        let o = run(bin, &[], &args);
        assert!(
            o.status.success(),
            "{bin} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // --offline writes, and says what it risks.
    let o = run("claw-watch", &["--offline"], &["drain", MAIN]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning") && err.contains("notice queue"),
        "{err}"
    );
    assert_ne!(dump_tables(&sb.db())["cursors"], before["cursors"]);
    // Another database is no gateway's.
    let other = root.path().join("other.sqlite");
    let o = sb
        .cmd("claw-signals")
        .args([
            "--db",
            other.to_str().expect("utf8"),
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
        ])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn via_gateway_refuses_even_without_a_gateway() {
    let root = tempfile::tempdir().expect("tempdir");
    let sb = seeded(root.path());
    let before = dump_tables(&sb.db());
    let o = sb.signals(
        T0 + 1000,
        &[
            "--via-gateway",
            "record",
            "--session",
            C1,
            "--kind",
            "compacted",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(75),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(dump_tables(&sb.db()), before);
    // Without a gateway and without the flag, writes go on as before.
    ok(sb.signals(
        T0 + 1000,
        &["record", "--session", C1, "--kind", "compacted"],
    ));
}
