// Differential probe for clawstate's session_key, freshness and send_policy modules.
//
// Imports openclaw@2026.7.1's own dist/ chunks (module-private helpers are exposed with a
// load hook that appends export lines) and prints one JSON document to stdout:
//   { tz, contexts, keys: [{ key, ... }], agentIds, daily, policies, freshness, headers, ... }
// The daily-boundary and freshness results depend on the process time zone (TZ).
//
// Usage: TZ=America/New_York node probe_keys.mjs [path/to/openclaw/dist] > probe.json

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { registerHooks } from "node:module";
import { pathToFileURL } from "node:url";

const DIST =
  process.argv[2] ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist";

// Expose module-private functions of a few chunks.
const EXTRA_EXPORTS = {
  "store-CRMOBYMq.js":
    "export { isSyntheticSessionMaintenanceKey as __isSynthetic, isProtectedSessionMaintenanceEntry as __isProtected, isGatewayModelRunSessionKey as __isModelRun };",
  "sessions-DA8V8R91.js":
    "export { isMainScopeStaleDirectSessionKey as __isDmRetirable };",
  "session-utils-BjEgE3FM.js": "export { classifySessionKey as __gatewayKind };",
  "send-policy-dIsJy4mX.js":
    "export { deriveChannelFromKey as __channel, deriveChatTypeFromKey as __chatType, hasAmbiguousPeerShape as __ambiguous };",
};
registerHooks({
  load(url, context, nextLoad) {
    const result = nextLoad(url, context);
    for (const [file, extra] of Object.entries(EXTRA_EXPORTS)) {
      if (url.endsWith("/" + file)) {
        return { ...result, source: String(result.source) + "\n" + extra + "\n" };
      }
    }
    return result;
  },
});

const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const keyUtils = await load("session-key-utils-A-JGvyXu.js");
const sessionKey = await load("session-key-VWT_xzM9.js");
const store = await load("store-CRMOBYMq.js");
const sessions = await load("sessions-DA8V8R91.js");
const sessionUtils = await load("session-utils-BjEgE3FM.js");
const cliKind = await load("classify-session-kind-ms8-9L9l.js");
const helpers = await load("sessions-helpers-CHZmugbQ.js");
const sendPolicy = await load("send-policy-dIsJy4mX.js");
const reset = await load("reset-Bw63W6T_.js");
const lifecycle = await load("lifecycle-BS_t5emX.js");
const entryFreshness = await load("entry-freshness-CkdkmOZ4.js");
const agentScope = await load("agent-scope-config-BxAUeF6t.js");

const normalizeKey = keyUtils.o;
const parseAgentKey = keyUtils.c;
const parseThread = keyUtils.d;
const normalizeAgentId = sessionKey.u;
const resolveStoreKey = store.lt;
const toolKind = helpers.t;
const mainAlias = helpers.c;
const resolveSendPolicy = sendPolicy.n;
const resolvePolicy = reset.c;
const evaluateFreshness = reset.o;
const resetType = reset.r;
const dailyResetAt = reset.s;
const channelResetConfig = reset.n;
const lifecycleTimestamps = lifecycle.s;
const providerOwned = entryFreshness.t;

const undef = (v) => (v === undefined ? null : v);

// ---------------------------------------------------------------------------
// Keys.

