//! The committed man pages are generated from the clap definitions; this fails when they
//! drift (run `scripts/gen-man` to regenerate).

#[test]
fn man_pages_match_the_clap_definitions() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for b in ["sessions", "transcript", "signals", "watch", "compact"] {
        let name = format!("claw-{b}");
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin(&name))
            .arg("--man-page")
            .output()
            .unwrap();
        assert!(out.status.success());
        let generated = String::from_utf8(out.stdout).unwrap();
        assert!(
            generated.contains("Exit codes"),
            "{name}: the man page must document exit codes"
        );
        let committed = std::fs::read_to_string(root.join("man").join(format!("{name}.1")))
            .unwrap_or_else(|_| panic!("man/{name}.1 is missing: run scripts/gen-man"));
        assert_eq!(
            committed, generated,
            "man/{name}.1 is stale: run scripts/gen-man"
        );
    }
}
