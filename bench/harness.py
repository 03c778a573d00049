"""Shared measurement pieces for the benchmarks under bench/.

Every bench script times commands the same way (wall clock around the child, peak RSS
from wait4), alternates the tools round by round so that a noisy machine hurts them
alike, takes medians, and records its rows in one schema under bench/out/results/, which
bench/report.py turns into bench/REPORT.md, bench/report.json and bench/report.png.

A row:
    {"bench", "operation", "input", "size", "sizeUnit",
     "ours":     {"tool", "seconds", "maxRssKiB"},
     "peer":     {"tool", "seconds", "maxRssKiB", "scope"} | null,
     "baseline": {"tool", "seconds", "maxRssKiB"} | null,
     "rounds", "note", "run"?}
`note` is one line (the report gives each row one line of notes; run histories belong in
git, not in the note); `run` names a row measured apart from its bench's run (time,
commit). A bench document may carry a one-line `method`. `seconds` is always the time of the whole operation (lower is better); `scope` says
whether the peer's time is a whole process ("process") or measured inside Node after
import ("in-process"). `maxRssKiB` is null where it was not measured.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "out" / "results"


class CommandFailed(SystemExit):
    """A timed command exited with a status the caller did not accept."""


# Linux carries the peak RSS of the process that called exec into the new program's
# ru_maxrss, so a child spawned straight from Python never reports less than Python's own
# ~15 MiB. GNU time forks from a ~2 MiB process and reports its child's peak, so small
# peaks are measured too; without it, peaks below the harness's own RSS read as that.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measure(cmd, env=None, cwd=None, ok=(0,), stdin=None):
    """Runs `cmd` once; returns (seconds, peak RSS in KiB) of the child."""
    cmd = [str(c) for c in cmd]
    rss_file = None
    if GNU_TIME:
        rss_file = RESULTS.parent / f".rss-{os.getpid()}"
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        cmd = [GNU_TIME, "-f", "%M", "-o", str(rss_file), *cmd]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    if stdin is not None:
        p.stdin.write(stdin)
        p.stdin.close()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise CommandFailed(f"failed ({code}): {' '.join(cmd)}\n{err.decode(errors='replace')[:800]}")
    rss = ru.ru_maxrss
    if rss_file:
        try:
            rss = int(rss_file.read_text().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            pass
    return dt, rss


def alternate(commands, rounds, env=None, before=None, ok=(0,)):
    """Times each named command `rounds` times, alternating; returns {name: (median s, median KiB)}.

    `before(name)`, when given, runs untimed before each measurement (e.g. to restore a twin
    copy that the previous run modified)."""
    samples = {k: [] for k in commands}
    for _ in range(rounds):
        for name, cmd in commands.items():
            if before:
                before(name)
            samples[name].append(measure(cmd, env=env, ok=ok))
    return {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}


def side(tool, seconds, rss_kib=None, scope=None):
    """One side of a row (ours, the peer's or the baseline's)."""
    d = {"tool": tool, "seconds": seconds, "maxRssKiB": rss_kib}
    if scope:
        d["scope"] = scope
    return d


def peer_wrapper(version=None):
    """The peer wrapper installed by scripts/install-peer (None when it cannot be installed)."""
    env = dict(os.environ)
    args = ["bash", str(ROOT / "scripts" / "install-peer")]
    if version:
        env["OPENCLAW_PEER_VERSION"] = version
        args.append(str(Path.home() / ".cache" / f"openclaw-peer-{version}"))
    try:
        out = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
        return out.stdout.strip().splitlines()[-1]
    except Exception as e:  # noqa: BLE001
        print(f"peer unavailable: {e}", file=sys.stderr)
        return None


def machine():
    """What the numbers were measured on: cores, load average, kernel."""
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "loadavg": [round(x, 2) for x in load], "kernel": os.uname().release}


class Results:
    """The rows of one bench script, written to bench/out/results/<bench>.json."""

    def __init__(self, bench):
        self.bench = bench
        self.rows = []
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.machine_before = machine()

    def add(self, operation, input_label, size, size_unit, ours, peer=None, baseline=None, rounds=None, note=None):
        """Records one operation on one input."""
        self.rows.append({"bench": self.bench, "operation": operation, "input": input_label, "size": size,
                          "sizeUnit": size_unit, "ours": ours, "peer": peer, "baseline": baseline,
                          "rounds": rounds, "note": note})

    def write(self):
        """Writes the file (replacing an earlier run of the same bench)."""
        RESULTS.mkdir(parents=True, exist_ok=True)
        doc = {"bench": self.bench, "started": self.started,
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "machineBefore": self.machine_before, "machineAfter": machine(), "rows": self.rows}
        path = RESULTS / f"{self.bench}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n")
        os.replace(tmp, path)
        return path
