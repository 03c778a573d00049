//! The committed man pages (`man/`, one per binary and one per subcommand) and shell
//! completions (`completions/`, bash, zsh and fish) are generated from the clap
//! definitions; these tests fail when they drift. Regenerate with `scripts/gen-man`
//! (or `CLAWSTATE_REGENERATE=1 cargo test --test man_pages`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const BINARIES: [&str; 6] = [
    "claw-sessions",
    "claw-transcript",
    "claw-signals",
    "claw-watch",
    "claw-compact",
    "claw-migrate",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs every binary with `flag DIR` and returns the files it wrote, by name.
fn generate(flag: &str) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    for name in BINARIES {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin(name))
            .arg(flag)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name} {flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{name} {flag} printed to stdout");
    }
    read_dir(dir.path())
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for e in entries {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        files.insert(name, std::fs::read_to_string(e.path()).unwrap());
    }
    files
}

/// Compares the generated files with the committed directory; with
/// `CLAWSTATE_REGENERATE=1`, writes them there instead (removing stale ones).
fn check_committed(subdir: &str, generated: &BTreeMap<String, String>) {
    let dir: PathBuf = root().join(subdir);
    if std::env::var_os("CLAWSTATE_REGENERATE").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).unwrap();
        for stale in read_dir(&dir)
            .keys()
            .filter(|k| !generated.contains_key(*k))
        {
            std::fs::remove_file(dir.join(stale)).unwrap();
        }
        for (name, text) in generated {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let committed = read_dir(&dir);
    let missing: Vec<_> = generated
        .keys()
        .filter(|k| !committed.contains_key(*k))
        .collect();
    let stale: Vec<_> = committed
        .keys()
        .filter(|k| !generated.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "{subdir}/ is out of date (run scripts/gen-man): missing {missing:?}, no longer generated {stale:?}"
    );
    for (name, text) in generated {
        assert_eq!(
            &committed[name], text,
            "{subdir}/{name} is stale: run scripts/gen-man"
        );
    }
}

#[test]
fn man_pages_match_the_clap_definitions() {
    let pages = generate("--generate-man");
    for name in BINARIES {
        let page = &pages[&format!("{name}.1")];
        assert!(
            page.contains("Exit codes"),
            "{name}: the man page must document exit codes"
        );
        // `--man-page` prints the same top-level page.
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin(name))
            .arg("--man-page")
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(
            &String::from_utf8(out.stdout).unwrap(),
            page,
            "{name} --man-page"
        );
    }
    check_committed("man", &pages);
}

#[test]
fn every_man_page_a_page_refers_to_exists() {
    let pages = generate("--generate-man");
    for (file, text) in &pages {
        // clap_mangen writes a reference as `\fBclaw\-sessions\-cleanup\fR(1)`.
        for reference in text.split("\\fB").skip(1) {
            let Some((name, rest)) = reference.split_once("\\fR") else {
                continue;
            };
            if !rest.starts_with("(1)") || !name.starts_with("claw\\-") {
                continue;
            }
            let page = format!("{}.1", name.replace("\\-", "-"));
            assert!(
                pages.contains_key(&page),
                "{file} refers to {page}, which is not generated"
            );
        }
    }
    for sub in [
        "claw-sessions-cleanup.1",
        "claw-sessions-patch.1",
        "claw-transcript-check.1",
        "claw-transcript-lock-break.1",
        "claw-signals-prune.1",
        "claw-watch-list.1",
        "claw-compact-auto.1",
    ] {
        assert!(pages.contains_key(sub), "{sub} is not generated");
    }
}

#[test]
fn shell_completions_match_the_clap_definitions() {
    let scripts = generate("--generate-completions");
    for name in BINARIES {
        for file in [
            format!("{name}.bash"),
            format!("_{name}"),
            format!("{name}.fish"),
        ] {
            let text = scripts
                .get(&file)
                .unwrap_or_else(|| panic!("{file} not generated"));
            assert!(
                text.contains("state-dir"),
                "{file} completes no --state-dir"
            );
        }
    }
    assert!(scripts["claw-sessions.bash"].contains("cleanup"));
    assert!(scripts["claw-compact.fish"].contains("auto"));
    check_committed("completions", &scripts);
}
