#!/usr/bin/env python3
"""Benchmarks claw-compact on large generated transcripts against the peer's own compaction
functions (openclaw@2026.7.1) on the same files, and against a raw read of the file.

    python3 bench/compact.py [--sizes 10,100,1000] [--rounds 3] [--no-peer] [--keep]

Sizes are in MB. For each size it times, as whole commands, `plan --keep-recent-tokens 20000`
(scan, tree, cut point) and `run --rotate --keep-tail --summary-file F` (scan, plan, successor
written and fsync'd, store updated; the input is restored between rounds), with peak RSS from
/usr/bin/time; `cat` and `wc -l` of the same file as the raw read baseline. The peer side runs
inside Node after import, one process per round: `SessionManager.open` + `getBranch` +
`prepareCompaction` (plan), then `appendCompaction` on a copy +
`rotateTranscriptFileAfterCompaction` (rotate); its peak RSS is the Node process's. Rounds
alternate ours / baseline / peer; medians of wall time; a Markdown table on stdout (ratios:
peer time / ours, ours / `cat`). Uses the seeded generator of bench/transcript.py; data lives
under bench/out/compact/ and is deleted afterwards unless --keep.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transcript import gen, NODE, DIST  # noqa: E402
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "compact"
BIN = ROOT / "target" / "release" / "claw-compact"

PEER = r"""
const [D, file] = [process.argv[2], process.argv[3]];
const fs = await import("node:fs");
const sm = (await import(D + "/session-manager-BKz2VYho.js")).t;
const proxy = await import(D + "/proxy-BzhBz8iM.js");
const rot = (await import(D + "/attempt.model-diagnostic-events-Dg8sP6iR.js")).N;
const out = {};
let t = performance.now();
try {
  const m = sm.open(file);
  const prep = proxy.j(m.getBranch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }).value;
  if (!prep) throw new Error("prepareCompaction returned nothing (" + m.getEntries().length + " entries loaded)");
  out.planMs = performance.now() - t;
  const copy = file + ".peer.jsonl";
  fs.copyFileSync(file, copy);
  t = performance.now();
  const m2 = sm.open(copy);
  m2.appendCompaction("SUMMARY", prep.firstKeptEntryId, prep.tokensBefore, { readFiles: [], modifiedFiles: [] }, false);
  const res = await rot({ sessionFile: copy });
  out.rotateMs = performance.now() - t;
  fs.rmSync(copy);
  if (res.sessionFile) fs.rmSync(res.sessionFile);
} catch (e) {
  out.error = String(e.message).slice(0, 100);
  out.failedAfterMs = performance.now() - t;
  try { fs.rmSync(file + ".peer.jsonl"); } catch {}
}
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


def plain(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def peer_round(src, home):
    OUT.mkdir(parents=True, exist_ok=True)
    script = OUT / "peer_compact.mjs"
    script.write_text(PEER)
    p = subprocess.run([str(NODE), "--max-old-space-size=16000", str(script), str(DIST), str(src)],
                       capture_output=True, text=True, env={**os.environ, "HOME": str(home)})
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:100]}


def ms(x):
    return f"{x * 1000:,.0f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not BIN.exists():
        sys.exit("build first: cargo build --release --bin claw-compact")
    use_peer = not a.no_peer and NODE.exists()
    results = harness.Results("compact")
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
        plain(["cat", str(src)])  # warm the page cache
        plan_t, rot_t, plan_rss, rot_rss, cat_t, wc_t = [], [], [], [], [], []
        peer_plan, peer_rot, peer_rss, peer_err = [], [], [], None
        for r in range(a.rounds):
            for p in sessions.iterdir():
                p.unlink()
            os.link(src, file)
            (sessions / "sessions.json").write_text(store)
            t, rss = timed([str(BIN)] + env_args + ["plan", "main", "--keep-recent-tokens", "20000"])
            plan_t.append(t); plan_rss.append(rss)
            t, rss = timed([str(BIN)] + env_args + ["run", "main", "--rotate", "--keep-tail", "--summary-file", str(summary)])
            rot_t.append(t); rot_rss.append(rss)
            cat_t.append(plain(["cat", str(src)]))
            wc_t.append(plain(["wc", "-l", str(src)]))
            if use_peer and peer_err is None:
                res = peer_round(src, d)
                peer_rss.append(res.get("rssMb", 0))
                if "error" in res:
                    peer_err = res  # it fails the same way every round
                else:
                    peer_plan.append(res["planMs"] / 1000); peer_rot.append(res["rotateMs"] / 1000)
        size = src.stat().st_size / 1e6
        med = statistics.median
        rows.append(dict(size=size, plan=med(plan_t), rot=med(rot_t), plan_rss=max(plan_rss), rot_rss=max(rot_rss),
                         cat=med(cat_t), wc=med(wc_t), peer_plan=med(peer_plan) if peer_plan else None,
                         peer_rot=med(peer_rot) if peer_rot else None, peer_rss=max(peer_rss) if peer_rss else None,
                         peer_err=peer_err))
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    for x in rows:
        label = f"{x['size']:,.0f} MB"
        size_b = int(x["size"] * 1e6)
        note = None
        if x["peer_err"]:
            e = x["peer_err"]
            after = f" after {e['failedAfterMs'] / 1000:.1f} s" if "failedAfterMs" in e else ""
            note = f"the peer fails{after}: {e['error']} (peak RSS {x['peer_rss']:,.0f} MB)"
        for op, t, rss, pt, tool in (("plan --keep-recent-tokens 20000", x["plan"], x["plan_rss"], x["peer_plan"], "SessionManager.open + prepareCompaction"),
                                     ("run --rotate --keep-tail --summary-file", x["rot"], x["rot_rss"], x["peer_rot"], "appendCompaction + rotateTranscriptFileAfterCompaction")):
            results.add(op, label, size_b, "bytes", harness.side("claw-compact " + op.split()[0], t, rss * 1024),
                        peer=harness.side(tool, pt, x["peer_rss"] * 1024 if x["peer_rss"] else None, scope="in-process") if pt is not None else None,
                        baseline=harness.side("cat", x["cat"]), rounds=a.rounds, note=note)
    results.write()
    print("| transcript | claw-compact plan | run --rotate | peak RSS (plan / run) | peer plan (open + prepareCompaction) | peer rotate (append + rotate) | peer RSS | `cat` | `wc -l` | peer / ours (plan, rotate) | ours / `cat` (plan, rotate) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for x in rows:
        if x["peer_err"]:
            e = x["peer_err"]
            after = f" after {e['failedAfterMs'] / 1000:.1f} s" if "failedAfterMs" in e else ""
            pp, pr, ratio = f"fails{after}: {e['error']}", "—", "—"
        elif x["peer_plan"] is not None:
            pp, pr = ms(x["peer_plan"]), ms(x["peer_rot"])
            ratio = f"{x['peer_plan'] / x['plan']:.1f}×, {x['peer_rot'] / x['rot']:.1f}×"
        else:
            pp = pr = ratio = "—"
        prs = f"{x['peer_rss']:,.0f} MB" if x["peer_rss"] else "—"
        print(f"| {x['size']:,.0f} MB | {ms(x['plan'])} | {ms(x['rot'])} | {x['plan_rss']:,.0f} / {x['rot_rss']:,.0f} MB | {pp} | {pr} | {prs} "
              f"| {ms(x['cat'])} | {ms(x['wc'])} | {ratio} | {x['plan'] / x['cat']:.1f}×, {x['rot'] / x['cat']:.1f}× |")


if __name__ == "__main__":
    main()
