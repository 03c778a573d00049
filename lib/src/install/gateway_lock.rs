//! The gateway's own lock file (spec README decision 4): where it is and when it names a live
//! gateway. `live_gateway` looks for it under every temp dir the gateway may use, beside the
//! other signs of a running gateway.
//!
//! A running gateway holds `<os tmpdir>/openclaw-<uid>/gateway.<hash>.lock`, where `<hash>`
//! is the first 8 hex digits of the SHA-256 of its config path string, and writes compact
//! JSON `{pid, createdAt, configPath, port?, startTime?}` into it (`dist/gateway-lock-*.js`).
//! `<os tmpdir>` is Node's `os.tmpdir()`, not OpenClaw's preferred `/tmp/openclaw` dir.

use crate::fs::process;
use crate::js::node_path;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// A gateway lock file that names a live gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayLock {
    /// The gateway's process id.
    pub pid: u32,
    /// The port it listens on, when it recorded one.
    pub port: Option<u16>,
    /// When it took the lock (`createdAt`, as written).
    pub created_at: String,
    /// The config path it recorded (`configPath`).
    pub config_path: String,
    /// The lock file.
    pub lock_path: PathBuf,
}

/// The gateway lock path for a config path string, using this process's environment and
/// uid: `<os.tmpdir()>/openclaw-<uid>/gateway.<first 8 hex of sha256(config path)>.lock`.
///
/// The config path is hashed exactly as given; the gateway hashes the string its
/// `resolveConfigPath` returns (`OPENCLAW_CONFIG_PATH` made absolute, or the first
/// existing `<stateDir>/openclaw.json` / `clawdbot.json`, else `<stateDir>/openclaw.json`),
/// without resolving symlinks.
pub fn gateway_lock_path(config_path: &Path) -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    lock_path_for(|key| std::env::var_os(key), uid, config_path)
}

/// Node's `os.tmpdir()` on POSIX: the first non-empty of `TMPDIR`, `TMP`, `TEMP`, else
/// `/tmp`, with one trailing `/` removed (except for `/` itself).
pub fn node_tmpdir(env: impl Fn(&str) -> Option<OsString>) -> OsString {
    let mut dir = ["TMPDIR", "TMP", "TEMP"]
        .iter()
        .filter_map(|key| env(key))
        .find(|value| !value.is_empty())
        .unwrap_or_else(|| OsString::from("/tmp"))
        .into_vec();
    if dir.len() > 1 && dir.last() == Some(&b'/') {
        dir.pop();
    }
    OsString::from_vec(dir)
}

/// The gateway's lock directory under a temp dir: `<tmpdir>/openclaw-<uid>`.
pub fn lock_dir(tmpdir: &Path, uid: u32) -> PathBuf {
    node_path::join(tmpdir, Path::new(&format!("openclaw-{uid}")))
}

