#!/usr/bin/env python3
"""Benchmarks `claw-sessions cleanup` against the peer's `openclaw sessions cleanup`.

A seeded generator writes one sessions directory (default: 100k entries, one transcript
each) with a realistic mix, so that every step of the maintenance does work:

* entries as the gateway writes them: a fixpoint of its load normalisation (`lastTo`
  mirrors `deliveryContext.to`, the derived `route` last), in `JSON.stringify(store, null,
  2)` form, so a load changes nothing but the hydrated skill prompts;
* keys: groups/channels and threads (protected), direct chats, cron runs, subagents,
  model-run probes a day old, a few explicit/main keys; ages in whole days + 12 h ± 6 h
  (never within 6 h of a rule's boundary, so runs a minute apart decide alike);
* ~30 % of the entries carry a `skillsSnapshot` whose prompt lives in a shared blob;
  some have trajectory sidecars, compaction checkpoints, no `sessionFile`, or no
  transcript at all;
* 2 % extra files: old and recent orphan transcripts, `.deleted`/`.reset`/`.bak` archives
  (old and recent), orphan trajectories and checkpoints, stale store temps, unreferenced
  prompt blobs, a notes file.

Config `session.maintenance`: pruneAfter 30d, maxEntries n/2 (model-run probes and
capping both fire), and a disk budget calibrated once on the data (maxDiskBytes a little
under the would-be total, highWaterBytes 60 bytes per entry under it) so that the budget removes files
but no entries. Stale pruning, capping, archiving (`.deleted.<ts>`), trajectory removal,
archive retention, the budget and unreferenced-artifact pruning all do work on enforce.

Per round (alternating which program goes first): `cleanup --dry-run --json` of both on
the same directory; `cleanup --enforce --json` of each on a fresh copy of the pristine
directory at the same path (copies are not timed); the plain lower bounds
`jq -c . sessions.json` and `find DIR -maxdepth 1 -printf '%s %T@ %f\\n'` (a listing that
stats every file, as a cleanup must). Medians of wall time and peak RSS (/usr/bin/time; the
peer's wrapper execs node). After enforce, the two results are
compared: store bytes, and the set of files with their sizes (archive timestamps aside).

    python3 bench/cleanup.py [--entries 100000] [--rounds 3] [--no-peer] [--keep]
                             [--data DIR]   (default /tmp/clawstate-bench-cleanup)

The data lives outside the repository (the peer runs with OPENCLAW_STATE_DIR there).
Targets (issue: cleanup): at least 50x faster than the peer, peak RSS below the peer's.
"""
import argparse, hashlib, json, os, random, re, statistics, subprocess, sys, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DAY = 86_400_000
HOUR = 3_600_000
# Pristine data older than this is regenerated (ages keep 6 h from every boundary).
MAX_DATA_AGE_S = 4 * 3600
ARCHIVE_TS = re.compile(r"\.(deleted|reset|bak)\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(\.\d{3})?Z$")


def iso_ts(ms: int) -> str:
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H-%M-%S", t) + f".{ms % 1000:03d}Z"


