//! Shared helpers for the integration and differential tests: temp state dirs, the
//! binaries, the peer (openclaw@2026.7.1) and a seeded generator.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// A command for one of our binaries with a clean, deterministic environment.
pub fn claw(bin: &str, home: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin(bin).expect("binary built");
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("TMPDIR", home.join("tmp"));
    std::fs::create_dir_all(home.join("tmp")).ok();
    c
}

/// A deterministic xorshift generator, so every generated case is reproducible.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    /// One element of a slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    /// A random v4-shaped UUID.
    pub fn uuid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            8 + (b >> 62),
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        )
    }
}

/// The peer's wrapper script, installed on first use; `None` (and a note on stderr)
/// when npm is not available or `CLAWSTATE_SKIP_PEER` is set.
pub fn peer() -> Option<PathBuf> {
    static PEER: OnceLock<Option<PathBuf>> = OnceLock::new();
    PEER.get_or_init(|| {
        if std::env::var_os("CLAWSTATE_SKIP_PEER").is_some() {
            eprintln!("differential tests skipped: CLAWSTATE_SKIP_PEER is set");
            return None;
        }
        if Command::new("npm").arg("--version").output().is_err() {
            eprintln!("differential tests skipped: npm not found");
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-peer");
        let out = Command::new("bash").arg(script).output().ok()?;
        if !out.status.success() {
            eprintln!(
                "differential tests skipped: peer install failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    })
    .clone()
}

/// Runs the peer with a private HOME and extra environment.
pub fn run_peer(peer: &Path, home: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut c = Command::new(peer);
    c.env("OPENCLAW_PEER_HOME", home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().expect("peer runs")
}

/// Parses stdout as JSON, with the text in the panic message when it is not.
pub fn json_of(out: &[u8]) -> Value {
    // As `JSON.parse` reads it (lone surrogates, out-of-range numbers).
    let text = String::from_utf8_lossy(out);
    clawstate::js::jsjson::parse_value(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Milliseconds since the epoch now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Clears `chattr +i` when dropped (an immutable file cannot be deleted, even by root).
pub struct Immutable(Vec<PathBuf>);

impl Immutable {
    /// Makes `paths` immutable (`chattr +i`); `None`, with a note, where it cannot.
    pub fn set(paths: &[&Path]) -> Option<Immutable> {
        for p in paths {
            let o = Command::new("chattr").arg("+i").arg(p).output().ok();
            if !o.as_ref().is_some_and(|o| o.status.success()) {
                eprintln!(
                    "skipped: chattr +i is not available here ({})",
                    o.map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
                        .unwrap_or_else(|| "no chattr".into())
                );
                return None;
            }
        }
        Some(Immutable(paths.iter().map(|p| p.to_path_buf()).collect()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = Command::new("chattr").arg("-i").arg(p).output();
        }
    }
}

/// Every file below `dir` with its bytes, by path relative to `dir` (to assert that a
/// command changed nothing).
pub fn file_tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("below dir").to_path_buf();
                out.insert(rel, std::fs::read(&p).expect("readable file"));
            }
        }
    }
    out
}
