#!/usr/bin/env python3
"""Benchmarks `claw-sessions cleanup` against the peer's `openclaw sessions cleanup`.

A seeded generator writes one sessions directory: a store with N entries (default 100k;
~70 % fresh, ~25 % older than pruneAfter, ~5 % model-run probes a day old) and one
transcript per entry, plus orphans, archives and temps. Both programs then run
`cleanup --dry-run --json` on it and `cleanup --enforce --json` on fresh twin copies
(copied before each run, not timed), alternating, several rounds. Prints medians of wall
time and peak RSS (from wait4) and the ratios, as a Markdown table.

    python3 bench/cleanup.py [--entries 100000] [--rounds 3] [--no-peer] [--keep]

Targets (issue: cleanup): at least 50x faster than the peer, peak RSS below the peer's.
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, time, uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "cleanup"
DAY = 86_400_000
HOUR = 3_600_000


def gen(sessions: Path, n: int, seed: int = 1) -> None:
    """Writes the pristine sessions directory."""
    rnd = random.Random(seed)
    now = int(time.time() * 1000)
    sessions.mkdir(parents=True, exist_ok=True)
    chans = ["telegram", "discord", "slack", "whatsapp", "signal"]
    header = '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    message = '{"type":"message","id":"m%d","message":{"role":"user","content":"hello %d"}}\n'
    with open(sessions / "sessions.json", "w") as f:
        f.write("{")
        for i in range(n):
            ch = rnd.choice(chans)
            r = rnd.random()
            sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
            if r < 0.05:
                key = f"agent:main:explicit:model-run-{sid}"
                age = DAY + rnd.randint(HOUR, 20 * HOUR)
            elif r < 0.35:
                key = f"agent:main:{ch}:group:{rnd.getrandbits(40)}"
                age = rnd.randint(0, 60 * DAY)
            elif r < 0.7:
                key = f"agent:main:{ch}:direct:{rnd.getrandbits(40)}"
                age = rnd.randint(0, 40 * DAY)
            elif r < 0.85:
                key = f"agent:main:cron:job{i}:run:{rnd.getrandbits(32):x}"
                age = rnd.randint(0, 40 * DAY)
            else:
                key = f"agent:main:subagent:{uuid.UUID(int=rnd.getrandbits(128), version=4)}"
                age = rnd.randint(0, 40 * DAY)
            path = sessions / f"{sid}.jsonl"
            e = {
                "sessionId": sid,
                "updatedAt": now - age,
                "sessionFile": str(path),
                "chatType": "group" if ":group:" in key else "direct",
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
            body = header % sid + "".join(message % (k, k) for k in range(rnd.randint(1, 4)))
            path.write_text(body)
            t = (now - age) / 1000
            os.utime(path, (t, t))
        f.write("\n}")
    for i in range(2000):
        kind = i % 4
        if kind == 0:
            p = sessions / f"orphan-{i}.jsonl"
        elif kind == 1:
            p = sessions / f"x{i}.jsonl.deleted.2020-01-01T00-00-00.000Z"
        elif kind == 2:
            p = sessions / f"x{i}.jsonl.reset.2026-01-01T00-00-00.000Z"
        else:
            p = sessions / f"orph-{i}.trajectory.jsonl"
        p.write_text(header % f"orphan-{i}")
        t = (now - rnd.randint(31 * DAY, 90 * DAY)) / 1000
        os.utime(p, (t, t))


def copy_tree(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)


def run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # Drain stdout while waiting (the JSON is small).
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{err}")
    return dt, ru.ru_maxrss, out


def peer_wrapper():
    try:
        out = subprocess.run(["bash", str(ROOT / "scripts/install-peer")], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except Exception as e:  # noqa: BLE001
        print(f"peer unavailable: {e}", file=sys.stderr)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the generated data")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-sessions"], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ours = str(target / "release/claw-sessions")
    peer = None if a.no_peer else peer_wrapper()
    home = OUT / "home"
    state = OUT / "state"
    # The gateway writes absolute sessionFile paths: generate in the work directory, keep
    # a pristine copy, and restore it before every run.
    pristine = OUT / f"pristine-{a.entries}"
    work = OUT / f"work-{a.entries}"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    # maxEntries above the live count so capping is evaluated but the store stays large.
    (state / "openclaw.json").write_text(json.dumps({"session": {"maintenance": {"pruneAfter": "30d", "maxEntries": a.entries}}}))
    if not (pristine / "sessions.json").exists():
        print(f"generating {a.entries} entries and transcripts in {work} …", file=sys.stderr)
        if work.exists():
            shutil.rmtree(work)
        gen(work, a.entries)
        copy_tree(work, pristine)
    files = sum(1 for _ in pristine.iterdir())
    mb = (pristine / "sessions.json").stat().st_size / 1e6
    env = dict(os.environ, NO_COLOR="1", OPENCLAW_STATE_DIR=str(state), TMPDIR=str(home / "tmp"))
    peer_env = dict(env, OPENCLAW_PEER_HOME=str(home))
    store = str(work / "sessions.json")
    tools = {
        "clawstate cleanup --dry-run": ("dry", [ours, "--store", store, "cleanup", "--dry-run", "--json"], env),
        "clawstate cleanup --enforce": ("apply", [ours, "--store", store, "cleanup", "--enforce", "--json"], env),
    }
    if peer:
        tools["peer sessions cleanup --dry-run"] = ("dry", [peer, "sessions", "cleanup", "--store", store, "--dry-run", "--json"], peer_env)
        tools["peer sessions cleanup --enforce"] = ("apply", [peer, "sessions", "cleanup", "--store", store, "--enforce", "--json"], peer_env)
    samples = {k: [] for k in tools}
    summaries = {}
    for _ in range(a.rounds):
        copy_tree(pristine, work)
        for k, (kind, cmd, e) in tools.items():
            if kind == "apply":
                copy_tree(pristine, work)
            t, rss, out = run(cmd, e)
            samples[k].append((t, rss))
            summaries[k] = json.loads(out)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}
    print(f"\n### cleanup: {a.entries} entries ({mb:.1f} MB store), {files} files, median of {a.rounds}\n")
    print("| command | time (s) | peak RSS (MiB) |")
    print("| --- | ---: | ---: |")
    for k, (t, r) in med.items():
        print(f"| {k} | {t:.3f} | {r/1024:.1f} |")
    s = summaries["clawstate cleanup --enforce"]
    print(f"\nenforce removed: pruned {s['pruned']}, model-run {s['modelRunPruned']}, capped {s['capped']}, "
          f"artifacts {s['unreferencedArtifacts']['removedFiles']}; {s['appliedCount']} entries left")
    if peer:
        for kind in ["dry-run", "enforce"]:
            o_t, o_r = med[f"clawstate cleanup --{kind}"]
            p_t, p_r = med[f"peer sessions cleanup --{kind}"]
            print(f"{kind}: peer/clawstate time {p_t/o_t:.1f}x, RSS clawstate/peer {o_r/p_r:.2f}")
        for kind in ["dry-run", "enforce"]:
            ours_s = dict(summaries[f"clawstate cleanup --{kind}"])
            theirs = dict(summaries[f"peer sessions cleanup --{kind}"])
            same = json.dumps(ours_s) == json.dumps(theirs)
            print(f"{kind}: same JSON summary as the peer: {same}")
    (OUT / "cleanup.json").write_text(json.dumps({"entries": a.entries, "files": files, "median": {k: {"seconds": t, "maxRssKiB": r} for k, (t, r) in med.items()}}, indent=2))
    if not a.keep:
        shutil.rmtree(pristine, ignore_errors=True)


if __name__ == "__main__":
    main()
