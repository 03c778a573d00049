// Differential probe of the signal log against openclaw@2026.9.6 (state schema 18, store
// provenance). Same ops and output as signals_probe.mjs (the 2026.8.1 probe); differences:
// the modules are .mjs and picked by what they export, goal changes and creations go
// through 9.6's own entry points (awaited), `session` writes the watcher's entry into the
// agent database (9.6 never reads sessions.json), and `cursors` returns the cursor rows.
//
//   node signals_probe96.mjs SCENARIOS.json OUT.json
//
// SCENARIOS.json is an array of {name, stateDir, steps: [...]}, written by
// tests/differential_signals.rs, which replays the same steps through claw-signals and
// claw-watch on its own fresh state dir and compares. Each step runs here through the
// package's own signal module (dist/session-state-events-*.js) with Date.now pinned to the
// step's `now`, so the producer helpers (spawn, run terminal, human message, goal,
// compaction, creation) build their inputs exactly as the gateway does.
//
// Ops: spawn, terminal, human, goal, compacted, created, record (a raw
// recordSessionStateEvent input), register, ambient, pending, drain, changes, prune, sweep,
// reset, delete, version, session (create a watcher session entry), sql (run statements on
// the database), recordOn (record through the module into another database, e.g. one made
// by clawstate).
//
// OUT.json: per scenario {name, outputs: [one per step], tables, schema, pragmas}.
//
// Environment: OPENCLAW_PEER_DIST (dist/ of openclaw@2026.9.6).

import fs from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  path.join(process.env.HOME ?? "/root", ".cache/openclaw-peer-2026.9.6/openclaw-2026.9.6/node_modules/openclaw/dist");

// The module's minified export letters differ per build: map them by the export list.
async function importNamed(prefix, needs) {
  const exportsOf = (f) => {
    const src = fs.readFileSync(path.join(DIST, f), "utf8");
    return src.slice(src.lastIndexOf("export {"));
  };
  const file = fs
    .readdirSync(DIST)
    .find((f) => f.startsWith(prefix) && f.endsWith(".mjs") && new RegExp(`\\b${needs} as\\b|\\b${needs}\\b`).test(exportsOf(f)));
  if (!file) throw new Error(`no ${prefix}*.mjs exporting ${needs} in ${DIST}`);
  const full = path.join(DIST, file);
  const exportLine = exportsOf(file);
  const mod = await import(pathToFileURL(full).href);
  const out = {};
  for (const m of exportLine.matchAll(/(\w+) as (\w+)/g)) out[m[1]] = mod[m[2]];
  for (const m of exportLine.matchAll(/[{,]\s*(\w+)\s*(?=[,}])/g)) out[m[1]] ??= mod[m[1]];
  return out;
}

let clock = 0;
const realNow = Date.now;
Date.now = () => (clock ? clock : realNow());

process.env.OPENCLAW_STATE_DIR ??= "/nonexistent";
process.env.OPENCLAW_LOG_LEVEL ??= "silent";
const S = await importNamed("session-state-events-", "recordSessionStateEvent");
const Q = await importNamed("system-events-", "resetSystemEventsForTest");
const A = await importNamed("session-accessor.sqlite-entry-", "replaceSessionEntrySync");
const C = await importNamed("session-created-", "recordSessionCreated");

