//! Facts about other processes on this machine: liveness, start time, argv, environment,
//! open files, and who they look like.
//!
//! These mirror the gateway's own probes (`dist/pid-alive-*.js`, `readGatewayProcessArgsSync`,
//! `isOpenClawSessionOwnerArgv`, `isGatewayArgv`) so that lock decisions made here agree with
//! the gateway's. Everything read from `/proc` is bounded ([`MAX_CMDLINE`], [`MAX_ENVIRON`],
//! [`MAX_FDS`], [`MAX_PIDS`]), and the links under `/proc/<pid>/` (`fd/*`, `cwd`) are only
//! ever read with `readlink`, never followed.
//!
//! `/proc` is read only where the Linux pieces are in use ([`crate::fs::platform`]); elsewhere
//! (and with `CLAWSTATE_PORTABLE=1`) a start time, argv, environment, directory or file
//! list is unknown (`None`): a lock owner that cannot be examined is treated as alive,
//! and a live gateway is found by its lock file only (`live_gateway`'s process scan is
//! Linux's).

use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::js;

/// At most this many bytes of `/proc/<pid>/cmdline` are read.
pub const MAX_CMDLINE: u64 = 64 << 10;
/// At most this many bytes of `/proc/<pid>/environ` are read.
pub const MAX_ENVIRON: u64 = 256 << 10;
/// At most this many open files of one process are looked at.
pub const MAX_FDS: usize = 4096;
/// At most this many `/proc` entries are looked at.
pub const MAX_PIDS: usize = 100_000;

/// Whether `pid` names a live process: `kill(pid, 0)` succeeds or fails with `EPERM`, and on
/// Linux `/proc/<pid>/status` does not say state `Z` (zombie).
///
/// A pid of 0 or above `i32::MAX` is never alive (the peer's `process.kill` rejects it, and
/// `kill(2)` would address a process group). Unlike the peer, which treats `EPERM` as dead,
/// a process of another user counts as alive here: clawstate never steals a lock from a live
/// process it merely may not signal.
pub fn is_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    let Some(pid_t) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    // Signal 0 sends nothing; it only checks existence and permission.
    match rustix::process::test_kill_process(pid_t) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    !is_zombie(pid)
}

/// Whether `/proc/<pid>/status` reports state `Z` (Linux only; unreadable means no).
fn is_zombie(pid: u32) -> bool {
    if !crate::fs::platform::linux_specific() {
        return false;
    }
    let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("State:"))
        .and_then(|rest| rest.split_whitespace().next())
        .is_some_and(|state| state.starts_with('Z'))
}

/// The start time of `pid` in clock ticks since boot: field 22 of `/proc/<pid>/stat`
/// (Linux only), parsed after the last `)` so a command name with spaces or parentheses
/// cannot shift the fields.
pub fn start_time(pid: u32) -> Option<u64> {
    if !crate::fs::platform::linux_specific() || pid == 0 {
        return None;
    }
    let raw = fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_start_time(&String::from_utf8_lossy(&raw))
}

/// Field 22 (`starttime`) of a `/proc/<pid>/stat` line.
fn parse_stat_start_time(stat: &str) -> Option<u64> {
    let comm_end = stat.rfind(')')?;
    // After the comm come field 3 (state) onwards; starttime is field 22, i.e. index 19.
    stat[comm_end + 1..]
        .split_ascii_whitespace()
        .nth(19)?
        .parse::<u64>()
        .ok()
}

/// The argv of `pid` from `/proc/<pid>/cmdline`, as the gateway reads it: split on NUL,
/// each argument trimmed, empty ones dropped. `None` when unreadable; an empty list for a
/// kernel thread or a zombie.
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    if pid == 0 {
        return None;
    }
    let raw = read_bounded(&format!("/proc/{pid}/cmdline"), MAX_CMDLINE)?;
    Some(parse_cmdline(&String::from_utf8_lossy(&raw)))
}

/// At most `limit` bytes of a `/proc` file; `None` when it cannot be read (gone, or
/// another user's and we are not root).
fn read_bounded(path: &str, limit: u64) -> Option<Vec<u8>> {
    if !crate::fs::platform::linux_specific() {
        return None;
    }
    let mut raw = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut raw)
        .ok()?;
    Some(raw)
}

