#!/usr/bin/env python3
"""The 2026.8+ layout: clawstate on an agent DB against the same data as files, and
openclaw@2026.9.6 on its own DB.

  python3 bench/agent_db.py                 # 100k sessions, a 1M-event session, 3 rounds
  python3 bench/agent_db.py --sessions 10000 --events 100000 --rounds 1 --no-peer

Generates (examples/gen_agent_db.rs, from the 9.6-imported test fixture's schema) one state
dir with an agent DB of N sessions and one session of M events, and the same as a 2026.7
files layout, under bench/out/agent-db/. Times `claw-sessions list --json` (default limit
and `--limit all`) on both layouts and `openclaw sessions --json` of 9.6 on the DB, and
`claw-transcript history --limit 50 --json` / `tail -n 50` of the big session on both
layouts (9.6 serves history only through a running gateway's chat.history: no row).
The two layouts' outputs are checked equal before timing (ageMs aside).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "agent-db"


def template_db():
    t = ROOT / "target" / "tmp"
    for d in sorted(t.glob("agent-db-fixture-v*"), reverse=True):
        p = d / ".openclaw/agents/main/agent/openclaw-agent.sqlite"
        if p.is_file():
            return p
    # Build it: the fixture test imports a legacy dir with 9.6.
    subprocess.run(["cargo", "test", "--test", "agent_db_cli", "fixture_is"], cwd=ROOT, check=True)
    return template_db()


def strip_age(text):
    v = json.loads(text)
    for r in v.get("sessions", []):
        r.pop("ageMs", None)
    v.pop("path", None)
    v.pop("stores", None)
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="use the release binaries as they are")
    a = ap.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-sessions", "--bin", "claw-transcript",
                        "--example", "gen_agent_db"], cwd=ROOT, check=True)
    rel = ROOT / "target" / "release"
    data = OUT / f"s{a.sessions}-e{a.events}"
    if not (data / "db/.openclaw/agents/main/agent/openclaw-agent.sqlite").is_file():
        subprocess.run([rel / "examples" / "gen_agent_db", template_db(), data, str(a.sessions), str(a.events)], check=True)
    db_home, files_home = data / "db", data / "files"
    env_db = dict(os.environ, HOME=str(db_home), NO_COLOR="1", TZ="UTC")
    env_files = dict(os.environ, HOME=str(files_home), NO_COLOR="1", TZ="UTC")
    sessions, transcript = str(rel / "claw-sessions"), str(rel / "claw-transcript")
    peer = None if a.no_peer else harness.peer_wrapper("2026.9.6")

    # Same output on both layouts (the DB rows are 9.6's: visibility, default model; the
    # files rows are 7.1's), so compare what both have.
    def out(cmd, env):
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    h_db = out([transcript, "--json", "history", "--limit", "50", "agent:main:main"], env_db)
    h_files = out([transcript, "--json", "history", "--limit", "50", "agent:main:main"], env_files)
    # The DB side is 9.6's projection (transcript positions, pendingInputs, tool blocks
    # beside text): the same messages, by id and seq.
    def ids(text):
        return [(m.get("__openclaw", {}).get("id"), m.get("__openclaw", {}).get("seq"))
                for m in json.loads(text)["messages"]]
    assert ids(h_db) == ids(h_files), "history differs between layouts"
    t_db = out([transcript, "tail", "-n", "50", "agent:main:main"], env_db)
    assert t_db == out([transcript, "tail", "-n", "50", "agent:main:main"], env_files), "tail differs"
    l_db = strip_age(out([sessions, "--json", "list"], env_db))
    l_files = strip_age(out([sessions, "--json", "list"], env_files))
    assert [r["key"] for r in l_db["sessions"]] == [r["key"] for r in l_files["sessions"]], "list order differs"

    res = harness.Results("agent-db")
    label_list = f"{a.sessions:,} sessions"
    label_hist = f"{a.events:,} events"
    cmds = {
        "db list": ([sessions, "--json", "list"], env_db),
        "files list": ([sessions, "--json", "list"], env_files),
        "db list all": ([sessions, "--json", "list", "--limit", "all"], env_db),
        "files list all": ([sessions, "--json", "list", "--limit", "all"], env_files),
        "db history": ([transcript, "--json", "history", "--limit", "50", "agent:main:main"], env_db),
        "files history": ([transcript, "--json", "history", "--limit", "50", "agent:main:main"], env_files),
        "db tail": ([transcript, "tail", "-n", "50", "agent:main:main"], env_db),
        "files tail": ([transcript, "tail", "-n", "50", "agent:main:main"], env_files),
    }
    if peer:
        penv = dict(os.environ, OPENCLAW_PEER_HOME=str(db_home), NO_COLOR="1", TZ="UTC")
        cmds["9.6 list"] = ([peer, "sessions", "--json"], penv)
        cmds["9.6 list all"] = ([peer, "sessions", "--json", "--limit", "all"], penv)
    samples = {k: [] for k in cmds}
    for _ in range(a.rounds):
        for k, (cmd, env) in cmds.items():
            samples[k].append(harness.measure(cmd, env=env))
    med = {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}
    notes = {
        "list": "baseline: the same sessions as a 2026.7 files layout (issue 25: DB within 2×, baseline ÷ ours ≥ 0.5); peer: `openclaw sessions --json` on the DB",
        "list all": "as above; peer: `openclaw sessions --json --limit all`",
        "history": "key agent:main:main; 9.6 serves history only through a live gateway (`sessions_history` → `chat.history`): no peer row",
        "tail": "key agent:main:main; no 9.6 CLI for a tail",
    }
    for op, key, label, size, unit in (
        ("list --json", "list", label_list, a.sessions, "sessions"),
        ("list --json --limit all", "list all", label_list, a.sessions, "sessions"),
        ("history --limit 50 --json", "history", label_hist, a.events, "events"),
        ("tail -n 50", "tail", label_hist, a.events, "events"),
    ):
        p = med.get("9.6 " + key)
        res.add(op + " (agent DB)", label, size, unit, harness.side("claw (DB)", *med["db " + key]),
                peer=harness.side("openclaw 2026.9.6", *p, scope="process") if p else None,
                baseline=harness.side("claw (files)", *med["files " + key]), rounds=a.rounds,
                note=notes[key])
    path = res.write()
    print(f"\n### agent DB: {label_list}, one session of {label_hist}; median of {a.rounds}; load {os.getloadavg()[0]:.1f}\n")
    print("| operation | DB (s) | files (s) | DB / files | 9.6 on the DB (s) | 9.6 / DB | DB peak RSS (MiB) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for op, key in (("list --json", "list"), ("list --json --limit all", "list all"),
                    ("history --limit 50 --json", "history"), ("tail -n 50", "tail")):
        d, f = med["db " + key], med["files " + key]
        p = med.get("9.6 " + key)
        print(f"| {op} | {d[0]:.3f} | {f[0]:.3f} | {d[0] / f[0]:.2f} | "
              f"{'%.2f' % p[0] if p else '—'} | {'%.0f×' % (p[0] / d[0]) if p else '—'} | {d[1] / 1024:.0f} |")
    print(f"\nrows: {path}")


if __name__ == "__main__":
    main()