// compactSessionStateChanges / compactSessionStateEventPayload, verbatim from
// dist/openclaw-tools-*.js (the session_status tool; the module is not exported).
function compactSessionStateEventPayload(payload) {
  if (!payload) return;
  const outcome = payload.outcome === "error" || payload.outcome === "timeout" || payload.outcome === "cancelled" ? payload.outcome : void 0;
  const channel = typeof payload.channel === "string" ? payload.channel : void 0;
  const turns = typeof payload.turns === "number" && Number.isSafeInteger(payload.turns) && payload.turns > 0 ? payload.turns : void 0;
  return outcome || channel || turns !== void 0 ? {
    ...outcome ? { outcome } : {},
    ...channel ? { channel } : {},
    ...turns !== void 0 ? { turns } : {}
  } : void 0;
}
function compactSessionStateChanges(stateChanges) {
  return {
    ...stateChanges,
    events: stateChanges.events.map((event) => {
      const payload = compactSessionStateEventPayload(event.payload);
      return {
        sequence: event.sequence,
        kind: event.kind,
        actorType: event.actorType,
        occurredAt: event.occurredAt,
        summary: event.summary,
        ...event.actorId ? { actorId: event.actorId } : {},
        ...event.runId ? { runId: event.runId } : {},
        ...payload ? { payload } : {}
      };
    })
  };
}

function queueTexts(watcher, drain) {
  const entries = drain ? Q.drainSystemEventEntries(watcher) : Q.peekSystemEventEntries(watcher);
  return (entries ?? [])
    .filter((e) => typeof e.contextKey === "string" && e.contextKey.startsWith("session-state:"))
    .map((e) => ({ text: e.text, contextKey: e.contextKey }));
}

function dumpTables(dbPath) {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const all = (sql) => db.prepare(sql).all().map((r) => ({ ...r }));
    const cursorCols = db.prepare("SELECT name FROM pragma_table_info('session_watch_cursors')").all().map((r) => r.name);
    return {
      tables: {
        events: all("SELECT * FROM session_state_events ORDER BY sequence"),
        heads: all("SELECT * FROM session_state_heads ORDER BY session_key, agent_id"),
        cursors: all("SELECT * FROM session_watch_cursors ORDER BY watcher_session_key, target_session_key"),
        sequence: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'session_state_events'").get()?.seq ?? 0,
        cursorColumns: cursorCols,
      },
      schema: all("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY rowid"),
      pragmas: {
        userVersion: db.prepare("PRAGMA user_version").get().user_version,
        autoVacuum: db.prepare("PRAGMA auto_vacuum").get().auto_vacuum,
        journalMode: db.prepare("PRAGMA journal_mode").get().journal_mode,
        pageSize: db.prepare("PRAGMA page_size").get().page_size,
        schemaMeta: db.prepare("SELECT meta_key, role, schema_version, agent_id, app_version FROM schema_meta").all().map((r) => ({ ...r })),
      },
    };
  } finally {
    db.close();
  }
}