def gen(sessions: Path, n: int, seed: int = 1) -> None:
    """Writes the pristine sessions directory."""
    rnd = random.Random(seed)
    now = int(time.time() * 1000)
    sessions.mkdir(parents=True, exist_ok=True)
    chans = ["telegram", "discord", "slack", "whatsapp", "signal"]
    header = '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'
    roles = ["user", "assistant", "toolResult"]
    used_ages = set()

    def age_days(lo: int, hi: int) -> int:
        while True:
            a = rnd.randint(lo, hi) * DAY + 12 * HOUR + rnd.randint(-6 * HOUR, 6 * HOUR)
            if a not in used_ages:
                used_ages.add(a)
                return a

    def touch(p: Path, ms: int) -> None:
        os.utime(p, ns=(ms * 1_000_000, ms * 1_000_000))

    def transcript_body(sid: str, k: int) -> str:
        rows = [header % sid]
        for m in range(k):
            words = " ".join(f"w{rnd.getrandbits(16)}" for _ in range(rnd.randint(5, 60)))
            rows.append(json.dumps({"type": "message", "id": f"m{m}", "parentId": f"m{m-1}" if m else None,
                                    "message": {"role": roles[m % 3], "content": [{"type": "text", "text": words}]}},
                                   separators=(",", ":")) + "\n")
        return "".join(rows)

    # Shared skill prompts (blobs), as the gateway writes them.
    blob_dir = sessions / "skills-prompts" / "sha256"
    prompts = []
    for b in range(12):
        text = f"# Skills {b}\n" + "".join(f"- skill {b}.{s}: does thing {s} carefully\n" for s in range(rnd.randint(60, 200)))
        h = hashlib.sha256(text.encode()).hexdigest()
        p = blob_dir / h[:2] / f"{h}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        touch(p, now - 2 * DAY)
        prompts.append((h, len(text.encode())))
    for b in range(6):  # unreferenced: old (pruned) and recent (kept)
        text = f"# Old skills {b}\n" + "x" * 4000
        h = hashlib.sha256(text.encode()).hexdigest()
        p = blob_dir / h[:2] / f"{h}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        touch(p, now - (45 * DAY if b < 4 else HOUR))

    with open(sessions / "sessions.json", "w") as f:
        f.write("{")
        for i in range(n):
            ch = rnd.choice(chans)
            r = rnd.random()
            sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
            chat = "direct"
            if r < 0.05:
                key = f"agent:main:explicit:model-run-{sid}"
                age = DAY + 12 * HOUR + rnd.randint(-6 * HOUR, 6 * HOUR)
            elif r < 0.33:
                key = f"agent:main:{ch}:group:{rnd.getrandbits(40)}"
                chat = "group"
                age = age_days(0, 59)
            elif r < 0.36:
                key = f"agent:main:{ch}:direct:{rnd.getrandbits(40)}:thread:{rnd.getrandbits(20)}"
                age = age_days(0, 59)
            elif r < 0.71:
                key = f"agent:main:{ch}:direct:{rnd.getrandbits(40)}"
                age = age_days(0, 39)
            elif r < 0.86:
                key = f"agent:main:cron:job{i % 97}:run:{rnd.getrandbits(32):x}"
                age = age_days(0, 39)
            elif r < 0.98:
                key = f"agent:main:subagent:{uuid.UUID(int=rnd.getrandbits(128), version=4)}"
                age = age_days(0, 39)
            else:
                key = f"agent:main:explicit:topic-{i}"
                age = age_days(0, 39)
            updated = now - age
            path = sessions / f"{sid}.jsonl"
            e = {"sessionId": sid, "updatedAt": updated}
            if rnd.random() < 0.9:
                e["sessionFile"] = str(path)
            # As the gateway writes them (a fixpoint of its load normalisation): lastTo
            # mirrors deliveryContext.to, and the derived route comes last (below). The
            # second draw keeps the seeded stream, and so every other field, as it was.
            to = f"{ch}:{rnd.getrandbits(40)}"
            rnd.getrandbits(40)
            e.update({
                "chatType": chat,
                "channel": ch,
                "lastChannel": ch,
                "lastTo": to,
                "deliveryContext": {"channel": ch, "to": to},
                "thinkingLevel": rnd.choice(["low", "medium", "high"]),
                "inputTokens": rnd.randint(0, 200000),
                "outputTokens": rnd.randint(0, 50000),
                "totalTokens": rnd.randint(0, 250000),
                "totalTokensFresh": True,
                "model": "claude-sonnet-4",
                "modelProvider": "anthropic",
                "systemSent": True,
            })
            if rnd.random() < 0.3:
                h, nbytes = rnd.choice(prompts)
                e["skillsSnapshot"] = {"skills": [{"name": "search"}, {"name": "calendar"}], "version": 1,
                                       "promptRef": {"version": 1, "algorithm": "sha256", "hash": h, "bytes": nbytes}}
            if rnd.random() < 0.02:
                cp = sessions / f"{sid}.checkpoint.{uuid.UUID(int=rnd.getrandbits(128), version=4)}.jsonl"
                cp.write_text(header % sid)
                touch(cp, updated - DAY)
                e["compactionCheckpoints"] = [{
                    "checkpointId": f"c{i}", "sessionKey": key, "sessionId": sid, "createdAt": updated - DAY,
                    "reason": "auto", "preCompaction": {"sessionId": sid, "sessionFile": str(cp)},
                    "postCompaction": {"sessionId": sid, "sessionFile": str(path)}}]
            # The route the gateway's load derives from the delivery fields, where its first
            # write put it (last): the entry is a fixpoint of the load normalisation.
            e["route"] = {"channel": ch, "target": {"to": to}}
            f.write(("," if i else "") + "\n  " + json.dumps(key) + ": " + json.dumps(e, indent=2).replace("\n", "\n  "))
            if rnd.random() < 0.99:  # 1 % of the entries lost their transcript
                k = rnd.randint(1, 12) if rnd.random() < 0.95 else rnd.randint(40, 120)
                path.write_text(transcript_body(sid, k))
                touch(path, updated)
            if rnd.random() < 0.03:
                traj = sessions / f"{sid}.trajectory.jsonl"
                traj.write_text(json.dumps({"traceSchema": "openclaw-trajectory", "schemaVersion": 1,
                                            "source": "runtime", "sessionId": sid}) + "\n")
                ptr = sessions / f"{sid}.trajectory-path.json"
                ptr.write_text(json.dumps({"traceSchema": "openclaw-trajectory-pointer", "schemaVersion": 1,
                                           "sessionId": sid, "runtimeFile": str(traj)}, indent=2) + "\n")
                touch(traj, updated)
                touch(ptr, updated)
        f.write("\n}")
    os.chmod(sessions / "sessions.json", 0o600)
    # Other files: 2 % of n.
    for i in range(max(40, n // 50)):
        kind = i % 10
        old = now - rnd.randint(31, 90) * DAY - rnd.randint(0, DAY - 1)
        recent = now - rnd.randint(1, 20) * DAY - rnd.randint(0, DAY - 1)
        u = uuid.UUID(int=rnd.getrandbits(128), version=4)
        body, ms = header % f"orphan-{i}", old
        if kind == 0:
            p = sessions / f"{u}.jsonl"
        elif kind == 1:
            p, ms = sessions / f"{u}.jsonl", recent
        elif kind == 2:
            p = sessions / f"{u}.jsonl.deleted.{iso_ts(old)}"
        elif kind == 3:
            p = sessions / f"{u}.jsonl.deleted.{iso_ts(recent)}"
            ms = recent
        elif kind == 4:
            p = sessions / f"{u}.jsonl.reset.{iso_ts(old)}"
        elif kind == 5:
            p, ms = sessions / f"{u}.jsonl.reset.{iso_ts(recent)}", recent
        elif kind == 6:
            p = sessions / f"{u}.jsonl.bak.{iso_ts(old)}"
        elif kind == 7:
            p = sessions / f"{u}.trajectory.jsonl"
        elif kind == 8:
            p = sessions / f"{u}.checkpoint.{uuid.UUID(int=rnd.getrandbits(128), version=4)}.jsonl"
        else:
            p = sessions / f"sessions.json.{rnd.randint(1000, 99999)}.{u}.tmp"
            body = "{}"
        if kind in (0, 1, 2, 3):
            body = transcript_body(str(u), rnd.randint(1, 8))
        p.write_text(body)
        touch(p, ms)
    (sessions / "NOTES.txt").write_text("operator notes: never touched by cleanup\n")


def remove_tree(d: Path) -> None:
    if d.exists():
        subprocess.run(["rm", "-rf", "--", str(d)], check=True)


def copy_tree(src: Path, dst: Path, spent: Path) -> None:
    """Copies `src` to `dst`, and writes the copy back to disk before returning: the
    kernel's writeback of 400 MB of fresh copy would otherwise run during the next timed
    command (a 2 s run shares the disk and a core with it; a 2 min run barely notices).
    The copy a run left is moved into `spent`, deleted once every run is timed: on the
    bench machine (a mount with `discard`), deleting it right before the copy for the next
    timed command left enforce's median at 1.55 s, against 1.42 s and 1.46 s in two runs
    of the same code with the deletion after the timed runs."""
    if dst.exists():
        spent.mkdir(parents=True, exist_ok=True)
        dst.rename(spent / str(sum(1 for _ in spent.iterdir())))
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    os.sync()


def run(cmd, env, stdout=subprocess.PIPE):
    """Runs `cmd`; returns (seconds, peak RSS in KiB, stdout). The peak RSS comes from
    /usr/bin/time (wait4 in this process would count the Python parent's pages the child
    had before exec)."""
    rss_file = Path(env.get("TMPDIR", "/tmp")) / f"rss-{os.getpid()}"
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *cmd],
                         stdout=stdout, stderr=subprocess.PIPE, env=env)
    out, err = p.communicate()
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{err.decode(errors='replace')}")
    rss = int(rss_file.read_text().split()[-1])
    rss_file.unlink()
    return dt, rss, out or b""


