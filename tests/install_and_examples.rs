//! `scripts/install PREFIX` installs binaries, man pages and completions where a shell
//! and `man` find them; the maintenance jobs of examples/cron and examples/systemd are
//! real command lines that run (on a copy of the demo state dir).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding the test build of the binaries.
fn bin_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("claw-sessions")
        .parent()
        .unwrap()
        .to_path_buf()
}

const BINARIES: [&str; 6] = [
    "claw-sessions",
    "claw-transcript",
    "claw-signals",
    "claw-watch",
    "claw-compact",
    "claw-migrate",
];

#[test]
fn install_puts_binaries_man_pages_and_completions_under_the_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let out = Command::new(root().join("scripts/install"))
        .arg(&prefix)
        .env("CLAWSTATE_BIN_DIR", bin_dir())
        .env_remove("DESTDIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for b in BINARIES {
        let bin = prefix.join("bin").join(b);
        let v = Command::new(&bin).arg("--version").output().unwrap();
        assert!(v.status.success(), "{b} --version");
        assert!(String::from_utf8_lossy(&v.stdout).starts_with(b));
        for f in [
            format!("share/man/man1/{b}.1"),
            format!("share/bash-completion/completions/{b}"),
            format!("share/zsh/site-functions/_{b}"),
            format!("share/fish/vendor_completions.d/{b}.fish"),
        ] {
            let installed = std::fs::read(prefix.join(&f)).unwrap_or_else(|_| panic!("{f}"));
            assert!(!installed.is_empty(), "{f} is empty");
        }
    }
    // Every committed page, subcommands included.
    let pages = std::fs::read_dir(root().join("man")).unwrap().count();
    let installed = std::fs::read_dir(prefix.join("share/man/man1"))
        .unwrap()
        .count();
    assert_eq!(installed, pages);
    assert!(prefix
        .join("share/man/man1/claw-sessions-cleanup.1")
        .is_file());
}

#[test]
fn install_honours_destdir() {
    let tmp = tempfile::tempdir().unwrap();
    let stage = tmp.path().join("stage");
    let out = Command::new(root().join("scripts/install"))
        .arg("/usr")
        .env("CLAWSTATE_BIN_DIR", bin_dir())
        .env("DESTDIR", &stage)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stage.join("usr/bin/claw-compact").is_file());
    assert!(stage
        .join("usr/share/man/man1/claw-compact-auto.1")
        .is_file());
}

/// The maintenance commands of an example file: the command column of a cron.d file,
/// the `ExecStart=` lines of a unit, with the binary's directory dropped.
fn example_commands(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("examples").join(file)).unwrap();
    let mut commands = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(exec) = line.strip_prefix("ExecStart=") {
            let exec = exec.replace("${CLAW_SUMMARIZER}", "\"$CLAW_SUMMARIZER\"");
            commands.push(exec.trim_start_matches("/usr/local/bin/").to_string());
        } else if !file.ends_with(".service") && !line.starts_with('#') && !line.contains('=') {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() > 6 {
                commands.push(fields[6..].join(" "));
            }
        }
    }
    commands
}

#[test]
fn the_example_jobs_are_the_maintenance_commands() {
    let want = [
        "claw-sessions --all-agents cleanup --enforce",
        "claw-compact auto --all --summarizer \"$CLAW_SUMMARIZER\"",
        "claw-signals prune",
    ];
    for file in [
        "cron/clawstate-maintenance",
        "systemd/clawstate-maintenance.service",
    ] {
        assert_eq!(example_commands(file), want, "{file}");
    }
    let timer =
        std::fs::read_to_string(root().join("examples/systemd/clawstate-maintenance.timer"))
            .unwrap();
    assert!(timer.contains("OnUnitActiveSec="));
    assert!(timer.contains("WantedBy=timers.target"));
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn the_example_jobs_run_on_a_state_dir() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join(".openclaw");
    copy_tree(&root().join("examples/demo"), &state);
    let summarizer = home.path().join("summarize");
    std::fs::write(
        &summarizer,
        "#!/bin/sh\ncat >/dev/null\necho 'The summary.'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&summarizer, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for cmd in example_commands("cron/clawstate-maintenance") {
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(&cmd)
            .env_clear()
            .env("HOME", home.path())
            .env("PATH", &path)
            .env("TZ", "UTC")
            .env("TMPDIR", home.path())
            .env("CLAW_SUMMARIZER", &summarizer)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The README's Quick start is two commands for a fresh machine: one line that builds all
/// five binaries and runs the demo, and the test command, which is what CI runs.
#[test]
fn the_quick_start_is_two_commands_and_ci_runs_the_second() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let quick = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|s| s.split("```sh\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("a sh block in the Quick start");
    let commands: Vec<&str> = quick
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(
        commands[0].starts_with("cargo build --release --bins && target/release/claw-sessions "),
        "{}",
        commands[0]
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let ci_command = ci
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap();
    assert_eq!(
        ci_command, commands[1],
        ".ci/run runs the README's test command"
    );
}
