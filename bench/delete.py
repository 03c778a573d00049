#!/usr/bin/env python3
"""Benchmarks `claw-sessions delete --stdin` of a batch of keys against a plain lower bound.

A seeded store (bench/run.py's generator) under bench/out/, a seeded batch of its keys,
the store restored before every run (untimed), saved once first as the gateway leaves a
store (normalised). The lower bound loads the store with
Python's json, deletes the keys and writes it back indented (no lock, no fsync, no
transcripts). No transcripts exist, so the time is the store's: lookup, removal, the
shared-sessionId check and one atomic write. The peer has no batch delete to compare.

    python3 bench/delete.py [--entries 100000] [--keys 10000] [--rounds 3]

Target (issue 28): 10k keys from a 100k-entry store in under 1 s.
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"

LOWER_BOUND = """
import json, sys
p = sys.argv[1]
keys = sys.stdin.read().split()
with open(p) as f:
    s = json.load(f)
for k in keys:
    s.pop(k, None)
with open(p + ".tmp", "w") as f:
    json.dump(s, f, indent=2)
import os
os.replace(p + ".tmp", p)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-sessions"], cwd=ROOT, check=True)
    ours = str(ROOT / "target/release/claw-sessions")
    master = OUT / f"store-{a.entries}" / "sessions.json"
    master.parent.mkdir(parents=True, exist_ok=True)
    if not master.exists():
        run.gen_store(master, a.entries)
    # The store as the gateway leaves it (normalised on save): a one-field patch saves it
    # whole. The generator's entries are not normalised, which a real store's are.
    saved = OUT / "delete" / "master" / "sessions.json"
    if not saved.exists():
        saved.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(master, saved)
        first = next(iter(json.loads(master.read_text())))
        subprocess.run([ours, "--store", str(saved), "patch", first, "--set", "label=bench"],
                       check=True, stdout=subprocess.DEVNULL)
    master = saved
    keys = list(json.loads(master.read_text()).keys())
    random.Random(7).shuffle(keys)
    batch = ("\n".join(keys[: a.keys]) + "\n").encode()
    work = OUT / "delete" / "agents" / "main" / "sessions"
    work.mkdir(parents=True, exist_ok=True)
    store = work / "sessions.json"
    env = dict(os.environ, NO_COLOR="1")
    tools = {
        "ours": [ours, "--store", str(store), "delete", "--stdin", "--json"],
        "python3 json load/del/dump": [sys.executable, "-c", LOWER_BOUND, str(store)],
    }
    samples = {k: [] for k in tools}
    for _ in range(a.rounds):
        for k, cmd in tools.items():
            shutil.copyfile(master, store)
            samples[k].append(harness.measure(cmd, env=env, stdin=batch))
            left = len(json.loads(store.read_text()))
            assert left == a.entries - a.keys, (k, left)
    med = {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}
    mb = master.stat().st_size / 1e6
    label = f"{a.entries:,} entries ({mb:.1f} MB), {a.keys:,} keys"
    doc = harness.Results("delete")
    doc.add("delete --stdin --json", label, a.entries, "entries", harness.side("claw-sessions delete --stdin", *med["ours"]),
            baseline=harness.side("python3 json load/del/dump", *med["python3 json load/del/dump"]), rounds=a.rounds)
    doc.write()
    print(f"\n### delete --stdin, {label}, median of {a.rounds}\n")
    print("| command | time (s) | peak RSS (MiB) |")
    print("| --- | ---: | ---: |")
    for k, (t, r) in med.items():
        print(f"| {k} | {t:.3f} | {r/1024:.1f} |")


if __name__ == "__main__":
    main()
