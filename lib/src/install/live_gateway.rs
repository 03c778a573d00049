//! Whether a gateway is running on a state directory, judged by what the gateway holds, not
//! by the caller's environment (issue 23 item 3).
//!
//! The gateway's lock file is `<os.tmpdir()>/openclaw-<uid>/gateway.<sha8(configPath)>.lock`
//! (`gateway_lock`), computed from *the gateway's* `TMPDIR` and config path. A cron job with
//! another `TMPDIR`, or without `OPENCLAW_CONFIG_PATH`, computes another path and used to
//! write the live store. So a state dir counts as owned by a live gateway when any of these
//! holds (the first found is reported):
//!
//! 1. **A lock file.** For each config path the gateway may have hashed (the caller's, and
//!    `<stateDir>/openclaw.json` and `clawdbot.json`), under each temp dir it may use (the
//!    caller's `os.tmpdir()`, `/tmp`, `/var/tmp`, `/dev/shm`, `$XDG_RUNTIME_DIR`, and the
//!    `TMPDIR`/`TMP`/`TEMP` of every gateway process seen in step 2), for our uid and each such
//!    process's uid: `openclaw-<uid>/gateway.<hash>.lock` names a live gateway (pid alive with
//!    the recorded start time). Any other `gateway.*.lock` there whose recorded `configPath`
//!    is one of those config paths counts too.
//! 2. **A gateway process (Linux).** Every process in `/proc` whose argv is a gateway's by the
//!    gateway's own rule (`isGatewayArgv`: the `openclaw-gateway` title a running gateway gives
//!    itself, or `openclaw … gateway`, or an entry script with `gateway`) and that
//!    - has a file below the state dir open (`readlink /proc/<pid>/fd/*`: the gateway keeps
//!      `state/openclaw.sqlite` and its transcript locks open), or a gateway lock file of one
//!      of those config paths; or
//!    - resolves its state dir to this one from its own environment (`/proc/<pid>/environ`:
//!      `OPENCLAW_STATE_DIR`, else the `OPENCLAW_HOME`/`HOME` default; `/proc/<pid>/cwd` for
//!      relative paths).
//!
//! Only processes whose `/proc` entries we may read are seen: our own uid's, or every one as
//! root (a gateway of another user is still found by its lock file). Reads are bounded
//! (`process::MAX_*`) and links under `/proc` are only read with `readlink`. Other OpenClaw
//! processes (`openclaw agent`, a doctor run) are not gateways and are not reported.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::exit::{self, ExitCode};
use crate::fs::process;
use crate::install::gateway_lock::{self, GatewayLock};
use crate::install::paths::{absolutize, Environment, StateLayout};

/// What shows that a gateway owns the state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// Its lock file names it.
    LockFile(PathBuf),
    /// It has this file open (below the state dir, or its lock file).
    OpenFile(PathBuf),
    /// Its own environment resolves its state dir to this one.
    Environment,
}

/// A running gateway that owns a state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayOwner {
    /// Its process id.
    pub pid: u32,
    /// The port it recorded in its lock file, when known.
    pub port: Option<u16>,
    /// Its argv[0] (a running gateway's title is `openclaw-gateway`), when readable.
    pub title: Option<String>,
    /// How it was found.
    pub evidence: Evidence,
}

impl std::fmt::Display for GatewayOwner {
    /// `pid 123 "openclaw-gateway", port 18789; it holds /x/state/openclaw.sqlite open`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {}", self.pid)?;
        if let Some(t) = &self.title {
            write!(f, " {t:?}")?;
        }
        if let Some(p) = self.port {
            write!(f, ", port {p}")?;
        }
        match &self.evidence {
            Evidence::LockFile(p) => write!(f, "; its lock {}", p.display()),
            Evidence::OpenFile(p) => write!(f, "; it holds {} open", p.display()),
            Evidence::Environment => write!(f, "; its environment names this state dir"),
        }
    }
}

/// A write refused because a live gateway owns the state directory (exit 75): the
/// gateway keeps its own copy of the store and would overwrite an offline change.
#[derive(Debug, Error)]
#[error("the OpenClaw gateway is running ({owner}) and owns {state_dir}; stop it first, or pass --offline (or --store) to write offline anyway")]
pub struct GatewayRunning {
    /// The running gateway.
    pub owner: GatewayOwner,
    /// The state directory.
    pub state_dir: PathBuf,
}

impl ExitCode for GatewayRunning {
    fn exit_code(&self) -> i32 {
        exit::TEMP_FAIL
    }
}

