//! `agent_db/` sits below `signals/` (docs/architecture.md): none of its files reaches up
//! into the signal modules (the change waiter both followers use lives in
//! `fs::change_waiter`). tests/module_layers.rs checks cycles; this checks the climb.

use std::path::Path;

#[test]
fn agent_db_imports_nothing_of_signals() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("lib/src/agent_db");
    let mut climbs = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("agent_db dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("crate::signals") {
                climbs.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        climbs.is_empty(),
        "agent_db climbs into signals:\n{}",
        climbs.join("\n")
    );
}