const UUID = "123e4567-e89b-12d3-a456-426614174000";
const bodies = [
  "main", "MAIN", "Main", "home", "Home", "lobby", "global", "Global", "unknown", "foo", "Foo",
  "direct:bob", "dm:bob", "direct:", "direct:group:x", "dm:channel:y", "direct:bob:extra",
  "telegram:direct:123", "telegram:acct1:direct:123", "telegram:acct1:dm:123", "Telegram:Direct:ABC",
  "telegram:group:-100", "telegram:group:-100:topic:7", "telegram:direct:123:topic:5",
  "telegram:dm:1:topic:x:y", "telegram:channel:x:topic:", "telegram:direct:123:thread:9",
  "discord:channel:555", "discord:group:1", "Discord:Group:1", "discord:guild-1:channel-2",
  "discord:acct:guild-1:channel-2", "discord:channel:1:heartbeat", "discord:group:",
  "slack:channel:c1:thread:171", "slack:channel:C1:THREAD:Abc", "slack:slash:u1",
  "slack:channel:c1:thread:", "slack:channel:c1:thread: ", "slack:acct:channel:c1",
  "whatsapp:group:123@g.us", "123@g.us", "whatsapp:123@g.us", "whatsapp:direct:+15551234",
  "group:123@g.us", "channel:group:x", "x:group:channel:y",
  "signal:group:AbC=", "signal:group:AbC=:thread:X", "Signal:Group: AbC :x",
  "signal:group:A:signal:group:B", "signal:direct:AbC", "SIGNAL:GROUP:XyZ:Thread:Q",
  "matrix:channel:!Room:Server", "matrix:group:!Room:Server:THREAD:$Ev",
  "Matrix:Channel:ABC:thread:Def:thread:GHI", "matrix:direct:ABC", "matrix:channel:",
  "agent:x:matrix:channel:Q", "matrix:channel: Pad :thread: Tid ", "matrix:group:İx:thread:Ab",
  "cron:job1", "cron:job1:run:abc", "Cron:J", "cron:j:thread:1", "cron:", "hook:abc",
  "hook:gmail:MSG", "hook:x:thread:1", "node:abc", "node-abc", "node:x:channel:y",
  "subagent:abc", "subagent:a:subagent:b", "acp:abc", "acp:x:group:y", "acp-bridge:abc",
  "ACP-Bridge:x", "heartbeat", "main:heartbeat", "x:heartbeat:y", "Heartbeat", "heartbeats",
  `explicit:model-run-${UUID}`, `explicit:MODEL-RUN-${UUID.toUpperCase()}`,
  "explicit:model-run-zzz", "explicit:other", `explicit:model-run-${UUID}:x`,
  "main:thread:42", "main:THREAD:Abc", "group:legacy", "channel:legacy", "foo:group:",
  "foo:channel:bar", "group:x:y", "channel:x", "room:x",
  "İ:thread:abc", "Straße", "ΣΑΣ:group:ΟΔΟΣ", "x\u00a0y", "tab\there", "line\nbreak:group:x",
  "foo:group:a\nb", "telegram:group:a\n:topic:1", "emoji😀:thread:😀", "İİ:thread:😀x",
  "\ufeffmain", "\u0085main", "K:group:x",
];
const prefixes = [
  "", "agent:main:", "Agent:Main:", "agent:work:", "agent:ops:", " agent:main:",
  "agent:Ops Team:", "AGENT:MAIN:", "agent:main:agent:x:", "agent::", "agent: :",
];
const specials = [
  "", " ", "agent", "agent:main", "agent:main:", "agent::main", ":", "::", "a:b",
  "agent:main::x", "GLOBAL ", " unknown", "main ", `agent:m\u00a0n:explicit:model-run-${UUID}`,
  `agent:main:explicit:model-run-${UUID}\n`, `agent:Main:explicit:model-run-${UUID}`,
  `AGENT:main:EXPLICIT:model-run-${UUID}`, `agent:ma in:explicit:model-run-${UUID}`,
  "agent:main:signal:group:AbC", "agent:signal:group:AbC", "agent:Signal:Group:XY:z",
  "agent:matrix:channel:Xy:thread:Q", "agent:a:agent:b::matrix:group:Zz",
  "matrix:channel:Ab:THREAD:", "agent:main:direct:bob",
];
const keys = [...specials];
for (const p of prefixes) for (const b of bodies) keys.push(p + b);
// Seeded random keys from grammar-ish segments.
const segments = [
  "agent", "Agent", "main", "Main", "work", "", " ", " x ", "signal", "Signal", "matrix", "MATRIX",
  "group", "Group", "channel", "direct", "dm", "DM", "thread", "THREAD", "topic", "telegram",
  "discord", "slack", "whatsapp", "cron", "run", "hook", "node", "node-1", "subagent", "acp",
  "acp-bridge", "heartbeat", "explicit", `model-run-${UUID}`, "AbC", "İ", "123@g.us", "guild-1",
  "channel-2", "Σ", "😀", "a\nb", "\u00a0",
];
let seed = 0x2545f491;
const rand = (n) => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
};
for (let i = 0; i < 800; i++) {
  const len = 1 + rand(7);
  const parts = [];
  for (let j = 0; j < len; j++) parts.push(segments[rand(segments.length)]);
  keys.push(parts.join(":"));
}

// ---------------------------------------------------------------------------
// Contexts (config fragments that matter for key resolution).