/// The live gateway of the state dir in `layout`, if one is running (see the module doc).
/// `env` is the caller's environment (its `TMPDIR` is one place among others).
pub fn find(layout: &StateLayout, env: &Environment) -> Option<GatewayOwner> {
    let configs = config_candidates(layout);
    let own_uid = rustix::process::getuid().as_raw();
    let caller_tmp = gateway_lock::node_tmpdir(|k| env.var(k).map(OsString::from));
    let mut roots: BTreeSet<PathBuf> = [
        PathBuf::from(caller_tmp),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ]
    .into_iter()
    .chain(env.meaningful_var("XDG_RUNTIME_DIR").map(PathBuf::from))
    .collect();
    let mut uids: BTreeSet<u32> = [own_uid].into();
    if let Some(lock) = find_lock(&roots, &uids, &configs) {
        return Some(from_lock(lock));
    }
    let state = canonical(&layout.state_dir);
    let lock_names: BTreeSet<String> = configs.iter().map(|c| gateway_lock::lock_name(c)).collect();
    let mut seen_roots = false;
    for pid in process::pids() {
        let Some(argv) = process::cmdline(pid) else {
            continue;
        };
        if !process::looks_like_gateway(&argv) {
            continue;
        }
        let title = argv.first().cloned();
        let owner = |evidence| GatewayOwner {
            pid,
            port: None,
            title: title.clone(),
            evidence,
        };
        for file in process::open_files(pid).unwrap_or_default() {
            let is_lock = file
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| lock_names.contains(n));
            if file.starts_with(&state) || is_lock {
                let mut o = owner(Evidence::OpenFile(file.clone()));
                if is_lock {
                    o.port = gateway_lock::live_gateway_at(&file).and_then(|l| l.port);
                }
                return Some(o);
            }
        }
        let vars = process::environ(pid);
        if let Some(vars) = &vars {
            let cwd = process::cwd(pid).unwrap_or_else(|| PathBuf::from("/"));
            let theirs = Environment::from_vars(vars.iter().cloned(), cwd);
            let their_layout = StateLayout::resolve(&theirs, None, None);
            if canonical(&their_layout.state_dir) == state {
                return Some(owner(Evidence::Environment));
            }
            let tmp = gateway_lock::node_tmpdir(|k| theirs.var(k).map(OsString::from));
            seen_roots |= roots.insert(PathBuf::from(tmp));
        }
        if let Some(u) = process::uid(pid) {
            seen_roots |= uids.insert(u);
        }
    }
    if seen_roots {
        return find_lock(&roots, &uids, &configs).map(from_lock);
    }
    None
}

fn from_lock(lock: GatewayLock) -> GatewayOwner {
    GatewayOwner {
        pid: lock.pid,
        port: lock.port,
        title: process::cmdline(lock.pid).and_then(|a| a.into_iter().next()),
        evidence: Evidence::LockFile(lock.lock_path),
    }
}

