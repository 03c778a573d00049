//! Each binary's help says what that tool does, lists the global options under their
//! own heading, and cites no spec section numbers (§) in any command's help.

use std::process::Command;

/// Each binary and the first line its `-h` must print.
const TOOLS: [(&str, &str); 6] = [
    (
        "claw-sessions",
        "Read and maintain an OpenClaw session store offline.",
    ),
    (
        "claw-transcript",
        "Read, check, repair and append OpenClaw session transcripts offline.",
    ),
    (
        "claw-signals",
        "Read and write the signal log of an OpenClaw state database.",
    ),
    (
        "claw-watch",
        "Watcher cursors and stale-state notices of an OpenClaw state database.",
    ),
    (
        "claw-compact",
        "Compact OpenClaw session transcripts offline, as the gateway compacts them.",
    ),
    (
        "claw-migrate",
        "Move OpenClaw sessions between the legacy files and the agent database.",
    ),
];

fn help(bin: &str, args: &[&str]) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin(bin))
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "{bin} {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommand names listed under `Commands:` (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn short_help_says_what_each_tool_does() {
    let package = env!("CARGO_PKG_DESCRIPTION");
    for (bin, about) in TOOLS {
        let text = help(bin, &["-h"]);
        // clap drops the sentence's final period in the short help.
        assert_eq!(text.lines().next(), about.strip_suffix('.'), "{bin} -h");
        assert!(
            !text.contains(package),
            "{bin} -h prints the package description"
        );
        let long = help(bin, &["--help"]);
        assert!(long.starts_with(about), "{bin} --help");
        assert!(
            long.contains("Exit codes"),
            "{bin} --help documents exit codes"
        );
    }
}

#[test]
fn global_options_have_their_own_heading() {
    for (bin, _) in TOOLS {
        for args in [vec!["-h"], vec![]] {
            let text = if args.is_empty() {
                // A subcommand's help shows the (global) options under the same heading.
                let sub = subcommands(&help(bin, &["-h"]))[0].clone();
                help(bin, &[&sub, "-h"])
            } else {
                help(bin, &args)
            };
            let globals = text
                .split("\nGlobal options:\n")
                .nth(1)
                .unwrap_or_else(|| panic!("{bin} {args:?}: no `Global options:` heading"));
            let globals = globals.split("\n\n").next().unwrap();
            for opt in [
                "--state-dir",
                "--agent",
                "--store",
                "--config",
                "--now",
                "--json",
            ] {
                assert!(
                    globals.contains(opt),
                    "{bin}: {opt} not under Global options"
                );
            }
            let before = text.split("\nGlobal options:\n").next().unwrap();
            assert!(
                !before.contains("--state-dir"),
                "{bin}: --state-dir listed outside Global options"
            );
        }
    }
}

#[test]
fn no_help_text_cites_spec_sections() {
    for (bin, _) in TOOLS {
        // Every command and subcommand, breadth first.
        let mut queue: Vec<Vec<String>> = vec![vec![]];
        let mut seen = 0;
        while let Some(path) = queue.pop() {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            let text = help(bin, &args);
            assert!(
                !text.contains('§'),
                "{bin} {}: help cites a spec section: {}",
                path.join(" "),
                text.lines().find(|l| l.contains('§')).unwrap()
            );
            seen += 1;
            for sub in subcommands(&text) {
                let mut next = path.clone();
                next.push(sub);
                queue.push(next);
            }
        }
        assert!(seen > 3, "{bin}: only {seen} help texts walked");
    }
}
