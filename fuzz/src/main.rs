//! `clawstate-fuzz`: the stable (no AFL++) driver of the fuzz targets.
//!
//! ```text
//! clawstate-fuzz list
//! clawstate-fuzz check-sandbox                    show that a write outside the sandbox is refused
//! clawstate-fuzz replay TARGET PATH...            run files (or every file of directories) once
//! clawstate-fuzz run TARGET [--seconds N] [--corpus DIR] [--seed S]
//!                                                 mutate the corpus for N seconds (no coverage feedback)
//! ```
//!
//! Every input runs under `catch_unwind` and a watchdog (`CLAWSTATE_FUZZ_TIMEOUT_MS`,
//! default 5000): a panic or a hang is reported with the input, which `run` saves under
//! `fuzz/artifacts/TARGET/`. Exit status 1 when any input failed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clawstate_fuzz::targets::{by_name, Target, TARGETS};

fn usage() -> ! {
    eprintln!("usage: clawstate-fuzz list | check-sandbox | replay TARGET PATH... | run TARGET [--seconds N] [--corpus DIR] [--seed S]");
    std::process::exit(2);
}

fn target(name: Option<&String>) -> &'static Target {
    let name = name.unwrap_or_else(|| usage());
    by_name(name).unwrap_or_else(|| {
        eprintln!("unknown target {name:?}; `clawstate-fuzz list` shows them");
        std::process::exit(2)
    })
}

fn files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_file())
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            out.extend(v);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// The watchdog: aborts the process when one input runs past the timeout, after saving
/// the input (when `save` is set) and saying which one it was.
struct Watchdog {
    started: Arc<AtomicU64>,
    current: Arc<Mutex<(String, Vec<u8>)>>,
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Watchdog {
    fn start(save: Option<PathBuf>) -> Watchdog {
        let timeout: u64 = std::env::var("CLAWSTATE_FUZZ_TIMEOUT_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5000);
        let started = Arc::new(AtomicU64::new(0));
        let current = Arc::new(Mutex::new((String::new(), Vec::new())));
        let (s, c) = (started.clone(), current.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let t = s.load(Ordering::SeqCst);
            if t != 0 && epoch_ms().saturating_sub(t) > timeout {
                let (name, data) = c.lock().map(|g| g.clone()).unwrap_or_default();
                let mut msg = format!("HANG: input {name} ran longer than {timeout} ms");
                if let Some(dir) = &save {
                    let p = dir.join(format!("hang-{:016x}", hash(&data)));
                    let _ = std::fs::create_dir_all(dir);
                    match std::fs::write(&p, &data) {
                        Ok(()) => msg.push_str(&format!(" (saved as {})", p.display())),
                        Err(e) => msg.push_str(&format!(" (cannot save it: {e})")),
                    }
                }
                eprintln!("{msg}");
                std::process::abort();
            }
        });
        Watchdog { started, current }
    }

    /// Runs one input; `Err` carries the panic message.
    fn run(&self, t: &Target, name: &str, data: &[u8]) -> Result<(), String> {
        if let Ok(mut g) = self.current.lock() {
            *g = (name.to_string(), data.to_vec());
        }
        self.started.store(epoch_ms(), Ordering::SeqCst);
        let r = std::panic::catch_unwind(|| (t.run)(data));
        self.started.store(0, Ordering::SeqCst);
        r.map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into())
        })
    }
}

fn hash(data: &[u8]) -> u64 {
    // FNV-1a: stable names for saved inputs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn quiet_panics() {
    // Panics are reported by the driver; keep the default hook's backtrace only on request.
    if std::env::var_os("CLAWSTATE_FUZZ_VERBOSE").is_none() {
        std::panic::set_hook(Box::new(|info| {
            let loc = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("  panic at {loc}");
        }));
    }
}

fn replay(t: &Target, paths: &[PathBuf]) -> i32 {
    let inputs = files(paths);
    let wd = Watchdog::start(None);
    quiet_panics();
    let mut failed = 0;
    let started = Instant::now();
    for p in &inputs {
        let data = std::fs::read(p).unwrap_or_else(|e| {
            eprintln!("{}: {e}", p.display());
            std::process::exit(1)
        });
        if let Err(msg) = wd.run(t, &p.display().to_string(), &data) {
            failed += 1;
            eprintln!("FAIL {}: {msg}", p.display());
        }
    }
    println!(
        "{}: {} inputs, {} failed, {:.1}s",
        t.name,
        inputs.len(),
        failed,
        started.elapsed().as_secs_f64()
    );
    i32::from(failed > 0)
}