const contextCfgs = [
  {},
  { agents: { list: [{ id: "work" }] } },
  { agents: { list: [{ id: "work" }, { id: "main" }] } },
  { agents: { list: [{ id: "ops", default: true }, { id: "work" }] }, session: { mainKey: "Home" } },
  { session: { scope: "global" } },
  { agents: { list: [{ id: "Work Team" }] }, session: { scope: "global", mainKey: "lobby" } },
];
const contexts = contextCfgs.map((cfg) => ({
  cfg,
  defaultAgentId: agentScope.c(cfg),
  mainKey: cfg.session?.mainKey ?? "main",
  scopeGlobal: cfg.session?.scope === "global",
  agents: Array.isArray(cfg.agents?.list) ? agentScope.n(cfg) : [],
}));

const kindEntries = [
  {}, { chatType: "group" }, { chatType: "channel" }, { chatType: "Group" },
  { spawnedBy: "x" }, { spawnedBy: "" }, { spawnedBy: 0 }, { spawnedBy: {} },
];
const protectEntries = [
  {}, { chatType: "group" }, { chatType: "Channel" }, { chatType: " thread " },
  { origin: { chatType: "group" } }, { chatType: null, origin: { chatType: "channel" } },
  { chatType: "direct", origin: { chatType: "group" } }, { chatType: 5, origin: { chatType: "group" } },
  { origin: "group" },
];
const dmTargets = ["main", "work", "Ops Team"];

const sendCfgs = [
  { sendPolicy: { default: "deny", rules: [
    { action: "deny", match: { channel: "discord", chatType: "group" } },
    { action: "allow", match: { keyPrefix: "telegram:" } },
    { action: "deny", match: { rawKeyPrefix: "agent:work:" } },
  ] } },
  { sendPolicy: { default: "deny", rules: [
    { action: "allow", match: { channel: "slack", chatType: "dm" } },
    { action: "deny", match: { keyPrefix: "cron:" } },
    { match: { chatType: "channel" } },
  ] } },
  { sendPolicy: { default: "allow", rules: [
    { action: "deny", match: { chatType: "direct" } },
    { action: "allow", match: { rawKeyPrefix: "agent:main:" } },
  ] } },
  {},
  { sendPolicy: {} },
  { sendPolicy: { default: "DENY", rules: [
    null,
    { action: "Deny", match: { channel: " WhatsApp " } },
    { action: "allow", match: { chatType: "group", keyPrefix: "Agent:Main:" } },
    { action: "bogus", match: { chatType: "room", channel: "" } },
  ] } },
];
const sendCalls = [
  { entry: undefined },
  { entry: {} },
  { entry: { sendPolicy: " Deny " } },
  { entry: { channel: "slack" } },
  { entry: { lastChannel: "WhatsApp", chatType: "group" } },
  { entry: { chatType: "channel", channel: "  " } },
  { entry: { chatType: "direct" }, channel: "slack", chatType: "dm" },
  { entry: { chatType: "direct", channel: "slack" }, chatType: "room" },
  { entry: { channel: "discord" }, channel: " " },
];

const keyResults = keys.map((key) => {
  const parsed = parseAgentKey(key);
  return {
    key,
    norm: normalizeKey(key),
    parsed: parsed ? [parsed.agentId, parsed.rest] : null,
    agentId: normalizeAgentId(key),
    resolved: contexts.map((c) => resolveStoreKey({ cfg: c.cfg, sessionKey: key })),
    cliKind: kindEntries.map((e) => cliKind.t(key, e)),
    gatewayKind: kindEntries.map((e) => sessionUtils.__gatewayKind(key, e)),
    toolKind: contexts.flatMap((c) => {
      const { mainKey, alias } = mainAlias(c.cfg);
      return [{}, { chatType: "channel" }].map((e) =>
        toolKind({ key, gatewayKind: sessionUtils.__gatewayKind(key, e), alias, mainKey }),
      );
    }),
    thread: undef(parseThread(key).threadId),
    synthetic: store.__isSynthetic(key),
    protected: protectEntries.map((e) => store.__isProtected(key, e)),
    modelRun: store.__isModelRun(key),
    dmRetire: dmTargets.flatMap((t) =>
      [undefined, key, "agent:main:direct:bob", ""].map((activeKey) =>
        sessions.__isDmRetirable({ cfg: {}, targetAgentId: t, key, activeKey }),
      ),
    ),
    chat: [undef(sendPolicy.__chatType(key)), undef(sendPolicy.__channel(key)), sendPolicy.__ambiguous(key)],
    resetType: resetType({ sessionKey: key }),
    send: sendCfgs.flatMap((cfg) =>
      sendCalls.map((c) =>
        resolveSendPolicy({ cfg: { session: cfg }, entry: c.entry, sessionKey: key, channel: c.channel, chatType: c.chatType }),
      ),
    ),
  };
});

