//! `claw-compact --summarizer CMD` under hostile or broken commands: a summarizer that
//! never finishes is killed (its whole process group) after `--summarizer-timeout`, one
//! that prints more than the documented cap is cut off, one that floods stderr neither
//! deadlocks nor grows memory, and in every failing case nothing is written.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::claw;

const SID: &str = "11111111-2222-4333-8444-555555555555";

/// A state dir with one session that has enough conversation to compact.
fn setup(tmp: &Path) -> (PathBuf, PathBuf) {
    let dir = tmp.join("state/agents/main/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rows = vec![
        json!({"type":"session","version":3,"id":SID,"timestamp":"2026-11-29T21:00:00.000Z","cwd":"/home/alice"}),
    ];
    let mut parent = Value::Null;
    let mut add = |id: &str, msg: Value| {
        rows.push(json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-11-29T21:00:01.000Z","message":msg}));
        parent = json!(id);
    };
    add(
        "u1",
        json!({"role":"user","content":"Deploy build 4f3a88af7304 to devbox:8080","timestamp":1}),
    );
    add(
        "a1",
        json!({"role":"assistant","content":[{"type":"text","text":"Deployed."}],"stopReason":"stop","usage":{"totalTokens":1200},"timestamp":2}),
    );
    add(
        "u2",
        json!({"role":"user","content":format!("Now check the CI job {}", "please ".repeat(300)),"timestamp":3}),
    );
    add(
        "a2",
        json!({"role":"assistant","content":[{"type":"text","text":"Checked."}],"stopReason":"stop","usage":{"totalTokens":5000},"timestamp":4}),
    );
    let file = dir.join(format!("{SID}.jsonl"));
    std::fs::write(
        &file,
        rows.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sessions.json"),
        serde_json::to_string_pretty(&json!({"agent:main:main": {"sessionId": SID, "updatedAt": 1, "sessionFile": format!("{SID}.jsonl"), "totalTokens": 5000}})).unwrap(),
    )
    .unwrap();
    (tmp.join("state"), file)
}

fn cmd(tmp: &Path, state: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut c = claw("claw-compact", &tmp.join("home"));
    c.arg("--state-dir").arg(state).args(args);
    c
}

/// Every file under the sessions directory with its bytes.
fn snapshot(state: &Path) -> Vec<(String, Vec<u8>)> {
    let dir = state.join("agents/main/sessions");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Whether `pid` is gone (or a zombie waiting for a reaper that is not ours).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(_) => true,
        Ok(s) => s
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|st| st.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_summarizer_that_never_finishes_is_killed_with_its_group_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, _) = setup(tmp.path());
    let before = snapshot(&state);
    let pid_file = tmp.path().join("bg.pid");
    // A background grandchild holding stdout open: only killing the group ends it.
    let script = format!(
        "cat >/dev/null; sleep 1000 & echo $! > {}; sleep 1000",
        pid_file.display()
    );
    let o = cmd(
        tmp.path(),
        &state,
        &[
            "run",
            "main",
            "--summarizer",
            &script,
            "--summarizer-timeout",
            "1",
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("did not finish within 1 s") && err.contains("killed"),
        "{err}"
    );
    assert_eq!(snapshot(&state), before, "nothing may be written");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SIGKILL is delivered asynchronously: give the kernel a moment to finish the job.
    let mut dead = is_dead(pid);
    for _ in 0..200 {
        if dead {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        dead = is_dead(pid);
    }
    if !dead {
        // SAFETY: cleaning up the stray process the old code leaves behind.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(dead, "the summarizer's background process {pid} survived");
}

#[test]
fn a_summarizer_printing_more_than_the_cap_is_cut_off_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, _) = setup(tmp.path());
    let before = snapshot(&state);
    // 100 MB on stdout (bounded, so that the old unbounded read finishes too).
    let o = cmd(
        tmp.path(),
        &state,
        &[
            "run",
            "main",
            "--summarizer",
            "cat >/dev/null; yes | head -c 100000000",
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("more than 1 MiB"), "{err}");
    assert_eq!(snapshot(&state), before, "nothing may be written");
    // An endless stream is cut off the same way (the old code read it until memory ran out).
    let o = cmd(
        tmp.path(),
        &state,
        &["run", "main", "--summarizer", "cat >/dev/null; exec yes"],
    )
    .timeout(std::time::Duration::from_secs(120))
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("more than 1 MiB"), "{err}");
    assert_eq!(snapshot(&state), before);
    // Memory stayed bounded: the largest child this test process has waited for (every
    // claw-compact of this file, each ending with its own summarizer) peaked far below the
    // 100 MB it was offered.
    assert!(
        children_peak_rss_kib() < 64 * 1024,
        "peak RSS {} KiB",
        children_peak_rss_kib()
    );
}

/// The peak resident set of the largest waited-for descendant, in KiB (`getrusage`).
fn children_peak_rss_kib() -> i64 {
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    u.ru_maxrss
}

#[test]
fn a_summarizer_flooding_stderr_neither_deadlocks_nor_loses_its_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, file) = setup(tmp.path());
    // 50 MB of stderr before the summary; stdin is never read.
    let o = cmd(
        tmp.path(),
        &state,
        &[
            "run",
            "main",
            "--keep-recent-tokens",
            "300",
            "--summarizer",
            "head -c 50000000 /dev/zero >&2; echo FLOODED SUMMARY",
            "--json",
        ],
    )
    .timeout(std::time::Duration::from_secs(120))
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("FLOODED SUMMARY"));
    // A failing one that floods stderr reports only the end of it.
    let (state2, _) = setup(&tmp.path().join("b"));
    let o = cmd(
        tmp.path(),
        &state2,
        &[
            "run",
            "main",
            "--summarizer",
            "head -c 50000000 /dev/zero | tr '\\0' x >&2; echo >&2; echo the real reason >&2; exit 3",
        ],
    )
    .timeout(std::time::Duration::from_secs(120))
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the real reason"), "{err}");
    assert!(
        err.len() < 4096,
        "stderr tail too long: {} bytes",
        err.len()
    );
}

#[test]
fn help_says_how_the_summarizer_is_run_and_the_timeout_is_validated() {
    let tmp = tempfile::tempdir().unwrap();
    let (state, _) = setup(tmp.path());
    let o = cmd(tmp.path(), &state, &["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("sh -c"), "{help}");
    assert!(help.contains("--summarizer-timeout"), "{help}");
    assert!(help.contains("CLAW_COMPACT_CALL"), "{help}");
    assert!(help.contains("1 MiB"), "{help}");
    let before = snapshot(&state);
    cmd(
        tmp.path(),
        &state,
        &[
            "run",
            "main",
            "--summarizer",
            "cat",
            "--summarizer-timeout",
            "0",
        ],
    )
    .assert()
    .code(2);
    assert_eq!(snapshot(&state), before);
}
