// Differential probe for transcripts against the real program (openclaw@2026.7.1).
//
//   node transcript_probe.mjs run OUT SEED N     generate N seeded cases under OUT/cNN/ with
//                                                the peer's own SessionManager and appender
//                                                (plus raw side appends, opaque rows, leaf
//                                                controls, parentless rows, torn tails, v1/v2
//                                                files) and record the peer's view of each
//   node transcript_probe.mjs read FILE...       the peer's SessionManager view of files we wrote
//   node transcript_probe.mjs hold FILE MS       hold FILE's write lock for MS ms (prints READY)
//   node transcript_probe.mjs acquire FILE       take and release FILE's write lock; prints JSON
//
// Every case dir holds state/ (a state dir: agents/main/sessions/{sessions.json,<id>.jsonl}),
// damaged.jsonl (+ repaired.jsonl, the peer's repair output) and peer.json:
//   {leafId, branchIds, branchTypes, context, llm, tree, history50, history0}
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const imp = (f) => import(path.join(DIST, f));

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function peerModules() {
  const sm = await imp("session-manager-BKz2VYho.js");
  const proxy = await imp("proxy-BzhBz8iM.js");
  const utils = await imp("session-utils.fs-CR-Ydxz0.js");
  const proj = await imp("session-transcript-path-BOc3BAzp.js");
  const chat = await imp("chat-DPrylHin.js");
  const acc = await imp("session-accessor-B4Nfa9CN.js");
  const lock = await imp("session-write-lock-BZ_4P1vk.js");
  return {
    SessionManager: sm.t,
    repair: sm.u,
    convertToLlm: proxy.H,
    readRecent: utils.i,
    readRecentWithStats: utils.a,
    readPage: utils.d,
    capArray: utils.n,
    projectRecent: proj.s,
    project: proj.o,
    canvas: proj.r,
    dropAnnounce: proj.i,
    replaceOversized: chat.i,
    finalBudget: chat.r,
    appendMessage: acc.J,
    acquireLock: lock.t,
  };
}

function view(P, file) {
  const sm = P.SessionManager.open(file);
  const branch = sm.getBranch();
  const ctx = sm.buildSessionContext();
  const mapTree = (n) => ({ id: n.entry.id, label: n.label ?? null, children: n.children.map(mapTree) });
  return {
    leafId: sm.getLeafId(),
    branchIds: branch.map((e) => e.id),
    branchTypes: branch.map((e) => e.type),
    context: JSON.parse(JSON.stringify({ messages: ctx.messages, thinkingLevel: ctx.thinkingLevel, model: ctx.model })),
    llm: JSON.parse(JSON.stringify(P.convertToLlm(ctx.messages))),
    tree: sm.getTree().map(mapTree),
  };
}

// chat.history as readChatHistoryPage + handleChatHistoryRequest compute it, from the
// peer's own readers, tree selection, projection and budget functions.
async function chatHistory(P, scope, limit, offset) {
  const max = Math.min(1000, limit ?? 200);
  const raw = Math.max(1, Math.floor(max)) * 20 + 20;
  const MAXB = 6 * 1024 * 1024;
  const drop = (msgs, over) => {
    const m = P.dropAnnounce(msgs, undefined);
    if (over === undefined) return m;
    const i = m.indexOf(over);
    return i < 0 ? m : [...m.slice(0, i), ...m.slice(i + 1)];
  };
  let messages, extra = {};
  const args = [scope.sessionId, scope.storePath, scope.sessionFile];
  if (offset === undefined) {
    const local = await P.readRecent(...args, { maxMessages: raw + 1, maxLines: raw + 1, maxBytes: Math.max(MAXB * 2, 1024 * 1024), allowResetArchiveFallback: true }, "main");
    const over = local.length > raw ? local[0] : undefined;
    messages = P.canvas(P.projectRecent(drop(local, over), { maxChars: 8000, maxMessages: max }));
  } else {
    const page = offset === 0
      ? await P.readRecentWithStats(...args, { maxMessages: raw + 1, maxLines: raw + 1, maxBytes: Math.max(MAXB * 2, 1024 * 1024), allowResetArchiveFallback: true }, "main")
      : await P.readPage(...args, { offset, maxMessages: max + 1, allowResetArchiveFallback: true }, "main");
    const over = offset === 0 ? (page.messages.length > raw ? page.messages[0] : undefined) : (page.messages.length > max ? page.messages[0] : undefined);
    const rawPage = offset === 0 ? page.messages.length : Math.min(max, Math.max(0, page.totalMessages - offset));
    const local = drop(page.messages, over);
    let projected = offset === 0 ? P.projectRecent(local, { maxChars: 8000, maxMessages: max }) : P.project(local, { maxChars: 8000 });
    if (offset !== 0 && projected.length > max) projected = projected.slice(projected.length - max);
    messages = P.canvas(projected);
    extra = { total: page.totalMessages, rawPage };
  }
  const replaced = P.replaceOversized({ messages, maxSingleMessageBytes: 128 * 1024 }).messages;
  const capped = P.capArray(replaced, MAXB).items;
  const bounded = P.finalBudget({ messages: capped, maxBytes: MAXB }).messages;
  const out = { messages: bounded };
  if (offset !== undefined) {
    const oldest = bounded.map((m) => m?.__openclaw?.seq).find((s) => typeof s === "number");
    const next = oldest !== undefined ? Math.max(offset, extra.total - oldest + 1) : offset + extra.rawPage;
    const hasMore = next < extra.total;
    out.offset = offset;
    if (hasMore) out.nextOffset = next;
    out.hasMore = hasMore;
    out.totalMessages = extra.total;
  }
  return JSON.parse(JSON.stringify(out));
}

