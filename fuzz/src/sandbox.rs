//! The per-process scratch directory every file-touching target works in, and the guard
//! that nothing is written outside it.
//!
//! The directory lives on tmpfs (`/dev/shm`) when there is one, so the library's fsyncs
//! cost nothing. `TMPDIR` (the store-lock directory), `HOME` and the working directory
//! all point inside it. Where the kernel has Landlock (Linux ≥ 5.13), the process is then
//! restricted so that creating, writing, truncating, renaming or removing anything outside
//! the directory fails with `EACCES`/`EXDEV`; the targets turn such an error into a panic
//! (a crash for the fuzzer). Without Landlock the targets still compare snapshots of the
//! directory, but a write to an absolute path elsewhere would go unnoticed: the driver
//! says so once on stderr.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The scratch directory of this process.
pub struct Sandbox {
    root: PathBuf,
    /// Whether Landlock confines writes to `root`.
    pub confined: bool,
}

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();

/// Sets up the sandbox (once): creates the directory, points `TMPDIR`, `HOME` and the
/// working directory into it and applies Landlock. Call before any thread starts.
pub fn init() -> &'static Sandbox {
    init_with(None)
}

/// [`init`], with one more directory the process may write to (the driver's artifacts).
pub fn init_with(also_writable: Option<&Path>) -> &'static Sandbox {
    SANDBOX.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() && writable("/dev/shm") {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let root = base.join(format!(
            "clawstate-fuzz-{}-{:08x}",
            std::process::id(),
            nonce
        ));
        std::fs::create_dir_all(root.join("tmp")).expect("create the sandbox");
        std::fs::create_dir_all(root.join("home")).expect("create the sandbox");
        let root = root.canonicalize().expect("sandbox path");
        std::env::set_var("TMPDIR", root.join("tmp"));
        std::env::set_var("HOME", root.join("home"));
        for k in [
            "OPENCLAW_STATE_DIR",
            "OPENCLAW_CONFIG_PATH",
            "OPENCLAW_HOME",
            "CLAWDBOT_STATE_DIR",
        ] {
            std::env::remove_var(k);
        }
        std::env::set_current_dir(&root).expect("enter the sandbox");
        let confined = if std::env::var_os("CLAWSTATE_FUZZ_NO_LANDLOCK").is_some() {
            false
        } else {
            landlock_confine(&root, also_writable)
        };
        Sandbox { root, confined }
    })
}

fn writable(dir: &str) -> bool {
    let c = std::ffi::CString::new(dir).unwrap();
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

impl Sandbox {
    /// The sandbox root (holds `tmp/`, `home/` and the per-input `w/`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A fresh, empty per-input work directory `root/w`.
    pub fn fresh(&self) -> PathBuf {
        let w = self.root.join("w");
        if w.exists() {
            std::fs::remove_dir_all(&w).expect("clear the work dir");
        }
        // Store locks of the previous input.
        let locks = self.root.join("tmp");
        if let Ok(rd) = std::fs::read_dir(&locks) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    let _ = std::fs::remove_dir_all(&p);
                } else {
                    let _ = std::fs::remove_file(&p);
                }
            }
        }
        std::fs::create_dir_all(&w).expect("create the work dir");
        w
    }

    /// Removes the whole sandbox (the replay driver calls it at exit; fuzzer children are
    /// killed and leave theirs, named by pid, for `fuzz/run.sh` to sweep).
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Panics when an error's text shows that Landlock refused an access: the library tried
/// to write outside the sandbox. As root inside the sandbox nothing else gives EACCES.
pub fn assert_not_denied(what: &str, err: &dyn std::fmt::Debug) {
    let text = format!("{err:?}");
    for needle in [
        "os error 13)",
        "os error 18)",
        "code: 13,",
        "code: 18,",
        "PermissionDenied",
        "CrossesDevices",
    ] {
        if text.contains(needle) {
            panic!("{what}: access outside the sandbox was refused by Landlock: {text}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Landlock, with raw system calls (no extra dependency).

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

const WRITE_FILE: u64 = 1 << 1;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13; // ABI 2
const TRUNCATE: u64 = 1 << 14; // ABI 3

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Restricts every write-like access to `root` (and `extra`) and below. Returns whether
/// it worked.
fn landlock_confine(root: &Path, extra: Option<&Path>) -> bool {
    unsafe {
        let abi = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        );
        if abi < 1 {
            return false;
        }
        let mut access = WRITE_FILE
            | REMOVE_DIR
            | REMOVE_FILE
            | MAKE_CHAR
            | MAKE_DIR
            | MAKE_REG
            | MAKE_SOCK
            | MAKE_FIFO
            | MAKE_BLOCK
            | MAKE_SYM;
        if abi >= 2 {
            access |= REFER;
        }
        if abi >= 3 {
            access |= TRUNCATE;
        }
        let attr = RulesetAttr {
            handled_access_fs: access,
        };
        let fd = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        );
        if fd < 0 {
            return false;
        }
        let fd = fd as i32;
        for dir in std::iter::once(root).chain(extra) {
            let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
            let dir = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if dir < 0 {
                libc::close(fd);
                return false;
            }
            let beneath = PathBeneathAttr {
                allowed_access: access,
                parent_fd: dir,
            };
            let ok = libc::syscall(
                libc::SYS_landlock_add_rule,
                fd,
                LANDLOCK_RULE_PATH_BENEATH,
                &beneath as *const PathBeneathAttr,
                0u32,
            ) == 0;
            libc::close(dir);
            if !ok {
                libc::close(fd);
                return false;
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            libc::close(fd);
            return false;
        }
        let ok = libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) == 0;
        libc::close(fd);
        ok
    }
}

/// A recursive listing of `dir`: relative path → content (directories as `None`).
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    fn walk(
        base: &Path,
        dir: &Path,
        out: &mut std::collections::BTreeMap<String, Option<Vec<u8>>>,
    ) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(base)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            match e.file_type() {
                Ok(t) if t.is_dir() => {
                    out.insert(rel, None);
                    walk(base, &p, out);
                }
                _ => {
                    out.insert(rel, Some(std::fs::read(&p).unwrap_or_default()));
                }
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}