const agentIdInputs = [
  "my agent!", "--x--", "Ünï", "", "  ", "Work", "a_b-C", "_x", "!!!", "a".repeat(64),
  "a".repeat(65), "-" + "b".repeat(70), "\u212A", "\ufeffx\ufeff", "\u0085x", "x😀y", "İ", "ß",
  "a--b", "A B  C", "x\ny", "0", "9lives",
];
const agentIds = agentIdInputs.map((s) => [s, normalizeAgentId(s)]);

// ---------------------------------------------------------------------------
// Reset policy, daily boundary and freshness.

const H = 3600e3;
const days = ["2026-01-15", "2026-03-08", "2026-03-09", "2026-03-29", "2026-04-05",
  "2026-10-04", "2026-10-25", "2026-11-01", "2026-11-02", "2026-12-31"];
const nows = [];
for (const d of days) {
  const base = Date.parse(d + "T00:00:00Z");
  for (let h = -6; h < 30; h += 0.5) nows.push(base + h * H + 17);
}
const daily = [];
for (const now of nows) for (let atHour = 0; atHour < 24; atHour++) daily.push([now, atHour, dailyResetAt(now, atHour)]);

const policyCfgs = [
  undefined,
  {},
  { idleMinutes: 30, resetByType: { group: { mode: "idle", idleMinutes: 5 } } },
  { idleMinutes: 45 },
  { reset: { atHour: 25.7 } },
  { reset: { atHour: -3, idleMinutes: 2.9 } },
  { reset: { atHour: "7" } },
  { reset: { mode: "idle" } },
  { reset: { mode: "idle", idleMinutes: 60 } },
  { reset: { mode: "daily", atHour: 2, idleMinutes: 90 } },
  { resetByType: { dm: { atHour: 9 }, thread: { mode: "idle", idleMinutes: 15 } } },
  { resetByType: { direct: null, dm: { atHour: 1 } } },
  { resetByType: {}, idleMinutes: 20 },
  { idleMinutes: 30, reset: { atHour: 6 }, resetByType: { direct: { atHour: 7 } },
    resetByChannel: { feishu: { mode: "idle", idleMinutes: 10 }, slack: null, telegram: {} } },
  { resetByChannel: { whatsapp: { atHour: 23, idleMinutes: 1 } }, idleMinutes: "12" },
  { idleMinutes: -5 },
  { reset: { idleMinutes: "abc", mode: "idle" } },
];
const types = ["direct", "group", "thread"];
const channels = [undefined, " Lark ", "slack", "telegram", "WhatsApp", "zlu"];
const policies = [];
for (const [ci, sessionCfg] of policyCfgs.entries()) for (const t of types) for (const ch of channels) {
  const p = resolvePolicy({
    sessionCfg,
    resetType: t,
    resetOverride: channelResetConfig({ sessionCfg, channel: ch }),
  });
  policies.push({ cfg: ci, type: t, channel: undef(ch), mode: p.mode, atHour: p.atHour, idleMinutes: undef(p.idleMinutes), configured: p.configured });
}

// Entries for freshness (transcript headers live in a temporary sessions dir).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clawstate-probe-"));
const storePath = path.join(dir, "sessions.json");
const headerLines = [
  JSON.stringify({ type: "session", id: "h0", timestamp: "2026-03-08T05:00:00.000Z" }),
  JSON.stringify({ type: "session", timestamp: "2026-03-08T01:30:00" }),
  JSON.stringify({ type: "session", id: "other", timestamp: "2026-03-08T05:00:00.000Z" }),
  JSON.stringify({ type: "session", id: " ", timestamp: Date.parse("2026-11-01T04:00:00Z") }),
  JSON.stringify({ type: "message", timestamp: "2026-03-08T05:00:00.000Z" }),
  "not json",
  JSON.stringify({ type: "session", timestamp: "2026-11-01" }),
  JSON.stringify({ type: "session", timestamp: "2026-11-01T01:30" }),
  JSON.stringify({ type: "session", timestamp: "2026-11-01T06:30:00.123456+02:00" }),
  JSON.stringify({ type: "session", timestamp: -1 }),
  JSON.stringify({ type: "session", timestamp: "2099-01-01T00:00:00Z" }),
];
const headers = headerLines.map((line, i) => {
  const sessionId = `h${i}`;
  fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), line + "\n{}\n");
  const ts = lifecycleTimestamps({ entry: { sessionId }, agentId: "main", storePath });
  return { sessionId, line, startedAt: undef(ts.sessionStartedAt) };
});

