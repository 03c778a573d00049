#!/usr/bin/env python3
"""Importing a legacy (2026.7) state dir into the agent DBs: `claw-migrate import` against
openclaw 2026.9.6's `doctor --session-sqlite import --session-sqlite-all-agents`, on copies
of the same dir.

  python3 bench/migrate.py                              # 1,500 sessions, ~1 GB, 1 round
  python3 bench/migrate.py --sessions 200 --tool-output 20000 --no-peer

Generates the dir with the tests' generator (tests/migrate_support: two agents, tool calls,
compactions, branches, `\\u00e9` escapes, a big image, torn tails, sidecars, orphans, reset
and deleted archives) under bench/out/migrate/, copies it (`cp -a`, mtimes kept) before
every run, and times each import as a whole process (claw-migrate's release build; 9.6's
doctor including Node's start), wall clock and CPU seconds (user + system, from GNU time or
wait4): the machine is often shared, so the CPU time says what the work costs and the wall
time what it took under that load (the load average is in the row's note). The canonical dumps of both results are compared by the
differential test (tests/migrate_import.rs), not here; here only the session counts are
checked equal.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "migrate"


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def sessions_in(home):
    n = 0
    for agent in ("main", "work"):
        db = home / ".openclaw/agents" / agent / "agent/openclaw-agent.sqlite"
        c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        n += c.execute("select count(*) from session_nodes").fetchone()[0]
        c.close()
    return n


def timed(cmd, env):
    """Runs `cmd` once; returns (wall seconds, CPU seconds user + system, peak RSS KiB)."""
    cmd = [str(c) for c in cmd]
    out = OUT / f".time-{os.getpid()}"
    if harness.GNU_TIME:
        cmd = [harness.GNU_TIME, "-f", "%M %U %S", "-o", str(out), *cmd]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err.decode(errors='replace')[:800]}")
    rss, cpu = ru.ru_maxrss, ru.ru_utime + ru.ru_stime
    if harness.GNU_TIME:
        try:
            m, u, s = out.read_text().split()[-3:]
            rss, cpu = int(m), float(u) + float(s)
        except (OSError, ValueError):
            pass
        out.unlink(missing_ok=True)
    return wall, cpu, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1500, help="sessions in all (two agents)")
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--tool-output", type=int, default=100000, help="bytes of tool output per result, at most")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-migrate"], cwd=ROOT, check=True)
    legacy = OUT / f"s{a.sessions}-t{a.turns}-o{a.tool_output}"
    if not (legacy / ".openclaw/openclaw.json").is_file():
        shutil.rmtree(legacy, ignore_errors=True)
        env = dict(os.environ, CLAWSTATE_GEN_HOME=str(legacy), CLAWSTATE_GEN_SESSIONS=str(a.sessions // 2),
                   CLAWSTATE_GEN_TURNS=str(a.turns), CLAWSTATE_GEN_TOOL_OUTPUT=str(a.tool_output))
        subprocess.run(["cargo", "test", "--quiet", "--test", "migrate_import", "generate", "--", "--ignored"],
                       cwd=ROOT, env=env, check=True)
    size = du(legacy / ".openclaw/agents")
    print(f"legacy dir: {a.sessions:,} sessions, {size / 1e6:,.0f} MB of transcripts; load {os.getloadavg()[0]:.1f}")
    ours_bin = ROOT / "target/release/claw-migrate"
    peer = None if a.no_peer else harness.peer_wrapper("2026.9.6")
    work = OUT / "run"

    def fresh():
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["cp", "-a", str(legacy), str(work)], check=True)

    cmds = {"claw-migrate": ([ours_bin, "import", "--all-agents"], dict(os.environ, HOME=str(work), TZ="UTC"))}
    if peer:
        cmds["9.6 doctor"] = ([peer, "doctor", "--session-sqlite", "import", "--session-sqlite-all-agents", "--json"],
                              dict(os.environ, OPENCLAW_PEER_HOME=str(work), TZ="UTC", NO_COLOR="1"))
    res = harness.Results("migrate")
    samples = {k: [] for k in cmds}
    counts = {}
    loads = []
    for _ in range(a.rounds):
        for name, (cmd, env) in cmds.items():
            fresh()
            # The copy's dirty pages are written back first, so neither tool pays for them.
            os.sync()
            loads.append(os.getloadavg()[0])
            samples[name].append(timed(cmd, env))
            counts[name] = sessions_in(work)
            wall, cpu, rss = samples[name][-1]
            print(f"  {name}: {wall:.1f} s wall, {cpu:.1f} s CPU, {rss / 1024:.0f} MiB peak, "
                  f"{counts[name]} sessions; load {loads[-1]:.1f}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    if len(set(counts.values())) > 1:
        sys.exit(f"session counts differ: {counts}")
    med = {k: tuple(sorted(s[i] for s in v)[len(v) // 2] for i in range(3)) for k, v in samples.items()}
    label = f"{a.sessions:,} sessions, {size / 1e9:.2f} GB"
    ours, p = med["claw-migrate"], med.get("9.6 doctor")
    mine = harness.side("claw-migrate", ours[0], ours[2])
    mine["cpuSeconds"] = round(ours[1], 2)
    peer_side = None
    note = f"CPU (user+sys) ours {ours[1]:.1f} s"
    if p:
        peer_side = harness.side("openclaw 2026.9.6 doctor", p[0], p[2], scope="process")
        peer_side["cpuSeconds"] = round(p[1], 2)
        note += f", doctor {p[1]:.1f} s (CPU doctor ÷ ours {p[1] / ours[1]:.1f}×)"
    note += (f"; load average {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs at the starts; "
             "the tools alternate, each on a fresh `cp -a` of the dir (synced first)")
    res.add("import --all-agents", label, size, "bytes", mine, peer=peer_side, rounds=a.rounds, note=note)
    res.write()
    print("\n| input | ours wall (s) | ours CPU (s) | doctor wall (s) | doctor CPU (s) | doctor ÷ ours (wall) | our peak RSS (MiB) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    if p:
        print(f"| {label} | {ours[0]:.1f} | {ours[1]:.1f} | {p[0]:.1f} | {p[1]:.1f} | {p[0] / ours[0]:.1f}x | {ours[2] / 1024:.0f} |")
    else:
        print(f"| {label} | {ours[0]:.1f} | {ours[1]:.1f} | | | | {ours[2] / 1024:.0f} |")


if __name__ == "__main__":
    main()
