#!/usr/bin/env python3
"""Benchmarks clawstate against the peer (openclaw@2026.7.1) and a plain baseline.

Run side by side in one process tree, alternating, several rounds; prints medians of wall
time and peak RSS (from wait4) and the ratios, as a Markdown table. Generated data only,
from a seeded generator, under bench/out/ (ignored by git).

    python3 bench/run.py [--sizes 10000,100000] [--rounds 3] [--no-peer] [--peer-max N]

Sizes of a million entries or more run one round (the peer takes minutes each). Rows also
go to bench/out/results/list.json for bench/report.py.

Targets (issue: foundation): at 100k entries (~43 MB), `list --json` at least 50x faster
than the peer, faster than `jq -c .`, and a peak RSS below jq's.
"""
import argparse, json, os, random, statistics, subprocess, sys, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"

def gen_store(path: Path, n: int, seed: int = 1) -> None:
    rnd = random.Random(seed)
    now = int(time.time() * 1000)
    chans = ["telegram", "discord", "slack", "whatsapp", "signal"]
    with open(path, "w") as f:
        f.write("{")
        for i in range(n):
            ch = rnd.choice(chans)
            kind = rnd.random()
            if kind < 0.4:
                key = f"agent:main:{ch}:group:{rnd.getrandbits(40)}"
            elif kind < 0.7:
                key = f"agent:main:{ch}:direct:{rnd.getrandbits(40)}"
            elif kind < 0.85:
                key = f"agent:main:cron:job{i}:run:{rnd.getrandbits(32):x}"
            else:
                key = f"agent:main:subagent:{uuid.UUID(int=rnd.getrandbits(128), version=4)}"
            sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
            e = {
                "sessionId": sid,
                "updatedAt": now - rnd.randint(0, 60 * 86400000),
                "sessionFile": f"/home/u/.openclaw/agents/main/sessions/{sid}.jsonl",
                "chatType": "group" if "group" in key else "direct",
                "channel": ch,
                "lastChannel": ch,
                "lastTo": f"{ch}:{rnd.getrandbits(40)}",
                "deliveryContext": {"channel": ch, "to": f"{ch}:{rnd.getrandbits(40)}"},
                "thinkingLevel": rnd.choice(["low", "medium", "high"]),
                "inputTokens": rnd.randint(0, 200000),
                "outputTokens": rnd.randint(0, 50000),
                "totalTokens": rnd.randint(0, 250000),
                "totalTokensFresh": True,
                "model": "claude-sonnet-4",
                "modelProvider": "anthropic",
                "systemSent": True,
            }
            f.write(("," if i else "") + "\n  " + json.dumps(key) + ": " + json.dumps(e, indent=2).replace("\n", "\n  "))
        f.write("\n}")

def run(cmd, env=None):
    return harness.measure(cmd, env=env)  # seconds, KiB

def peer_wrapper():
    try:
        out = subprocess.run(["bash", str(ROOT / "scripts/install-peer")], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except Exception as e:  # noqa: BLE001
        print(f"peer unavailable: {e}", file=sys.stderr)
        return None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--peer-max", type=int, default=None, help="largest store the peer runs on")
    a = ap.parse_args()
    results_doc = harness.Results("list")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-sessions"], cwd=ROOT, check=True)
    ours = str(ROOT / "target/release/claw-sessions")
    peer = None if a.no_peer else peer_wrapper()
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, NO_COLOR="1")
    results = []
    for n in [int(s) for s in a.sizes.split(",")]:
        store = OUT / f"store-{n}" / "sessions.json"
        store.parent.mkdir(parents=True, exist_ok=True)
        if not store.exists():
            gen_store(store, n)
        mb = store.stat().st_size / 1e6
        tools = {
            "clawstate list --json": [ours, "--store", str(store), "list", "--json"],
            "clawstate list --json --limit all": [ours, "--store", str(store), "list", "--json", "--limit", "all"],
            "jq -c .": ["jq", "-c", ".", str(store)],
            "python3 json.load": [sys.executable, "-c", "import json,sys; json.load(open(sys.argv[1]))", str(store)],
        }
        with_peer = peer and (a.peer_max is None or n <= a.peer_max)
        rounds = 1 if n >= 1_000_000 else a.rounds
        if with_peer:
            tools["peer sessions --json"] = [peer, "sessions", "--store", str(store), "--json"]
            tools["peer sessions --json --limit all"] = [peer, "sessions", "--store", str(store), "--json", "--limit", "all"]
        samples = {k: [] for k in tools}
        for _ in range(rounds):
            for k, cmd in tools.items():
                samples[k].append(run(cmd, env))
        med = {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}
        results.append({"entries": n, "megabytes": round(mb, 1), "median": {k: {"seconds": t, "maxRssKiB": r} for k, (t, r) in med.items()}})
        label = f"{n:,} entries ({mb:.1f} MB)"
        for op, ours_k, peer_k in (("list --json", "clawstate list --json", "peer sessions --json"),
                                   ("list --json --limit all", "clawstate list --json --limit all", "peer sessions --json --limit all")):
            t, r = med[ours_k]
            results_doc.add(op, label, n, "entries", harness.side("claw-sessions " + op, t, r),
                            peer=harness.side("openclaw sessions --json" + op[11:], *med[peer_k], scope="process") if peer_k in med else None,
                            baseline=harness.side("jq -c .", *med["jq -c ."]), rounds=rounds)
        print(f"\n### {n} entries ({mb:.1f} MB), median of {rounds}\n")
        print("| command | time (s) | peak RSS (MiB) | time vs clawstate |")
        print("| --- | ---: | ---: | ---: |")
        base = med["clawstate list --json"][0]
        for k, (t, r) in med.items():
            print(f"| {k} | {t:.3f} | {r/1024:.1f} | {t/base:.1f}x |")
        jq_t, jq_r = med["jq -c ."]
        o_t, o_r = med["clawstate list --json"]
        line = f"\nratios: jq/clawstate time {jq_t/o_t:.2f}x, RSS clawstate/jq {o_r/jq_r:.2f}"
        if with_peer:
            p_t, p_r = med["peer sessions --json"]
            line += f", peer/clawstate time {p_t/o_t:.1f}x, RSS clawstate/peer {o_r/p_r:.2f}"
        print(line)
    (OUT / "list.json").write_text(json.dumps(results, indent=2))
    results_doc.write()

if __name__ == "__main__":
    main()
