#!/usr/bin/env python3
"""Runs every benchmark under bench/ and writes one report.

    python3 bench/report.py                  # every bench, the report's sizes (about an hour)
    python3 bench/report.py --quick          # small sizes, one round: a smoke test (minutes)
    python3 bench/report.py --only list,signals
    python3 bench/report.py --collect        # rebuild the report from bench/out/results/
                                             # (benches without results there: bench/report.json)

Each bench script (run.py, cleanup.py, transcript.py, compact.py, signals.py, agent_db.py,
migrate.py) times
clawstate, the peer (openclaw@2026.7.1; the signal module of 2026.8.1) and a plain
baseline side by side, alternating rounds, medians, and leaves its rows in
bench/out/results/<bench>.json (schema in bench/harness.py). This script builds the
release binaries once, runs the scripts in turn, then writes:

  bench/REPORT.md    one Markdown table per bench, with the ratios and one line of notes
                     per row (a row's `note`, and its `run` when it was measured apart)
  bench/report.json  every row, with the machine's load before and after each bench
  bench/report.png   time against input size (log-log), ours and the peer's, for the
                     operations measured at several sizes (needs matplotlib:
                     `pip install matplotlib`; without it the PNG is skipped)

Generated data only (seeded generators in the scripts), under bench/out/ (ignored by git).
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = harness.ROOT
BENCH = ROOT / "bench"

# bench name -> (title, [argument lists for the full report], [arguments for --quick])
PLAN = {
    "list": ("`claw-sessions list` — session store listing",
             [["run.py", "--sizes", "10000,100000,1000000", "--rounds", "3", "--peer-max", "100000"]],
             [["run.py", "--sizes", "1000,10000", "--rounds", "1"]]),
    "cleanup": ("`claw-sessions cleanup` — store maintenance",
                [["cleanup.py", "--entries", "10000", "--rounds", "3"],
                 ["cleanup.py", "--entries", "100000", "--rounds", "2"]],
                [["cleanup.py", "--entries", "2000", "--rounds", "1"]]),
    "transcript": ("`claw-transcript` — history, tail, check",
                   [["transcript.py", "--sizes", "10,100,1000", "--rounds", "3"]],
                   [["transcript.py", "--sizes", "10", "--rounds", "1"]]),
    "compact": ("`claw-compact` — plan and run --rotate",
                [["compact.py", "--sizes", "10,100,1000", "--rounds", "3"]],
                [["compact.py", "--sizes", "10", "--rounds", "1"]]),
    "agent-db": ("Agent DB layout (2026.9.6) — `claw-sessions list` and `claw-transcript history` on the DB, the files layout as baseline",
                 [["agent_db.py", "--rounds", "3"]],
                 [["agent_db.py", "--sessions", "10000", "--events", "100000", "--rounds", "1", "--no-peer"]]),
    "signals": ("`claw-signals` — record, changes-since, prune",
                [["signals.py", "--rounds", "3", "--rows", "50000,1000000"]],
                [["signals.py", "--rounds", "1", "--events", "1000", "--rows", "20000"]]),
    "migrate": ("`claw-migrate import` — legacy files into the agent DBs, against 9.6's `doctor --session-sqlite import`",
                [["migrate.py", "--rounds", "1", "--no-build"]],
                [["migrate.py", "--sessions", "40", "--tool-output", "2000", "--no-peer", "--no-build"]]),
}


def run_bench(name, arg_lists):
    """Runs one bench script (each argument list in turn) and merges their rows."""
    merged = None
    for args in arg_lists:
        print(f"\n== {name}: python3 bench/{' '.join(args)}", flush=True)
        t0 = time.time()
        p = subprocess.run([sys.executable, str(BENCH / args[0]), *args[1:]], cwd=ROOT)
        print(f"== {name}: {time.time() - t0:.0f} s, exit {p.returncode}", flush=True)
        if p.returncode != 0:
            return False
        doc = json.loads((harness.RESULTS / f"{name}.json").read_text())
        if merged is None:
            merged = doc
        else:
            merged["rows"] += doc["rows"]
            merged["finished"] = doc["finished"]
            merged["machineAfter"] = doc["machineAfter"]
    path = harness.RESULTS / f"{name}.json"
    path.write_text(json.dumps(merged, indent=2) + "\n")
    return True


def fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    return f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def fmt_rss(kib):
    return "—" if kib is None else f"{kib / 1024:.0f} MiB" if kib >= 10 * 1024 else f"{kib / 1024:.1f} MiB"


def ratio(a, b):
    """a / b as "12×", or — when either is missing."""
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:.0f}×" if r >= 10 else f"{r:.1f}×" if r >= 1 else f"{r:.2f}×"


def one_line(text):
    """A note as one table cell: whitespace runs (newlines too) as one space, `|` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") if text else ""


