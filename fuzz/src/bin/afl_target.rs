//! The AFL++ entry point: `afl-target TARGET`, built with
//! `cargo afl build --release --features afl` and run by `fuzz/run.sh`.

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(target) = clawstate_fuzz::targets::by_name(&name) else {
        eprintln!(
            "usage: afl-target TARGET (one of: {})",
            clawstate_fuzz::targets::TARGETS
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        std::process::exit(2);
    };
    let sb = clawstate_fuzz::sandbox::init();
    if !sb.confined {
        eprintln!("afl-target: Landlock unavailable; writes outside the sandbox are not caught");
    }
    afl::fuzz(true, |data| (target.run)(data));
}