/// A small xorshift generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"\n",
    b"\r\n",
    b"\\u0000",
    b"\\ud800",
    b"\\udbff\\udfff",
    b"\\udbfd\\udfff",
    b"\xf4\x8f\xbf\xbf",
    b"\xf4\x8f\x9f\xbf",
    b"1e999",
    b"-1e999",
    b"1e-999",
    b"null",
    b"true",
    b"1e308",
    b"-0",
    b"0.5",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xe2\x80\xa8",
    b"\xc2\xa0",
    b"agent:",
    b"main",
    b":thread:",
    b"matrix:channel:",
    b"signal:group:",
    b"sessionId",
    b"updatedAt",
    b"parentId",
    b"\"type\":\"message\"",
    b"\"type\":\"session\"",
    b"\"leaf\"",
    b"targetId",
    b"skillsSnapshot",
    b"promptRef",
    b"lastThreadId",
    b"deliveryContext",
    b"ms",
    b"kb",
    b"h",
    b"1.5",
    b"\x00",
    b"Infinity",
    b"NaN",
    b"//",
    b"/*",
    b"'",
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = rng.next() as u8;
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                input.drain(i..i + n);
            }
            3 => {
                let tok = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len + 1);
                input.splice(i..i, tok.iter().copied());
            }
            4 if len > 0 => {
                // Duplicate a slice.
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                let s: Vec<u8> = input[i..i + n].to_vec();
                let j = rng.below(len + 1);
                input.splice(j..j, s);
            }
            5 if !other.is_empty() => {
                // Splice with another corpus input.
                let i = rng.below(len + 1);
                let j = rng.below(other.len());
                let n = 1 + rng.below((other.len() - j).min(256));
                input.splice(i..i, other[j..j + n].iter().copied());
            }
            6 if len > 1 => {
                input.truncate(rng.below(len));
            }
            _ => {
                let i = rng.below(len + 1);
                const BYTES: &[u8] = b"\x00\n\"\\ :,{}[]";
                input.insert(i, BYTES[rng.below(BYTES.len())]);
            }
        }
    }
    input.truncate(64 * 1024);
}

fn run(t: &Target, seconds: u64, corpus: &Path, seed: u64) -> i32 {
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("artifacts")
        .join(t.name);
    let mut pool: Vec<Vec<u8>> = files(&[corpus.to_path_buf()])
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let wd = Watchdog::start(Some(artifacts.clone()));
    quiet_panics();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut execs, mut crashes) = (0u64, 0u64);
    let mut seen = std::collections::HashSet::new();
    while Instant::now() < deadline {
        let mut input = pool[rng.below(pool.len())].clone();
        let other = pool[rng.below(pool.len())].clone();
        mutate(&mut rng, &mut input, &other);
        execs += 1;
        if let Err(msg) = wd.run(t, "mutated input", &input) {
            let key = msg.lines().next().unwrap_or("").to_string();
            if seen.insert(key) {
                crashes += 1;
                let _ = std::fs::create_dir_all(&artifacts);
                let p = artifacts.join(format!("crash-{:016x}", hash(&input)));
                if let Err(e) = std::fs::write(&p, &input) {
                    eprintln!("cannot save {}: {e}", p.display());
                }
                eprintln!("CRASH ({}): {msg}", p.display());
            }
        } else if pool.len() < 4096 && rng.below(64) == 0 {
            // Keep some mutants: without coverage feedback, variety is all we have.
            pool.push(input);
        }
    }
    println!(
        "{}: {execs} executions in {seconds}s ({:.0}/s), {crashes} distinct failures",
        t.name,
        execs as f64 / seconds.max(1) as f64
    );
    i32::from(crashes > 0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Paths on the command line are relative to where we were started (the sandbox
    // becomes the working directory).
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    // `run` saves failing inputs here: the one directory outside the sandbox it may write.
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    let _ = std::fs::create_dir_all(&artifacts);
    let sb = clawstate_fuzz::sandbox::init_with(Some(&artifacts));
    if !sb.confined {
        eprintln!(
            "clawstate-fuzz: Landlock unavailable; writes outside the sandbox are not caught"
        );
    }
    let code = match args.first().map(String::as_str) {
        Some("check-sandbox") => {
            // A write outside the sandbox must fail (Landlock), one inside must work.
            let outside = sb
                .root()
                .parent()
                .unwrap_or(Path::new("/tmp"))
                .join(format!("clawstate-fuzz-escape-{}", std::process::id()));
            let escaped = std::fs::write(&outside, b"x").is_ok();
            if escaped {
                let _ = std::fs::remove_file(&outside);
            }
            let inside = std::fs::write(sb.fresh().join("probe"), b"x").is_ok();
            println!(
                "sandbox {}: write inside {}, write to {} {}",
                sb.root().display(),
                if inside { "ok" } else { "FAILED" },
                outside.display(),
                if escaped { "NOT refused" } else { "refused" }
            );
            i32::from(escaped || !inside)
        }
        Some("list") => {
            for t in TARGETS {
                println!("{:<12} {}", t.name, t.about);
            }
            0
        }
        Some("replay") => {
            let t = target(args.get(1));
            let paths: Vec<PathBuf> = if args.len() > 2 {
                args[2..].iter().map(|a| cwd.join(a)).collect()
            } else {
                vec![Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("corpus")
                    .join(t.name)]
            };
            replay(t, &paths)
        }
        Some("run") => {
            let t = target(args.get(1));
            let mut seconds = 60;
            let mut corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("corpus")
                .join(t.name);
            let mut seed = epoch_ms();
            let mut i = 2;
            while i < args.len() {
                let v = args.get(i + 1).cloned().unwrap_or_else(|| usage());
                match args[i].as_str() {
                    "--seconds" => seconds = v.parse().unwrap_or_else(|_| usage()),
                    "--corpus" => corpus = cwd.join(v),
                    "--seed" => seed = v.parse().unwrap_or_else(|_| usage()),
                    _ => usage(),
                }
                i += 2;
            }
            run(t, seconds, &corpus, seed)
        }
        _ => usage(),
    };
    sb.remove();
    std::process::exit(code);
}
