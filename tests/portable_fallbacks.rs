//! The portable implementations of the Linux-specific pieces (lib/src/fs/platform.rs), run on
//! Linux with `CLAWSTATE_PORTABLE=1`: what a macOS or BSD build does. Each test runs the
//! same command both ways and expects the same result; the follower test also checks that
//! the switch took effect (no inotify descriptor open), so it cannot pass vacuously.

mod signals_support;
mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use signals_support::{ok, Sandbox};

const T: i64 = 1_795_989_048_800;
const C1: &str = "agent:main:subagent:c1";
const MAIN: &str = "agent:main:main";
const PORTABLE: &str = "CLAWSTATE_PORTABLE";

fn record(sb: &Sandbox, t: i64, args: &[&str]) {
    let mut all = vec!["record", "--session", C1];
    all.extend_from_slice(args);
    ok(sb.signals(t, &all));
}

/// Whether process `pid` has an inotify descriptor open.
fn has_inotify(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|t| t.to_string_lossy().contains("inotify"))
}

/// `claw-watch follow` picks up events recorded by other processes, by inotify or (with
/// the switch) by polling `data_version`; only the inotify follower holds a watch.
#[test]
fn follow_streams_notices_with_and_without_inotify() {
    for portable in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(dir.path());
        record(
            &sb,
            T,
            &[
                "--kind",
                "child_spawned",
                "--actor-id",
                MAIN,
                "--run-id",
                "run-1",
            ],
        );
        let human = ["--kind", "human_direct_message", "--via", "telegram"];
        record(&sb, T + 1, &human);
        let mut cmd = sb.cmd("claw-watch");
        if portable {
            cmd.env(PORTABLE, "1");
        }
        let mut child = cmd
            .args(["follow", MAIN, "--drain", "--for", "120s"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // The pending notice is printed at start: the follower is set up by then.
        assert!(lines.next().unwrap().unwrap().contains("changesSince 1."));
        assert_eq!(has_inotify(child.id()), !portable, "portable: {portable}");
        for i in 0..3 {
            record(&sb, T + 10 + i, &human);
            let line = lines.next().unwrap().unwrap();
            assert!(
                line.contains(&format!("changesSince {}.", 2 + i)),
                "portable {portable}: {line}"
            );
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A store of 30,000 entries (over the 8 MiB from which stores are mapped and written
/// around the page cache).
fn write_large_store(dir: &Path) -> std::path::PathBuf {
    let sessions = dir.join("agents/main/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut rng = support::Rng::new(28);
    let mut text = String::from("{\n");
    for i in 0..30_000 {
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(&format!(
            "  \"agent:main:cron:job-{i}\": {{\"sessionId\": \"{}\", \"updatedAt\": {}, \"label\": \"{}\", \"systemPromptReport\": {{\"chars\": {}}}}}",
            rng.uuid(),
            1_790_000_000_000i64 + i as i64 * 1000,
            "x".repeat(200),
            rng.below(100_000)
        ));
    }
    text.push_str("\n}\n");
    assert!(text.len() > 8 << 20);
    let store = sessions.join("sessions.json");
    std::fs::write(&store, text).unwrap();
    store
}

/// Reading (mapped without `MAP_POPULATE`), writing (without `O_DIRECT`) and cleanup's
/// directory pass (without per-thread priority) give what the Linux pieces give.
/// (Which implementation ran is not visible from outside; the unit tests next to each
/// piece call the fallbacks directly.)
#[test]
fn large_store_reads_writes_and_cleanup_agree_with_the_linux_pieces() {
    let mut results = Vec::new();
    for portable in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let state = home.path().join(".openclaw");
        let store = write_large_store(&state);
        let run = |args: &[&str]| {
            let mut c = support::claw("claw-sessions", home.path());
            c.arg("--state-dir")
                .arg(&state)
                .arg("--now")
                .arg("2026-12-01T00:00:00Z");
            if portable {
                c.env(PORTABLE, "1");
            }
            let out = c.args(args).output().unwrap();
            assert!(
                out.status.success(),
                "{args:?} (portable {portable}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // The two runs differ only in their temp dir.
            String::from_utf8(out.stdout)
                .unwrap()
                .replace(&state.display().to_string(), "STATE")
        };
        // The store is read mapped, by patch (then written whole) and by cleanup.
        let patched = run(&[
            "patch",
            "agent:main:cron:job-7",
            "--set",
            "label=\"patched\"",
        ]);
        let written = std::fs::read(&store).unwrap();
        let planned = run(&["cleanup", "--dry-run", "--json"]);
        results.push((patched, written, planned));
    }
    let (linux, portable) = (&results[0], &results[1]);
    assert!(linux.0 == portable.0, "patch output differs");
    assert!(String::from_utf8_lossy(&linux.1).contains("\"patched\""));
    assert!(linux.1 == portable.1, "the written store differs");
    assert!(
        linux.2 == portable.2,
        "cleanup plan differs:\n{}\n{}",
        linux.2,
        portable.2
    );
}