const T0 = Date.parse("2026-11-29T21:00:00.000Z");

async function genCase(P, dir, seed) {
  const R = rng(seed);
  const pick = (xs) => xs[Math.floor(R() * xs.length)];
  const chance = (p) => R() < p;
  const sessions = path.join(dir, "state", "agents", "main", "sessions");
  fs.mkdirSync(sessions, { recursive: true });
  const sid = crypto.randomUUID();
  const file = path.join(sessions, `${sid}.jsonl`);
  const kind = seed % 10 === 7 ? "v1" : seed % 10 === 8 ? "v2" : "v3";
  let ts = T0 + seed * 1000;
  const now = () => (ts += 1 + Math.floor(R() * 5000));
  const text = () => pick(["hello", "What is in /srv/demo/hostname.txt?", "NO_REPLY", "ok ", "  ", "Thanks. Now list the demo dir", "[Telegram Bob 2026-01-01 10:00] hi there", "HEARTBEAT_OK", "x".repeat(9000), "漢字のテキスト", "done [[reply_to_current]]",
    // A text cut inside a surrogate pair: JSON.stringify writes the lone half as "\ud83d".
    "cut inside 😀😀".slice(0, 12)]);
  const usage = () => ({ input: Math.floor(R() * 900), output: Math.floor(R() * 90), cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
  if (kind !== "v3") {
    const lines = [{ type: "session", ...(kind === "v2" ? { version: 2 } : {}), id: sid, timestamp: new Date(now()).toISOString(), cwd: "/home/alice/project" }];
    const n = 3 + Math.floor(R() * 8);
    for (let i = 0; i < n; i++) {
      const role = i % 2 === 0 ? "user" : pick(["assistant", "hookMessage"]);
      const row = { type: "message", timestamp: new Date(now()).toISOString(), message: role === "assistant" ? { role, content: [{ type: "text", text: text() }], api: "anthropic-messages", provider: "anthropic", model: "claude-x", usage: usage(), stopReason: "stop", timestamp: ts } : { role, content: text(), timestamp: ts, ...(role === "hookMessage" ? { customType: "hook", display: true } : {}) } };
      if (kind === "v2") Object.assign(row, { id: crypto.randomUUID().slice(0, 8), parentId: lines.length > 1 ? lines.at(-1).id : null });
      lines.push(row);
    }
    if (kind === "v1" && chance(0.7)) lines.push({ type: "compaction", timestamp: new Date(now()).toISOString(), summary: "## Goal\nsummary", firstKeptEntryIndex: 2, tokensBefore: 500 });
    lines.push({ type: "message", timestamp: new Date(now()).toISOString(), message: { role: "user", content: "after", timestamp: ts } });
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  } else {
    let sm = P.SessionManager.create("/home/alice/project", sessions);
    const ids = [];
    const steps = 6 + Math.floor(R() * 25);
    let calls = 0;
    const rawAppend = (obj) => fs.appendFileSync(sm.getSessionFile(), JSON.stringify(obj) + "\n");
    for (let s = 0; s < steps; s++) {
      const r = R();
      if (r < 0.25) ids.push(sm.appendMessage({ role: "user", content: chance(0.5) ? text() : [{ type: "text", text: text() }], timestamp: now() }));
      else if (r < 0.5) {
        const call = chance(0.3);
        const cid = `toolu_${seed}_${calls++}`;
        ids.push(sm.appendMessage({ role: "assistant", content: call ? [{ type: "thinking", thinking: "need to read", thinkingSignature: "EqQB" }, { type: "toolCall", id: cid, name: "read", arguments: { path: "/srv/x" } }] : [{ type: "text", text: text() }], api: pick(["anthropic-messages", "openai-chatgpt-responses"]), provider: pick(["anthropic", "openai"]), model: "m1", usage: usage(), stopReason: call ? "toolUse" : pick(["stop", "stop", "error"]), timestamp: now() }));
        if (call && chance(0.7)) ids.push(sm.appendMessage({ role: "toolResult", toolCallId: cid, toolName: "read", content: [{ type: "text", text: "devbox\n" }], isError: false, timestamp: now() }));
      } else if (r < 0.55) ids.push(sm.appendThinkingLevelChange(pick(["high", "low", "off"])));
      else if (r < 0.6) ids.push(sm.appendModelChange("openai", "gpt-5.5"));
      else if (r < 0.65 && ids.length > 2) ids.push(sm.appendCompaction("## Goal\nInspect files.", pick(ids), 900, { readFiles: ["/srv/x"], modifiedFiles: [] }, chance(0.5)));
      else if (r < 0.7 && ids.length > 0) ids.push(sm.appendLabelChange(pick(ids), pick(["checkpoint-1", "", "mark"])));
      else if (r < 0.74) ids.push(sm.appendCustomEntry("openclaw.cache-ttl", { timestamp: ts, provider: "anthropic" }));
      else if (r < 0.78) ids.push(sm.appendCustomMessageEntry(pick(["openclaw.runtime-context", "note"]), "Current time: now", chance(0.5), chance(0.5) ? { runtimeContextCarrier: true } : undefined));
      else if (r < 0.8) ids.push(sm.appendSessionInfo(" Host inspection "));
      else if (r < 0.86 && ids.length > 2) {
        const target = pick(ids);
        if (chance(0.5)) sm.branch(target);
        else ids.push(sm.branchWithSummary(target, "Summary of that exploration"));
      } else if (r < 0.9 && ids.length > 1 && fs.existsSync(sm.getSessionFile())) {
        // Raw rows written the way other producers write them, then the file reopened.
        const tail = sm.getLeafId();
        const what = R();
        const id = crypto.randomUUID();
        if (what < 0.35) rawAppend({ type: "message", id, parentId: tail, timestamp: new Date(now()).toISOString(), appendMode: "side", message: { role: "assistant", content: [{ type: "text", text: "mirrored" }], api: "openai-responses", provider: "openclaw", model: "delivery-mirror", usage: usage(), stopReason: "stop", timestamp: ts } });
        else if (what < 0.55) rawAppend({ type: "x-plugin-state", id: `op-${id.slice(0, 6)}`, parentId: tail, data: { n: 1 } });
        else if (what < 0.65) rawAppend({ type: "x-note", note: "no id" });
        else if (what < 0.8) rawAppend({ type: "leaf", id: id.slice(0, 8), parentId: tail, timestamp: new Date(now()).toISOString(), targetId: chance(0.8) ? pick(ids) : "zzzzzzzz" });
        else rawAppend({ type: "message", id, timestamp: new Date(now()).toISOString(), message: { role: "user", content: "parentless", timestamp: ts } });
        sm = P.SessionManager.open(sm.getSessionFile());
      } else if (r < 0.95 && fs.existsSync(sm.getSessionFile())) {
        await P.appendMessage({ transcriptPath: sm.getSessionFile(), message: { role: "assistant", content: [{ type: "text", text: "delivered" }], provider: "openclaw", model: "delivery-mirror", timestamp: now() }, sessionId: sid, now: ts });
        sm = P.SessionManager.open(sm.getSessionFile());
      } else ids.push(sm.appendMessage({ role: "user", content: "again", timestamp: now() }));
    }
    if (!fs.existsSync(sm.getSessionFile())) sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "final" }], api: "anthropic-messages", provider: "anthropic", model: "m1", usage: usage(), stopReason: "stop", timestamp: now() });
    fs.renameSync(sm.getSessionFile(), file);
    if (chance(0.25)) fs.appendFileSync(file, '{"type":"message","id":"torn1","parentId":');
  }
  fs.writeFileSync(path.join(sessions, "sessions.json"), JSON.stringify({ "agent:main:main": { sessionId: sid, updatedAt: ts, sessionFile: file } }, null, 2));
  // The peer's view (on a copy: opening v1/v2 files rewrites them).
  const copy = path.join(dir, "peer-copy.jsonl");
  fs.copyFileSync(file, copy);
  const peer = view(P, copy);
  const scope = { sessionId: sid, storePath: path.join(sessions, "sessions.json"), sessionFile: file };
  peer.history50 = await chatHistory(P, scope, 50, undefined);
  peer.history0 = await chatHistory(P, scope, 7, 0);
  peer.history3 = await chatHistory(P, scope, 4, 3);
  peer.kind = kind;
  // Repair: damage a copy, let the peer repair it.
  const damaged = fs.readFileSync(file, "utf8").split("\n");
  const extra = [
    '{"type":"message","id":"nr1","parentId":null,"timestamp":"2026-11-29T21:50:10.608Z","message":{"role":null}}',
    "not json at all",
    '{"type":"message","id":"bu1","parentId":null,"timestamp":"2026-11-29T21:50:10.608Z","message":{"role":"user","content":[{"type":"text","text":"  "},{"type":"image","data":"@@@","mimeType":"image/png"}]}}',
    '{"type":"message","id":"ea1","parentId":null,"timestamp":"2026-11-29T21:50:10.608Z","message":{"role":"assistant","content":[],"stopReason":"error","b":1.50,"c":"\\u00e9\\/"}}',
    // Valid JSON only JSON.parse reads: a lone surrogate, numbers beyond the double range.
    '{"type":"message","id":"ls1","parentId":null,"timestamp":"2026-11-29T21:50:10.608Z","message":{"role":"user","content":"x\\udc00y","n":1e999,"m":-1e999,"u":-1e-999}}',
    `{"type":"message","id":"cm1","parentId":"ea1","timestamp":"2026-11-29T21:50:10.608Z","message":{"role":"assistant","api":"openai-chatgpt-responses","provider":"openai","stopReason":"toolUse","content":[{"type":"toolCall","id":"call_${seed}","name":"exec","arguments":{}}]}}`,
  ];
  for (const e of extra) if (chance(0.6)) damaged.splice(1 + Math.floor(R() * (damaged.length - 1)), 0, e);
  fs.writeFileSync(path.join(dir, "damaged.jsonl"), damaged.join("\n"));
  fs.copyFileSync(path.join(dir, "damaged.jsonl"), path.join(dir, "repaired.jsonl"));
  const rr = await P.repair({ sessionFile: path.join(dir, "repaired.jsonl") });
  peer.repair = { repaired: rr.repaired, droppedLines: rr.droppedLines, reason: rr.reason ?? null };
  fs.writeFileSync(path.join(dir, "peer.json"), JSON.stringify(peer));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "run") {
  const P = await peerModules();
  const [out, seed, n] = [args[0], Number(args[1] ?? 1), Number(args[2] ?? 10)];
  for (let i = 0; i < n; i++) {
    const dir = path.join(out, `c${String(i).padStart(3, "0")}`);
    await genCase(P, dir, seed * 1000 + i);
  }
  console.log(JSON.stringify({ cases: n }));
} else if (cmd === "read") {
  const P = await peerModules();
  const res = {};
  for (const f of args) {
    const copy = `${f}.peer-read.jsonl`;
    fs.copyFileSync(f, copy);
    res[f] = view(P, copy);
    fs.rmSync(copy);
  }
  console.log(JSON.stringify(res));
} else if (cmd === "hold") {
  const P = { acquireLock: (await imp("session-write-lock-BZ_4P1vk.js")).t };
  const lock = await P.acquireLock({ sessionFile: args[0], timeoutMs: 5000 });
  console.log("READY");
  await new Promise((r) => setTimeout(r, Number(args[1] ?? 5000)));
  await lock.release();
} else if (cmd === "acquire") {
  const P = { acquireLock: (await imp("session-write-lock-BZ_4P1vk.js")).t };
  const t = Date.now();
  try {
    const lock = await P.acquireLock({ sessionFile: args[0], timeoutMs: 3000 });
    await lock.release();
    console.log(JSON.stringify({ ok: true, ms: Date.now() - t }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, ms: Date.now() - t, message: String(e.message) }));
  }
} else {
  console.error("usage: transcript_probe.mjs run OUT SEED N | read FILE... | hold FILE MS | acquire FILE");
  process.exit(2);
}