/// The lock file name for a config path string: `gateway.<first 8 hex of its sha256>.lock`.
pub fn lock_name(config_path: &Path) -> String {
    let digest = Sha256::digest(config_path.as_os_str().as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("gateway.{hash}.lock")
}

fn lock_path_for(env: impl Fn(&str) -> Option<OsString>, uid: u32, config_path: &Path) -> PathBuf {
    let dir = lock_dir(Path::new(&node_tmpdir(env)), uid);
    node_path::join(&dir, Path::new(&lock_name(config_path)))
}

/// The live gateway a lock file names: the file exists, parses, and names a live pid whose
/// `/proc` start time equals the recorded `startTime` (or, without one, whose argv is a
/// gateway's). A missing, unreadable or malformed lock file names none.
pub fn live_gateway_at(lock_path: &Path) -> Option<GatewayLock> {
    // Under a temp directory other users may write into: never a FIFO (a read would
    // block every write command), never a link, never more than a lock's few bytes.
    let (dir, name) = (lock_path.parent()?, lock_path.file_name()?);
    let raw = crate::fs::data_file::DataPath::beneath(dir, Path::new(name))
        .and_then(|f| f.read_small(64 << 10, "a gateway lock file"))
        .ok()?;
    let payload = parse_payload(&raw)?;
    if !owner_alive(&payload) {
        return None;
    }
    Some(GatewayLock {
        pid: positive_pid(payload.pid)?,
        port: payload.port,
        created_at: payload.created_at,
        config_path: payload.config_path,
        lock_path: lock_path.to_path_buf(),
    })
}

/// The lock payload as the gateway's schema accepts it.
#[derive(Debug, Clone, PartialEq)]
struct Payload {
    pid: f64,
    created_at: String,
    config_path: String,
    port: Option<u16>,
    start_time: Option<f64>,
}

/// `LockPayloadSchema`: `pid` number, `createdAt` and `configPath` strings, optional `port`
/// (integer 1-65535) and `startTime` (number). Any violation rejects the whole payload.
fn parse_payload(raw: &[u8]) -> Option<Payload> {
    let Value::Object(map) = crate::js::jsjson::parse_value(&String::from_utf8_lossy(raw)).ok()?
    else {
        return None;
    };
    let pid = map.get("pid")?.as_f64()?;
    let created_at = map.get("createdAt")?.as_str()?.to_string();
    let config_path = map.get("configPath")?.as_str()?.to_string();
    let port = match map.get("port") {
        None => None,
        Some(v) => {
            let n = v.as_f64()?;
            if n.fract() != 0.0 || !(1.0..=65535.0).contains(&n) {
                return None;
            }
            Some(n as u16)
        }
    };
    let start_time = match map.get("startTime") {
        None => None,
        Some(v) => Some(v.as_f64()?),
    };
    Some(Payload {
        pid,
        created_at,
        config_path,
        port,
        start_time,
    })
}

fn positive_pid(pid: f64) -> Option<u32> {
    (pid.fract() == 0.0 && pid >= 1.0 && pid <= u32::MAX as f64).then_some(pid as u32)
}

/// The gateway's `resolveGatewayOwnerStatus` without the port probe; "unknown" (unreadable
/// `/proc`) counts as alive, so clawstate errs on the side of not writing.
fn owner_alive(payload: &Payload) -> bool {
    let Some(pid) = positive_pid(payload.pid) else {
        return false;
    };
    if !process::is_alive(pid) {
        return false;
    }
    if crate::fs::platform::linux_specific() {
        if let Some(recorded) = payload.start_time {
            return match process::start_time(pid) {
                Some(current) => current as f64 == recorded,
                None => true,
            };
        }
    }
    match process::cmdline(pid) {
        Some(argv) => process::looks_like_gateway(&argv),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    struct Reaper(Child);
    impl Drop for Reaper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn spawn(arg0: &str, args: &[&str]) -> Reaper {
        let child = Reaper(
            Command::new("sleep")
                .arg0(arg0)
                .args(args)
                .stdin(Stdio::null())
                .spawn()
                .expect("spawn sleep"),
        );
        process::tests::wait_for_exec(child.0.id());
        child
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn lock_path_hashes_the_config_path_string() {
        // sha256("/home/u/.openclaw/openclaw.json") starts with these 8 hex digits
        // (checked against the peer's resolveGatewayLockPath).
        let config = Path::new("/home/u/.openclaw/openclaw.json");
        let digest = Sha256::digest(b"/home/u/.openclaw/openclaw.json");
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            lock_path_for(env_of(&[]), 1000, config),
            PathBuf::from(format!("/tmp/openclaw-1000/gateway.{hash}.lock"))
        );
        assert_eq!(
            lock_path_for(env_of(&[("TMPDIR", "/var/tmp/"), ("TMP", "/x")]), 0, config),
            PathBuf::from(format!("/var/tmp/openclaw-0/gateway.{hash}.lock"))
        );
        assert_eq!(
            lock_path_for(env_of(&[("TMPDIR", ""), ("TMP", "/x//")]), 5, config),
            PathBuf::from(format!("/x/openclaw-5/gateway.{hash}.lock"))
        );
        assert_eq!(
            lock_path_for(env_of(&[("TEMP", "/a/./b/..")]), 5, config),
            PathBuf::from(format!("/a/openclaw-5/gateway.{hash}.lock"))
        );
        let other = lock_path_for(env_of(&[]), 1000, Path::new("/home/u/.openclaw/x.json"));
        assert_ne!(other, lock_path_for(env_of(&[]), 1000, config));
    }

    #[test]
    fn missing_or_garbage_lock_is_not_live() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lock = dir.path().join("gateway.deadbeef.lock");
        assert_eq!(live_gateway_at(&lock), None);
        for garbage in [
            "",
            "nope",
            "[]",
            r#"{"pid": 1, "createdAt": "x"}"#,
            r#"{"pid": "1", "createdAt": "x", "configPath": "c"}"#,
            r#"{"pid": 1, "createdAt": "x", "configPath": "c", "port": 0}"#,
            r#"{"pid": 1, "createdAt": "x", "configPath": "c", "port": null}"#,
        ] {
            fs::write(&lock, garbage).expect("write");
            assert_eq!(live_gateway_at(&lock), None, "{garbage}");
        }
    }

    #[test]
    fn live_owner_with_matching_start_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lock = dir.path().join("gateway.lock");
        let child = spawn("sleep", &["30"]);
        let pid = child.0.id();
        let st = process::start_time(pid).expect("start time");
        let payload = format!(
            r#"{{"pid":{pid},"createdAt":"2026-01-01T00:00:00.000Z","configPath":"/c/openclaw.json","port":18789,"startTime":{st}}}"#
        );
        fs::write(&lock, &payload).expect("write");
        let owner = live_gateway_at(&lock).expect("live");
        assert_eq!(owner.pid, pid);
        assert_eq!(owner.port, Some(18789));
        assert_eq!(owner.created_at, "2026-01-01T00:00:00.000Z");
        assert_eq!(owner.config_path, "/c/openclaw.json");
        assert_eq!(owner.lock_path, lock);

        // A recycled pid (different start time) is not the gateway.
        let payload = format!(
            r#"{{"pid":{pid},"createdAt":"x","configPath":"c","startTime":{}}}"#,
            st + 1
        );
        fs::write(&lock, payload).expect("write");
        assert_eq!(live_gateway_at(&lock), None);
    }

    #[test]
    fn without_start_time_the_argv_decides() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lock = dir.path().join("gateway.lock");
        let plain = spawn("sleep", &["30"]);
        fs::write(
            &lock,
            format!(
                r#"{{"pid":{},"createdAt":"x","configPath":"c"}}"#,
                plain.0.id()
            ),
        )
        .expect("write");
        assert_eq!(live_gateway_at(&lock), None);
        let gateway = spawn("openclaw-gateway", &["30"]);
        fs::write(
            &lock,
            format!(
                r#"{{"pid":{},"createdAt":"x","configPath":"c"}}"#,
                gateway.0.id()
            ),
        )
        .expect("write");
        assert!(live_gateway_at(&lock).is_some());
    }

    #[test]
    fn dead_pid_is_not_live() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lock = dir.path().join("gateway.lock");
        let mut child = Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        child.wait().expect("wait");
        fs::write(
            &lock,
            format!(r#"{{"pid":{pid},"createdAt":"x","configPath":"c","startTime":1}}"#),
        )
        .expect("write");
        assert_eq!(live_gateway_at(&lock), None);
    }

    #[test]
    fn gateway_argv_rule() {
        let yes = |a: &[&str]| {
            process::looks_like_gateway(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert!(yes(&["node", "/x/openclaw.mjs", "gateway"]));
        assert!(yes(&["openclaw", "gateway", "--port", "1"]));
        assert!(yes(&["/usr/bin/openclaw-gateway"]));
        assert!(yes(&["OpenClaw-Gateway.exe"]));
        assert!(!yes(&["openclaw", "agent"]));
        assert!(!yes(&["node", "/x/openclaw.mjs", "sessions"]));
        assert!(!yes(&["sleep", "gateway"]));
        assert!(!yes(&[]));
    }
}
