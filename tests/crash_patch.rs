//! Crash test: `claw-sessions patch` killed with SIGKILL at random instants never leaves
//! a torn or partial `sessions.json` — only the old store or the new one.

mod support;

use std::time::Duration;

use serde_json::{json, Map, Value};
use support::Rng;

#[test]
fn sigkill_during_patch_never_tears_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    let dir = tmp.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("sessions.json");
    let mut m = Map::new();
    for i in 0..3000 {
        m.insert(
            format!("agent:main:telegram:group:{i}"),
            json!({"sessionId": format!("s{i}"), "updatedAt": 1_700_000_000_000i64 + i, "label": "x".repeat(200)}),
        );
    }
    m.insert(
        "agent:main:main".into(),
        json!({"sessionId": "main", "updatedAt": 1, "label": "0"}),
    );
    std::fs::write(
        &store,
        serde_json::to_string_pretty(&Value::Object(m)).unwrap(),
    )
    .unwrap();

    let bin = assert_cmd::cargo::cargo_bin("claw-sessions");
    let mut rng = Rng::new(7);
    let mut label = 0u64;
    let (mut kills, mut completed) = (0, 0);
    while kills < 220 {
        let next = label + 1;
        let mut child = std::process::Command::new(&bin)
            .env_clear()
            .env("HOME", &home)
            .env("TMPDIR", home.join("tmp"))
            .arg("--store")
            .arg(&store)
            .args(["patch", "main", "--set", &format!("label=\"{next}\"")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(40_000)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            completed += 1;
        } else {
            kills += 1;
        }
        let text = std::fs::read_to_string(&store).unwrap();
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("torn store after kill {kills}: {e}"));
        assert_eq!(v.as_object().unwrap().len(), 3001, "entries lost");
        let got: u64 = v["agent:main:main"]["label"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            got == label || got == next,
            "store holds label {got}, expected {label} or {next}"
        );
        label = got;
    }
    // Killed writers may leave temp files, never anything else; the store stays 0600-or-original.
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "sessions.json"
                || (name.starts_with("sessions.json.") && name.ends_with(".tmp")),
            "unexpected file {name}"
        );
    }
    eprintln!("crash test: {kills} kills, {completed} completed writes, final label {label}");
}
