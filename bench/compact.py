#!/usr/bin/env python3
"""Benchmarks claw-compact on large generated transcripts against the peer's own compaction
functions (openclaw@2026.7.1) on the same files.

    python3 bench/compact.py [--sizes 10,100,1000] [--rounds 3] [--no-peer] [--keep]

Sizes are in MB. For each size it times, as whole commands, `plan --keep-recent-tokens 20000`
(scan, tree, cut point) and `run --rotate --keep-tail --summary-file F` (scan, plan, successor
written and fsync'd, store updated; the input is restored between rounds), and peak RSS. The
peer side runs inside Node after import: `SessionManager.open` + `getBranch` +
`prepareCompaction` (plan), then `appendCompaction` on a copy + `rotateTranscriptFileAfterCompaction`
(rotate). Medians of wall time; a Markdown table on stdout. Uses the generator of
bench/transcript.py; data lives under bench/out/compact/ and is deleted afterwards unless --keep.
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transcript import gen, NODE, DIST  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "compact"
BIN = ROOT / "target" / "release" / "claw-compact"

PEER = r"""
const [D, file, rounds] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const fs = await import("node:fs");
const sm = (await import(D + "/session-manager-BKz2VYho.js")).t;
const proxy = await import(D + "/proxy-BzhBz8iM.js");
const rot = (await import(D + "/attempt.model-diagnostic-events-Dg8sP6iR.js")).N;
const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const out = {};
try {
  const plan = [], rotate = [];
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    const m = sm.open(file);
    const prep = proxy.j(m.getBranch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }).value;
    plan.push(performance.now() - t);
    const copy = file + ".peer.jsonl";
    fs.copyFileSync(file, copy);
    t = performance.now();
    const m2 = sm.open(copy);
    m2.appendCompaction("SUMMARY", prep.firstKeptEntryId, prep.tokensBefore, { readFiles: [], modifiedFiles: [] }, false);
    const res = await rot({ sessionFile: copy });
    rotate.push(performance.now() - t);
    fs.rmSync(copy);
    if (res.sessionFile) fs.rmSync(res.sessionFile);
  }
  out.planMs = med(plan); out.rotateMs = med(rotate);
} catch (e) { out.error = String(e.message).slice(0, 80); }
out.rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify(out));
"""


def timed(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{cmd} failed: {p.stderr.decode()[-500:]}")
    rss_kb = int(p.stderr.decode().strip().splitlines()[-1])
    return dt, rss_kb / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not BIN.exists():
        sys.exit("build first: cargo build --release --bin claw-compact")
    rows = []
    for mb in [int(s) for s in a.sizes.split(",")]:
        d = OUT / f"{mb}mb"
        sessions = d / "state" / "agents" / "main" / "sessions"
        shutil.rmtree(d, ignore_errors=True)
        sessions.mkdir(parents=True)
        src = d / "source.jsonl"
        gen(src, mb)
        sid = json.loads(src.open().readline())["id"]
        file = sessions / f"{sid}.jsonl"
        summary = d / "summary.txt"
        summary.write_text("## Decisions\nBenchmark summary.\n")
        store = json.dumps({"agent:main:main": {"sessionId": sid, "updatedAt": 1, "sessionFile": file.name}}, indent=2)
        env_args = ["--state-dir", str(d / "state")]
        plan_t, rot_t, plan_rss, rot_rss = [], [], [], []
        for _ in range(a.rounds):
            for p in sessions.iterdir():
                p.unlink()
            os.link(src, file)
            (sessions / "sessions.json").write_text(store)
            t, rss = timed([str(BIN)] + env_args + ["plan", "main", "--keep-recent-tokens", "20000"])
            plan_t.append(t); plan_rss.append(rss)
            t, rss = timed([str(BIN)] + env_args + ["run", "main", "--rotate", "--keep-tail", "--summary-file", str(summary)])
            rot_t.append(t); rot_rss.append(rss)
        peer = {}
        if not a.no_peer and NODE.exists():
            OUT.mkdir(parents=True, exist_ok=True)
            (OUT / "peer_compact.mjs").write_text(PEER)
            p = subprocess.run([str(NODE), "--max-old-space-size=16000", str(OUT / "peer_compact.mjs"), str(DIST), str(src), str(a.rounds)], capture_output=True, text=True, env={**os.environ, "HOME": str(d)})
            try:
                peer = json.loads(p.stdout.strip().splitlines()[-1])
            except Exception:
                peer = {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:80]}
        size = src.stat().st_size / 1e6
        rows.append((size, statistics.median(plan_t), max(plan_rss), statistics.median(rot_t), max(rot_rss), peer))
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    print("| transcript | claw-compact plan | run --rotate | peak RSS (plan / run) | peer plan (open + prepareCompaction) | peer rotate (append + rotate) | peer RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size, pt, prss, rt, rrss, peer in rows:
        if "error" in peer:
            pp = pr = f"fails: {peer['error']}"
        elif peer:
            pp, pr = f"{peer['planMs']:.0f} ms", f"{peer['rotateMs']:.0f} ms"
        else:
            pp = pr = "—"
        prs = f"{peer.get('rssMb', '—')} MB" if peer else "—"
        print(f"| {size:.0f} MB | {pt*1000:.0f} ms | {rt*1000:.0f} ms | {prss:.0f} / {rrss:.0f} MB | {pp} | {pr} | {prs} |")


if __name__ == "__main__":
    main()