def fingerprint(sessions: Path):
    """The enforce result: store bytes and every file (relative name, size), archive
    timestamps replaced by a placeholder."""
    store = (sessions / "sessions.json").read_bytes()
    files = []
    for dirpath, _, names in os.walk(sessions):
        for name in names:
            p = Path(dirpath) / name
            rel = str(p.relative_to(sessions))
            files.append((ARCHIVE_TS.sub(r".\1.<ts>", rel), p.lstat().st_size))
    files.sort()
    return hashlib.sha256(store).hexdigest(), len(store), files


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
    ap.add_argument("--data", default="/tmp/clawstate-bench-cleanup", help="data directory (outside the repo)")
    a = ap.parse_args()
    data = Path(a.data).resolve()
    if data == ROOT or ROOT in data.parents:
        raise SystemExit("--data must lie outside the repository (the peer writes state there)")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "claw-sessions"], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ours = str(target / "release/claw-sessions")
    peer = None if a.no_peer else peer_wrapper()
    home = data / "home"
    state = data / "state"
    # The gateway writes absolute sessionFile paths: generate at the work path, keep a
    # pristine copy, and restore it at the same path before every run.
    work = state / "agents" / "main" / "sessions"
    pristine = data / f"pristine-{a.entries}"
    meta_path = data / f"meta-{a.entries}.json"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    config_path = state / "openclaw.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else None
    if meta is None or time.time() - meta["generated"] > MAX_DATA_AGE_S or not pristine.exists():
        print(f"generating {a.entries} entries and transcripts in {work} …", file=sys.stderr)
        for d in (work, pristine):
            remove_tree(d)
        t0 = time.time()
        gen(work, a.entries)
        copy_tree(work, pristine, data / "spent")
        # Calibrate the disk budget: measure the would-be total with a huge budget.
        maint = {"pruneAfter": "30d", "maxEntries": a.entries // 2, "maxDiskBytes": "1tb"}
        config_path.write_text(json.dumps({"session": {"maintenance": maint}}))
        _, _, out = run([ours, "--store", str(work / "sessions.json"), "cleanup", "--dry-run", "--json"],
                        dict(os.environ, OPENCLAW_STATE_DIR=str(state)))
        total = json.loads(out)["diskBudget"]["totalBytesBefore"]
        maint["maxDiskBytes"] = total - 20 * a.entries
        maint["highWaterBytes"] = total - 60 * a.entries
        meta = {"generated": t0, "maintenance": maint}
        meta_path.write_text(json.dumps(meta))
    config_path.write_text(json.dumps({"session": {"maintenance": meta["maintenance"]}}))
    nfiles = sum(len(names) for _, _, names in os.walk(pristine))
    ntranscripts = sum(1 for p in pristine.iterdir() if p.name.endswith(".jsonl") and p.name.count(".") == 1)
    mb = (pristine / "sessions.json").stat().st_size / 1e6
    env = dict(os.environ, NO_COLOR="1", OPENCLAW_STATE_DIR=str(state), TMPDIR=str(home / "tmp"))
    peer_env = dict(env, OPENCLAW_PEER_HOME=str(home))
    store = str(work / "sessions.json")
    dry = {"clawstate cleanup --dry-run": ([ours, "--store", store, "cleanup", "--dry-run", "--json"], env)}
    apply = {"clawstate cleanup --enforce": ([ours, "--store", store, "cleanup", "--enforce", "--json"], env)}
    if peer:
        dry["peer sessions cleanup --dry-run"] = ([peer, "sessions", "cleanup", "--store", store, "--dry-run", "--json"], peer_env)
        apply["peer sessions cleanup --enforce"] = ([peer, "sessions", "cleanup", "--store", store, "--enforce", "--json"], peer_env)
    base = {
        "jq -c . sessions.json": ["jq", "-c", ".", store],
        "find -maxdepth 1 -printf (list + stat)": ["find", str(work), "-maxdepth", "1", "-printf", "%s %T@ %f\n"],
    }
    machine_before = harness.machine()
    samples = {k: [] for k in [*dry, *apply, *base]}
    summaries, prints = {}, {}
    spent = data / "spent"
    remove_tree(spent)
    for rnd_i in range(a.rounds):
        flip = (lambda d: list(d.items())[::-1]) if rnd_i % 2 else (lambda d: list(d.items()))
        copy_tree(pristine, work, spent)
        for k, cmd in flip(base):
            t, rss, _ = run(cmd, env, stdout=subprocess.DEVNULL)
            samples[k].append((t, rss))
        for k, (cmd, e) in flip(dry):
            t, rss, out = run(cmd, e)
            samples[k].append((t, rss))
            summaries[k] = json.loads(out)
        for k, (cmd, e) in flip(apply):
            copy_tree(pristine, work, spent)
            t, rss, out = run(cmd, e)
            samples[k].append((t, rss))
            summaries[k] = json.loads(out)
            prints[k] = fingerprint(work)
        print(f"round {rnd_i + 1}: " + ", ".join(f"{k} {v[-1][0]:.3f}s" for k, v in samples.items()), file=sys.stderr)
    remove_tree(spent)
    if not a.keep:
        remove_tree(work)
    med = {k: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v)) for k, v in samples.items()}
    s = summaries["clawstate cleanup --enforce"]
    d = summaries["clawstate cleanup --dry-run"]
    after = prints["clawstate cleanup --enforce"]
    print(f"\n### cleanup: {a.entries} entries ({mb:.1f} MB store), {ntranscripts} transcripts, {nfiles} files, median of {a.rounds}\n")
    print(f"maintenance: {json.dumps(meta['maintenance'])}\n")
    print("| command | time (s) | peak RSS (MiB) | time vs clawstate |")
    print("| --- | ---: | ---: | ---: |")
    for k, (t, r) in med.items():
        kind = "enforce" if "enforce" in k else "dry-run"
        ref = med[f"clawstate cleanup --{kind}"][0]
        print(f"| {k} | {t:.3f} | {r/1024:.1f} | {t/ref:.1f}x |")
    bud = s["diskBudget"] or {}
    print(f"\ndry-run: {d['beforeCount']} -> {d['afterCount']} entries (model-run {d['modelRunPruned']}, "
          f"stale {d['pruned']}, capped {d['capped']}), artifacts {d['unreferencedArtifacts']['removedFiles']} "
          f"of {d['unreferencedArtifacts']['scannedFiles']}, budget files {(d['diskBudget'] or {}).get('removedFiles')}")
    print(f"enforce: {s['beforeCount']} -> {s['appliedCount']} entries (model-run {s['modelRunPruned']}, "
          f"stale {s['pruned']}, capped {s['capped']}), budget {bud.get('totalBytesBefore')} -> {bud.get('totalBytesAfter')} "
          f"bytes ({bud.get('removedFiles')} files, {bud.get('removedEntries')} entries), artifacts "
          f"{s['unreferencedArtifacts']['removedFiles']}; store {after[1]} bytes, {len(after[2])} files left, "
          f"{sum(1 for n, _ in after[2] if '.deleted.<ts>' in n)} .deleted archives")
    ok = True
    if peer:
        for kind in ["dry-run", "enforce"]:
            o_t, o_r = med[f"clawstate cleanup --{kind}"]
            p_t, p_r = med[f"peer sessions cleanup --{kind}"]
            print(f"{kind}: peer/clawstate time {p_t/o_t:.1f}x, RSS clawstate/peer {o_r/p_r:.2f}")
        jq_t = med["jq -c . sessions.json"][0]
        print(f"jq/clawstate: dry-run {jq_t/med['clawstate cleanup --dry-run'][0]:.2f}x, "
              f"enforce {jq_t/med['clawstate cleanup --enforce'][0]:.2f}x")
        for kind in ["dry-run", "enforce"]:
            same = summaries[f"clawstate cleanup --{kind}"] == summaries[f"peer sessions cleanup --{kind}"]
            ok &= same
            print(f"{kind}: same JSON summary as the peer: {same}")
        theirs = prints["peer sessions cleanup --enforce"]
        same_store = after[0] == theirs[0]
        same_files = after[2] == theirs[2]
        ok &= same_store and same_files
        print(f"enforce: same store bytes: {same_store}; same files (name, size; archive timestamps aside): {same_files}")
        if not same_files:
            mine, peers = set(after[2]), set(theirs[2])
            print(f"  only clawstate: {sorted(mine - peers)[:10]}\n  only peer: {sorted(peers - mine)[:10]}")
    results = harness.Results("cleanup")
    results.machine_before = machine_before
    label = f"{a.entries:,} entries ({mb:.0f} MB), {nfiles:,} files"
    for kind in ("dry-run", "enforce"):
        peer_k = f"peer sessions cleanup --{kind}"
        results.add(f"cleanup --{kind} --json", label, a.entries, "entries",
                    harness.side(f"claw-sessions cleanup --{kind}", *med[f"clawstate cleanup --{kind}"]),
                    peer=harness.side(f"openclaw sessions cleanup --{kind} --json", *med[peer_k], scope="process") if peer_k in med else None,
                    baseline=harness.side("jq -c . sessions.json", *med["jq -c . sessions.json"]), rounds=a.rounds,
                    note=f"`find -maxdepth 1 -printf` (list + stat) {med['find -maxdepth 1 -printf (list + stat)'][0]:.2f} s" if kind == "dry-run" else
                    (None if peer_k not in med else "same summary, store bytes and files as the peer's" if ok else "results differ from the peer's (see the script's output)"))
    results.write()
    (data / "cleanup.json").write_text(json.dumps({"entries": a.entries, "files": nfiles, "median": {k: {"seconds": t, "maxRssKiB": r} for k, (t, r) in med.items()}}, indent=2))
    if not a.keep:
        remove_tree(pristine)
        meta_path.unlink(missing_ok=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