async function runStep(step, dbPath) {
  clock = step.now;
  const opts = { path: dbPath, now: step.now };
  switch (step.op) {
    case "spawn":
      S.recordSubagentSpawned({
        childSessionKey: step.child,
        agentId: step.agentId ?? "main",
        requesterSessionKey: step.requester,
        childRunId: step.runId,
      });
      return null;
    case "terminal":
      S.recordSubagentTerminalState({
        childSessionKey: step.child,
        requesterSessionKey: step.requester,
        runId: step.runId,
        outcomeStatus: step.outcome,
      });
      return null;
    case "human": {
      const e = S.recordSessionHumanDirectMessage(
        {
          sessionKey: step.session,
          entry: { sessionId: step.sessionId, ...(step.spawnedBy ? { spawnedBy: step.spawnedBy } : {}) },
          ...(step.agentId ? { agentId: step.agentId } : {}),
          actor: { actorType: "human", ...(step.actorId ? { actorId: step.actorId } : {}) },
          runId: step.runId,
          channel: step.channel,
          ...(step.payload ? { payload: step.payload } : {}),
        },
        opts,
      );
      return e ? e.sequence : null;
    }
    case "goal":
      await S.recordSessionGoalChanged({
        sessionKey: step.session,
        entry: { sessionId: step.sessionId, ...(step.spawnedBy ? { spawnedBy: step.spawnedBy } : {}) },
        actor: step.actor,
        summary: step.summary,
      });
      return null;
    case "compacted":
      S.recordSessionCompacted({
        sessionKey: step.session,
        sessionId: step.sessionId,
        runId: step.runId,
        operationId: step.operationId,
      });
      return null;
    case "created":
      C.recordSessionCreated({ session: { notifyOnCreate: false } }, {
        sessionKey: step.session,
        entry: { sessionId: step.sessionId, createdActor: step.actor },
      });
      return null;
    case "record": {
      const e = S.recordSessionStateEvent(step.input, opts);
      return e ?? null;
    }
    case "register":
      return S.registerSessionStateWatch(
        { watcherSessionKey: step.watcher, targetSessionKey: step.target, ...(step.targetAgent ? { targetAgentId: step.targetAgent } : {}) },
        opts,
      );
    case "ambient":
      return S.registerMainSessionGroupWatch(
        { sessionKey: step.target, entry: { chatType: "group" }, agentId: step.agentId ?? "main", mainKey: "main" },
        opts,
      );
    case "pending":
      return queueTexts(step.watcher, false).map((e) => e.text).sort();
    case "drain": {
      const drained = queueTexts(step.watcher, true);
      const targets = drained.map((e) => S.decodeSessionStateNoticeContextKey(e.contextKey)).filter(Boolean);
      S.acknowledgeSessionStateNotices(step.watcher, targets, opts);
      return drained.map((e) => e.text).sort();
    }
    case "changes": {
      const agent = step.agentId ?? "main";
      const raw = S.listSessionStateEventsSince(step.session, agent, step.since, 200, opts);
      return JSON.stringify(
        { stateVersion: S.getSessionStateVersion(step.session, agent, opts), stateChanges: compactSessionStateChanges(raw) },
        null,
        2,
      );
    }
    case "version":
      return S.getSessionStateVersion(step.session, step.agentId ?? "main", opts);
    case "prune":
    case "sweep": {
      S.sweepSessionStateWatchNotices(opts);
      return null;
    }
    case "reset":
      S.handleSessionStateSessionReset(step.watcher, opts);
      return null;
    case "delete":
      S.handleSessionStateSessionDeleted(step.session, step.agentId ?? "main", opts);
      return null;
    case "session":
      A.replaceSessionEntrySync({ sessionKey: step.session, agentId: step.agentId ?? "main" }, { sessionId: step.sessionId, updatedAt: step.now });
      return null;
    case "sql": {
      const db = new DatabaseSync(dbPath);
      db.exec("PRAGMA busy_timeout = 5000;");
      db.exec(step.sql);
      db.close();
      return null;
    }
    case "cursors": {
      const db = new DatabaseSync(dbPath, { readOnly: true });
      try {
        return db.prepare("SELECT * FROM session_watch_cursors ORDER BY watcher_session_key, target_session_key").all().map((r) => ({ ...r }));
      } finally {
        db.close();
      }
    }
    case "recordOn": {
      const e = S.recordSessionStateEvent(step.input, { path: step.path, now: step.now });
      const listed = S.listSessionStateEventsSince(step.input.sessionKey, step.input.agentId, 0, 200, { path: step.path });
      return { event: e ?? null, listed };
    }
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

const [scenariosPath, outPath] = process.argv.slice(2);
const scenarios = JSON.parse(fs.readFileSync(scenariosPath, "utf8"));
const results = [];
for (const sc of scenarios) {
  Q.resetSystemEventsForTest?.();
  process.env.OPENCLAW_STATE_DIR = sc.stateDir;
  const dbPath = path.join(sc.stateDir, "state", "openclaw.sqlite");
  const outputs = [];
  for (const step of sc.steps) {
    try {
      outputs.push(await runStep(step, dbPath));
    } catch (err) {
      outputs.push({ error: String(err?.stack ?? err) });
    }
  }
  clock = 0;
  results.push({ name: sc.name, outputs, ...(fs.existsSync(dbPath) ? dumpTables(dbPath) : {}) });
}
fs.writeFileSync(outPath, JSON.stringify(results, null, 1));
// Heartbeat timers and cached handles must not keep the process alive.
process.exit(0);