def markdown(docs):
    """One table per bench, one line of notes per row; run histories stay in git."""
    out = ["# Benchmark report", "",
           "Generated by `python3 bench/report.py` (see bench/README.md); earlier runs are in "
           "this file's git history. Medians of the rounds given per row; clawstate, the peer "
           "and the baseline alternate round by round in one process tree, so load on the "
           "machine hits them alike and the ratios hold better than the absolute times. Peak "
           "RSS from GNU time (`%M`) of each process. \"peer ÷ ours\" above 1 means clawstate "
           "is faster; \"RSS ours ÷ peer\" below 1 means clawstate uses less memory. A peer "
           "time marked *in-process* was measured inside Node after import (the module's "
           "function alone, no process start); otherwise it is the whole `openclaw` command.", ""]
    for doc in docs:
        title = PLAN.get(doc["bench"], (doc["bench"],))[0]
        mb, ma = doc["machineBefore"], doc["machineAfter"]
        out += [f"## {title}", "",
                f"Run {doc['started']} → {doc['finished']} on {mb['cpus']} CPUs; load average "
                f"{mb['loadavg'][0]} before, {ma['loadavg'][0]} after"
                + (" (rows with their own run say so)." if any(r.get("run") for r in doc["rows"]) else ".")
                + (f" {one_line(doc['method'])}" if doc.get("method") else ""), "",
                "| operation | input | ours | RSS | peer | peer RSS | baseline | baseline time | peer ÷ ours | baseline ÷ ours | RSS ours ÷ peer | rounds | notes |",
                "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in doc["rows"]:
            o, p, b = r["ours"], r.get("peer"), r.get("baseline")
            peer_t = fmt_time(p["seconds"]) + (" *in-process*" if p.get("scope") == "in-process" else "") if p else "—"
            notes = "; ".join(one_line(n) for n in (r.get("run") and f"run {r['run']}", r.get("note")) if n)
            line = [r["operation"], r["input"], fmt_time(o["seconds"]), fmt_rss(o.get("maxRssKiB")),
                    peer_t, fmt_rss(p.get("maxRssKiB")) if p else "—",
                    f"`{b['tool']}`" if b else "—", fmt_time(b["seconds"]) if b else "—",
                    ratio(p["seconds"] if p else None, o["seconds"]),
                    ratio(b["seconds"] if b else None, o["seconds"]),
                    ratio(o.get("maxRssKiB"), p.get("maxRssKiB") if p else None),
                    str(r.get("rounds") or ""), notes]
            out.append("| " + " | ".join(line) + " |")
        out.append("")
    return "\n".join(out)


def plot(docs, path):
    """time against input size, log-log, one panel per bench; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install matplotlib): bench/report.png not written", file=sys.stderr)
        return False
    panels = []
    for doc in docs:
        ops = {}
        for r in doc["rows"]:
            ops.setdefault(r["operation"], []).append(r)
        ops = {k: sorted(v, key=lambda r: r["size"]) for k, v in ops.items() if len({r["size"] for r in v}) >= 2}
        if ops:
            panels.append((doc["bench"], ops))
    if not panels:
        return False
    cols = min(3, len(panels))
    rows_n = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.6 * cols, 4.6 * rows_n), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(panels):]:
        ax.axis("off")
    for ax, (bench, ops) in zip(flat, panels):
        for i, (op, rows) in enumerate(ops.items()):
            color = f"C{i}"
            xs = [r["size"] for r in rows]
            ax.plot(xs, [r["ours"]["seconds"] for r in rows], "o-", color=color, label=f"{op} (ours)")
            peer = [(r["size"], r["peer"]["seconds"]) for r in rows if r.get("peer")]
            if peer:
                ax.plot(*zip(*peer), "s--", color=color, alpha=0.7, label=f"{op} (peer)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(PLAN.get(bench, (bench,))[0].split(" — ")[0].strip("`"))
        ax.set_xlabel(rows[0]["sizeUnit"])
        ax.set_ylabel("seconds (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("clawstate (solid) vs openclaw (dashed): time against input size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one round")
    ap.add_argument("--only", help="comma-separated benches: " + ",".join(PLAN))
    ap.add_argument("--collect", action="store_true", help="only rebuild the report from bench/out/results/")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(PLAN)
    unknown = [n for n in names if n not in PLAN]
    if unknown:
        ap.error(f"unknown bench: {', '.join(unknown)}")
    failed = []
    if not a.collect:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bins"], cwd=ROOT, check=True)
        for name in names:
            title, full, quick = PLAN[name]
            if not run_bench(name, quick if a.quick else full):
                failed.append(name)
    # The results of this machine's runs; a bench never run here keeps its rows from the
    # committed bench/report.json (so --collect on a fresh clone regenerates the report).
    committed = {}
    if (BENCH / "report.json").exists():
        committed = {d["bench"]: d for d in json.loads((BENCH / "report.json").read_text())["benches"]}
    docs = []
    for name in PLAN:
        f = harness.RESULTS / f"{name}.json"
        if f.exists():
            docs.append(json.loads(f.read_text()))
        elif name in committed:
            docs.append(committed[name])
    (BENCH / "REPORT.md").write_text(markdown(docs))
    (BENCH / "report.json").write_text(json.dumps({"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                   "command": "python3 bench/report.py" + (" --quick" if a.quick else ""),
                                                   "benches": docs}, indent=2) + "\n")
    plot(docs, BENCH / "report.png")
    print(f"\nwrote bench/REPORT.md, bench/report.json{', bench/report.png' if (BENCH / 'report.png').exists() else ''}")
    if failed:
        sys.exit(f"benches that failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