/// The pids listed in `/proc` (Linux; empty elsewhere or when `/proc` is unreadable), at
/// most [`MAX_PIDS`], this process excluded.
pub fn pids() -> Vec<u32> {
    if !crate::fs::platform::linux_specific() {
        return Vec::new();
    }
    let me = std::process::id();
    let Ok(rd) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.take(MAX_PIDS)
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != 0 && pid != me)
        .collect()
}

/// The environment of `pid` from `/proc/<pid>/environ` (readable for our own processes,
/// or any as root): `NAME=value` pairs, at most [`MAX_ENVIRON`] bytes.
pub fn environ(pid: u32) -> Option<Vec<(String, String)>> {
    if pid == 0 {
        return None;
    }
    let raw = read_bounded(&format!("/proc/{pid}/environ"), MAX_ENVIRON)?;
    Some(
        raw.split(|b| *b == 0)
            .filter_map(|kv| {
                let kv = String::from_utf8_lossy(kv);
                let (k, v) = kv.split_once('=')?;
                (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
            })
            .collect(),
    )
}

/// The working directory of `pid` (`readlink /proc/<pid>/cwd`).
pub fn cwd(pid: u32) -> Option<PathBuf> {
    if pid == 0 || !crate::fs::platform::linux_specific() {
        return None;
    }
    fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// The real uid of `pid` (the `Uid:` line of `/proc/<pid>/status`).
pub fn uid(pid: u32) -> Option<u32> {
    let raw = read_bounded(&format!("/proc/{pid}/status"), 16 << 10)?;
    String::from_utf8_lossy(&raw)
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|u| u.parse().ok())
}

/// The files `pid` has open: the absolute targets of `readlink /proc/<pid>/fd/*` (sockets,
/// pipes and anonymous inodes left out), at most [`MAX_FDS`]. `None` when its fd directory
/// cannot be read (another user's process, or gone).
pub fn open_files(pid: u32) -> Option<Vec<PathBuf>> {
    if pid == 0 || !crate::fs::platform::linux_specific() {
        return None;
    }
    let rd = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(
        rd.take(MAX_FDS)
            .flatten()
            .filter_map(|fd| fs::read_link(fd.path()).ok())
            .filter(|t| t.as_os_str().as_bytes().first() == Some(&b'/'))
            .collect(),
    )
}

/// Whether `pid` has `path` open (one of its fds links to it; `path` as the kernel shows
/// it, i.e. with its directories resolved).
pub fn holds_open(pid: u32, path: &Path) -> bool {
    open_files(pid).is_some_and(|files| files.iter().any(|f| f == path))
}

/// Split a raw `/proc/<pid>/cmdline` the way the gateway's `parseProcCmdline` does.
fn parse_cmdline(raw: &str) -> Vec<String> {
    raw.split('\0')
        .map(js::trim)
        .filter(|arg| !arg.is_empty())
        .map(str::to_string)
        .collect()
}

/// The gateway's per-argument normalisation: trimmed, `\` turned into `/`, lower-cased;
/// empty arguments dropped.
fn normalize_args(argv: &[String]) -> Vec<String> {
    argv.iter()
        .map(|arg| js::trim(arg).replace('\\', "/").to_lowercase())
        .filter(|arg| !arg.is_empty())
        .collect()
}

/// Strip one trailing `.bat`, `.cmd` or `.exe` (already lower-cased).
fn strip_windows_exe_suffix(exe: &str) -> &str {
    for suffix in [".bat", ".cmd", ".exe"] {
        if let Some(stem) = exe.strip_suffix(suffix) {
            return stem;
        }
    }
    exe
}

/// Whether an argv looks like an OpenClaw process (`store.md` §5.4, the gateway's
/// `isOpenClawSessionOwnerArgv`).
///
/// argv[0] is `openclaw` or ends with `/openclaw` or `/openclaw-gateway`; or some argument
/// is `openclaw`, ends with `/openclaw`, is `openclaw.mjs` or ends with `/openclaw.mjs`; or
/// some argument ends with a known entry script and some argument is `gateway` or `agent`.
pub fn looks_like_openclaw(argv: &[String]) -> bool {
    let normalized = normalize_args(argv);
    let Some(first) = normalized.first() else {
        return false;
    };
    let exe = strip_windows_exe_suffix(first);
    if exe == "openclaw" || exe.ends_with("/openclaw") || exe.ends_with("/openclaw-gateway") {
        return true;
    }
    if normalized.iter().any(|arg| {
        arg == "openclaw"
            || arg.ends_with("/openclaw")
            || arg == "openclaw.mjs"
            || arg.ends_with("/openclaw.mjs")
    }) {
        return true;
    }
    const ENTRY_CANDIDATES: [&str; 5] = [
        "dist/index.js",
        "dist/entry.js",
        "scripts/run-node.mjs",
        "src/entry.ts",
        "src/index.ts",
    ];
    let has_command_token = normalized
        .iter()
        .any(|arg| arg == "gateway" || arg == "agent");
    has_command_token
        && normalized
            .iter()
            .any(|arg| ENTRY_CANDIDATES.iter().any(|entry| arg.ends_with(entry)))
}

/// Whether an argv is a gateway's by the gateway's own rule (`isGatewayArgv(args,
/// {allowGatewayBinary: true})`): argv[0] is `openclaw-gateway` (the title a running gateway
/// gives itself) or ends with `/openclaw-gateway`; or some argument is `gateway` and either
/// an argument ends with a known entry script or argv[0] is `openclaw`.
pub fn looks_like_gateway(argv: &[String]) -> bool {
    let normalized: Vec<String> = argv
        .iter()
        .map(|a| js::trim(&a.replace('\\', "/")).to_lowercase())
        .collect();
    let first = normalized.first().map(String::as_str).unwrap_or("");
    let exe = strip_windows_exe_suffix(first);
    let gateway_binary = exe == "openclaw-gateway" || exe.ends_with("/openclaw-gateway");
    if !normalized.iter().any(|a| a == "gateway") {
        return gateway_binary;
    }
    const ENTRY_CANDIDATES: [&str; 6] = [
        "dist/index.js",
        "dist/entry.js",
        "openclaw.mjs",
        "scripts/run-node.mjs",
        "src/entry.ts",
        "src/index.ts",
    ];
    if normalized
        .iter()
        .any(|a| ENTRY_CANDIDATES.iter().any(|e| a.ends_with(e)))
    {
        return true;
    }
    exe == "openclaw" || exe.ends_with("/openclaw") || gateway_binary
}

/// Whether an argv looks like one of clawstate's own binaries: the basename of argv[0]
/// starts with `claw-` (spec decision 9).
pub fn looks_like_clawstate(argv: &[String]) -> bool {
    let normalized = normalize_args(argv);
    let Some(first) = normalized.first() else {
        return false;
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    base.starts_with("claw-")
}

/// Makes a write past the file-size limit (`ulimit -f`, `RLIMIT_FSIZE`) fail with `EFBIG`
/// instead of killing the process with SIGXFSZ: the failed write then takes its ordinary
/// error path (the temp file removed, one error line, exit 73) rather than dying silently
/// mid-operation with a partial temp file left behind. Every binary calls it first.
pub fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Ends this process with `code` once its output is flushed, without running exit
/// handlers: the allocator's handler would hand every page back to the kernel one range at
/// a time (tens of milliseconds after a large run), which the exit does at once. Call it
/// only when everything the run wrote is written and synced.
pub fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    crate::fs::scratch_dir::remove();
    // SAFETY: `_exit` has no preconditions; nothing is left to flush or sync.
    unsafe { libc::_exit(i32::from(code)) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Wait until a freshly spawned child shows its new argv: right after `execve` the
    /// kernel briefly reports an empty `/proc/<pid>/cmdline`.
    pub(crate) fn wait_for_exec(pid: u32) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while cmdline(pid).is_none_or(|argv| argv.is_empty()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn spawn_sleep(arg0: &str) -> Child {
        let child = Command::new("sleep")
            .arg0(arg0)
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep");
        wait_for_exec(child.id());
        child
    }

    #[test]
    fn own_process_is_alive_with_start_time_and_cmdline() {
        let me = std::process::id();
        assert!(is_alive(me));
        assert!(start_time(me).is_some());
        let argv = cmdline(me).expect("own cmdline");
        assert!(!argv.is_empty());
        assert!(!looks_like_openclaw(&argv));
        assert!(!looks_like_clawstate(&argv));
    }

    #[test]
    fn invalid_pids_are_dead() {
        assert!(!is_alive(0));
        assert!(!is_alive(u32::MAX));
        assert!(!is_alive(i32::MAX as u32 + 1));
        assert_eq!(start_time(0), None);
        assert_eq!(cmdline(0), None);
    }

    #[test]
    fn reaped_child_is_dead_and_zombie_is_dead() {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        // Before reaping it is a zombie once it exits: dead either way.
        let deadline = Instant::now() + Duration::from_secs(5);
        while is_alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!is_alive(pid), "exited (zombie) child must be dead");
        child.wait().expect("wait");
        assert!(!is_alive(pid));
        assert_eq!(start_time(pid), None);
    }

    #[test]
    fn live_child_argv_and_start_time() {
        let mut child = spawn_sleep("openclaw");
        let pid = child.id();
        assert!(is_alive(pid));
        let argv = cmdline(pid).expect("child cmdline");
        assert_eq!(argv, args(&["openclaw", "30"]));
        assert!(looks_like_openclaw(&argv));
        let st = start_time(pid).expect("start time");
        assert!(st >= start_time(std::process::id()).expect("own start time"));
        child.kill().ok();
        child.wait().ok();
    }

    #[test]
    fn stat_parsing_survives_odd_comm() {
        let line =
            "123 (a) b (c) d) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat_start_time(line), Some(987654));
        assert_eq!(parse_stat_start_time("123 (x) S 1 2"), None);
        assert_eq!(parse_stat_start_time("no paren"), None);
    }

    #[test]
    fn cmdline_parsing_trims_and_drops_empties() {
        assert_eq!(
            parse_cmdline("node\0 /x/openclaw.mjs \0\0gateway\0"),
            args(&["node", "/x/openclaw.mjs", "gateway"])
        );
        assert_eq!(parse_cmdline(""), Vec::<String>::new());
    }

    #[test]
    fn openclaw_rule() {
        let yes: &[&[&str]] = &[
            &["openclaw"],
            &["/usr/local/bin/openclaw", "gateway"],
            &["C:\\Program Files\\OpenClaw\\OPENCLAW.EXE"],
            &["openclaw.cmd"],
            &["/opt/bin/openclaw-gateway"],
            &[
                "node",
                "/usr/lib/node_modules/openclaw/openclaw.mjs",
                "gateway",
            ],
            &["node", "openclaw.mjs"],
            &["node", "/home/u/.npm/bin/openclaw"],
            &["node", "/src/oc/dist/index.js", "gateway"],
            &["node", "/src/oc/dist/entry.js", "agent"],
            &["bun", "src/entry.ts", "gateway"],
            &["node", "scripts/run-node.mjs", "AGENT"],
            &["  ", "openclaw"],
        ];
        for argv in yes {
            assert!(looks_like_openclaw(&args(argv)), "{argv:?}");
        }
        let no: &[&[&str]] = &[
            &[],
            &["", "  "],
            &["sleep", "30"],
            &["openclaw-gateway"],
            &["/usr/bin/openclawx"],
            &["node", "/src/oc/dist/index.js"],
            &["node", "/src/oc/dist/index.js", "sessions"],
            &["node", "openclaw.mjsx", "gateway"],
            &["claw-sessions", "cleanup"],
        ];
        for argv in no {
            assert!(!looks_like_openclaw(&args(argv)), "{argv:?}");
        }
    }

    #[test]
    fn clawstate_rule() {
        assert!(looks_like_clawstate(&args(&["claw-sessions", "cleanup"])));
        assert!(looks_like_clawstate(&args(&[
            "/usr/local/bin/claw-transcript"
        ])));
        assert!(looks_like_clawstate(&args(&[
            "",
            "./target/debug/claw-compact"
        ])));
        assert!(!looks_like_clawstate(&args(&["clawstate-1234abcd"])));
        assert!(!looks_like_clawstate(&args(&["/opt/claw-/sleep"])));
        assert!(!looks_like_clawstate(&args(&["openclaw"])));
        assert!(!looks_like_clawstate(&[]));
    }
}