const t0 = Date.parse("2026-03-08T00:00:00Z");
const t1 = Date.parse("2026-11-01T00:00:00Z");
const freshEntries = [
  {},
  { updatedAt: t0 },
  { updatedAt: t0 + 3 * H, sessionStartedAt: t0 + 2 * H },
  { updatedAt: t0 + 9 * H, sessionStartedAt: t0 + 7.5 * H, lastInteractionAt: t0 + 8 * H },
  { updatedAt: t1 + 5.5 * H, sessionStartedAt: t1 + 5 * H + 0.5, lastInteractionAt: t1 + 5.25 * H },
  { updatedAt: t1 + 6 * H, sessionStartedAt: 9e15, lastInteractionAt: -4 },
  { updatedAt: "x", sessionStartedAt: t1 + 4 * H, lastInteractionAt: t1 + 99 * H },
  { updatedAt: t1 + 20 * H, sessionStartedAt: t1 + 20 * H },
  { sessionId: "h0", updatedAt: t0 + 10 * H },
  { sessionId: "h1", updatedAt: t0 + 10 * H },
  { sessionId: "h2", updatedAt: t0 + 10 * H },
  { sessionId: "h3", updatedAt: t1 + 10 * H },
  { sessionId: "h7", updatedAt: t1 + 10 * H },
  { sessionId: "h8", updatedAt: t1 + 10 * H },
  { sessionId: "h10", updatedAt: t1 + 10 * H },
  { sessionId: "h0", updatedAt: t0 + 10 * H, sessionStartedAt: t1 + 100 * H },
  { modelProvider: "claude-cli", cliSessionBindings: { "claude-cli": { sessionId: "c" } }, updatedAt: 0 },
  { providerOverride: "X", cliSessionIds: { x: " s " }, updatedAt: t0 },
  { modelProvider: "Claude-CLI", claudeCliSessionId: "s", updatedAt: t0 },
  { providerOverride: 5, modelProvider: "x", cliSessionIds: { x: "s" }, updatedAt: t0 },
  { modelProvider: "x", cliSessionBindings: { x: { sessionId: " " } }, updatedAt: t0 },
];
const freshNows = [];
for (const base of [t0, t1]) for (let h = 0; h < 30; h += 1.25) freshNows.push(base + h * H);
const uniquePolicies = [];
const seen = new Set();
for (const p of policies) {
  const k = JSON.stringify([p.mode, p.atHour, p.idleMinutes, p.configured]);
  if (!seen.has(k)) {
    seen.add(k);
    uniquePolicies.push({ mode: p.mode, atHour: p.atHour, idleMinutes: p.idleMinutes ?? undefined, configured: p.configured });
  }
}
const freshness = [];
for (const [pi, policy] of uniquePolicies.entries()) for (const [ei, entry] of freshEntries.entries()) for (const now of freshNows) {
  const ts = lifecycleTimestamps({ entry, agentId: "main", storePath });
  const exempt = policy.configured !== true && providerOwned(entry);
  const f = evaluateFreshness({ updatedAt: entry.updatedAt, sessionStartedAt: ts.sessionStartedAt, lastInteractionAt: ts.lastInteractionAt, now, policy });
  freshness.push([pi, ei, now, exempt, f.fresh, undef(f.dailyResetAt), undef(f.idleExpiresAt), undef(f.staleReason)]);
}
fs.rmSync(dir, { recursive: true, force: true });

process.stdout.write(JSON.stringify({
  tz: process.env.TZ ?? null,
  contexts: contexts.map(({ cfg, ...rest }) => rest),
  kindEntries,
  protectEntries,
  dmTargets,
  keys: keyResults,
  agentIds,
  daily,
  policyCfgs: policyCfgs.map(undef),
  policies,
  uniquePolicies: uniquePolicies.map((p) => ({ ...p, idleMinutes: undef(p.idleMinutes) })),
  freshEntries,
  freshness,
  headers,
  sendCfgs,
  sendCalls: sendCalls.map((c) => ({ entry: undef(c.entry), channel: undef(c.channel), chatType: undef(c.chatType) })),
}));