/// The config path strings a gateway of this state dir may have hashed: the caller's, and
/// the state dir's `openclaw.json` and `clawdbot.json` (`resolveConfigPath`), each as given
/// and with its directories resolved.
fn config_candidates(layout: &StateLayout) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let state_real = canonical(&layout.state_dir);
    for p in [
        layout.config_path.clone(),
        layout.state_dir.join("openclaw.json"),
        layout.state_dir.join("clawdbot.json"),
        state_real.join("openclaw.json"),
        state_real.join("clawdbot.json"),
    ] {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if let Some(real) = layout
        .config_path
        .parent()
        .map(canonical)
        .zip(layout.config_path.file_name())
        .map(|(d, n)| d.join(n))
    {
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// The first live gateway lock for `configs` under `roots` × `uids`: by name, then any
/// `gateway.*.lock` there (at most 64 per directory) whose recorded `configPath` is one of
/// `configs`.
fn find_lock(
    roots: &BTreeSet<PathBuf>,
    uids: &BTreeSet<u32>,
    configs: &[PathBuf],
) -> Option<GatewayLock> {
    for root in roots {
        for &uid in uids {
            let dir = gateway_lock::lock_dir(root, uid);
            for c in configs {
                if let Some(lock) =
                    gateway_lock::live_gateway_at(&dir.join(gateway_lock::lock_name(c)))
                {
                    return Some(lock);
                }
            }
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.take(64).flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if !(name.starts_with("gateway.") && name.ends_with(".lock")) {
                    continue;
                }
                let Some(lock) = gateway_lock::live_gateway_at(&e.path()) else {
                    continue;
                };
                let recorded = absolutize(Path::new(&lock.config_path), Path::new("/"));
                let recorded_real = recorded
                    .parent()
                    .map(canonical)
                    .zip(recorded.file_name())
                    .map(|(d, n)| d.join(n));
                if configs.contains(&recorded)
                    || recorded_real.is_some_and(|r| configs.contains(&r))
                {
                    return Some(lock);
                }
            }
        }
    }
    None
}

/// `p` with its links resolved, or `p` made absolute when it does not exist.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| absolutize(p, Path::new("/")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    struct Reaper(Child);
    impl Drop for Reaper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    /// A `sleep` that calls itself `openclaw-gateway`, with `vars` as its whole environment
    /// and optionally `open` held open as its stdin.
    fn fake_gateway(vars: &[(&str, &Path)], open: Option<&Path>) -> Reaper {
        let mut c = Command::new("sleep");
        c.arg0("openclaw-gateway").arg("30").env_clear();
        for (k, v) in vars {
            c.env(k, v);
        }
        c.stdin(match open {
            Some(p) => Stdio::from(std::fs::File::open(p).expect("open")),
            None => Stdio::null(),
        });
        let child = Reaper(c.spawn().expect("spawn sleep"));
        process::tests::wait_for_exec(child.0.id());
        child
    }

    fn layout_of(state: &Path) -> StateLayout {
        let env = Environment::from_vars([("HOME", "/nonexistent-home")], "/");
        StateLayout::resolve(&env, Some(state), None)
    }

    fn caller() -> Environment {
        Environment::from_vars(
            [
                ("HOME", "/nonexistent-home"),
                ("TMPDIR", "/nonexistent-tmp"),
            ],
            "/",
        )
    }

    #[test]
    fn nothing_running_is_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(find(&layout_of(dir.path()), &caller()), None);
    }

    #[test]
    fn a_gateway_with_a_file_of_the_state_dir_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(state.join("state")).expect("mkdir");
        let db = state.join("state/openclaw.sqlite");
        std::fs::write(&db, "").expect("write");
        let g = fake_gateway(&[], Some(&db));
        let owner = find(&layout_of(&state), &caller()).expect("found");
        assert_eq!(owner.pid, g.0.id());
        assert_eq!(owner.title.as_deref(), Some("openclaw-gateway"));
        assert_eq!(owner.evidence, Evidence::OpenFile(db.clone()));
        assert!(
            owner.to_string().contains("openclaw.sqlite open"),
            "{owner}"
        );
        // Another state dir (a prefix of the name is not the same directory) is not owned.
        let other = tempfile::tempdir().expect("tempdir");
        assert_eq!(find(&layout_of(other.path()), &caller()), None);
    }

    #[test]
    fn a_gateway_whose_environment_names_the_state_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = std::fs::canonicalize(dir.path()).expect("canonical");
        let g = fake_gateway(&[("OPENCLAW_STATE_DIR", &state)], None);
        let owner = find(&layout_of(&state), &caller()).expect("found");
        assert_eq!(owner.pid, g.0.id());
        assert_eq!(owner.evidence, Evidence::Environment);
        // Its HOME-based default state dir counts the same.
        let home = tempfile::tempdir().expect("tempdir");
        let home = std::fs::canonicalize(home.path()).expect("canonical");
        std::fs::create_dir_all(home.join(".openclaw")).expect("mkdir");
        let h = fake_gateway(&[("HOME", &home)], None);
        let owner = find(&layout_of(&home.join(".openclaw")), &caller()).expect("found");
        assert_eq!(owner.pid, h.0.id());
    }

    #[test]
    fn a_plain_process_holding_the_files_is_not_a_gateway() {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = std::fs::canonicalize(dir.path()).expect("canonical");
        let f = state.join("sessions.json");
        std::fs::write(&f, "{}").expect("write");
        let mut c = Command::new("sleep");
        c.arg("30").env("OPENCLAW_STATE_DIR", &state);
        c.stdin(Stdio::from(std::fs::File::open(&f).expect("open")));
        let child = Reaper(c.spawn().expect("spawn"));
        process::tests::wait_for_exec(child.0.id());
        assert_eq!(find(&layout_of(&state), &caller()), None);
    }

    #[test]
    fn a_lock_under_the_gateways_own_tmpdir_is_found_through_its_environment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let (state, tmp) = (root.join("state"), root.join("gateway-tmp"));
        std::fs::create_dir_all(&state).expect("mkdir");
        // The gateway's own environment names another state dir string (a link to ours), so
        // only its lock, under its own TMPDIR, shows it.
        let link = root.join("via-link");
        std::os::unix::fs::symlink(&state, &link).expect("symlink");
        let g = fake_gateway(
            &[
                ("TMPDIR", &tmp),
                ("OPENCLAW_STATE_DIR", &root.join("elsewhere")),
            ],
            None,
        );
        let pid = g.0.id();
        let uid = rustix::process::getuid().as_raw();
        let lock_dir = gateway_lock::lock_dir(&tmp, uid);
        std::fs::create_dir_all(&lock_dir).expect("mkdir");
        let config = link.join("openclaw.json");
        let lock = lock_dir.join("gateway.00000000.lock");
        let st = process::start_time(pid).expect("start time");
        std::fs::write(
            &lock,
            format!(
                r#"{{"pid":{pid},"createdAt":"x","configPath":"{}","port":4242,"startTime":{st}}}"#,
                config.display()
            ),
        )
        .expect("write");
        let owner = find(&layout_of(&state), &caller()).expect("found");
        assert_eq!(owner.pid, pid);
        assert_eq!(owner.port, Some(4242));
        assert_eq!(owner.evidence, Evidence::LockFile(lock));
    }
}
