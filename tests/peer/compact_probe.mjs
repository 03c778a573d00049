// Differential probe for compaction against the real program (openclaw@2026.7.1).
//
//   node compact_probe.mjs run OUT SEED N   generate N seeded transcripts with the peer's own
//                                           SessionManager under OUT/cNNN/ and record, per case,
//                                           the peer's prepareCompaction for several budgets,
//                                           compact() with a stub model (its prompts too), the
//                                           appended + hardened compaction, the rotation
//                                           successor, the rebuilt context, and the
//                                           --max-lines trim.
//
// Case dir: state/agents/main/sessions/{sessions.json,<id>.jsonl} (untouched input),
// peer.json, peer-hardened.jsonl, peer-successor.jsonl, trim/ (a state dir the peer trimmed).
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
  const att = await imp("attempt.model-diagnostic-events-Dg8sP6iR.js");
  const acc = await imp("session-accessor-B4Nfa9CN.js");
  const cmp = await imp("compact-DnTaw0j3.js");
  return {
    SessionManager: sm.t,
    prepareCompaction: proxy.j,
    compact: proxy.w,
    convertToLlm: proxy.H,
    rotate: att.N,
    trim: acc.H,
    harden: cmp.__testing.hardenManualCompactionBoundary,
  };
}

const T0 = Date.parse("2026-11-29T21:00:00.000Z");
const BUDGETS = [0, 1, 40, 150, 600, 2500, 1e9];

function lorem(R, n) {
  const words = ["alpha", "deploy", "build", "/srv/app/config.yaml", "https://ci.example.com/job/42", "devbox:8080", "0x", "ticket", "4f3a88af7304", "never", "must", "the", "cache", "漢字", "1234567"];
  let s = "";
  while (s.length < n) s += words[Math.floor(R() * words.length)] + " ";
  return s.trim();
}

function genCase(P, dir, seed) {
  const R = rng(seed);
  const pick = (xs) => xs[Math.floor(R() * xs.length)];
  const chance = (p) => R() < p;
  const sessions = path.join(dir, "state", "agents", "main", "sessions");
  fs.mkdirSync(sessions, { recursive: true });
  let ts = T0 + seed * 1000;
  const now = () => (ts += 1 + Math.floor(R() * 5000));
  const usage = () => ({ input: Math.floor(R() * 4000), output: Math.floor(R() * 300), cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
  const sm = P.SessionManager.create("/home/alice/project", sessions);
  const ids = [];
  let calls = 0;
  const steps = 8 + Math.floor(R() * 30);
  const assistant = (content, stop) => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "m1", usage: usage(), stopReason: stop, timestamp: now() });
  ids.push(sm.appendMessage({ role: "user", content: lorem(R, 20 + Math.floor(R() * 200)), timestamp: now() }));
  ids.push(sm.appendMessage(assistant([{ type: "text", text: lorem(R, 30) }], "stop")));
  for (let s = 0; s < steps; s++) {
    const r = R();
    if (r < 0.22) {
      const dup = chance(0.1) ? "Please check the deployment status of build 4f3a88af7304 now" : null;
      ids.push(sm.appendMessage({ role: "user", content: dup ?? (chance(0.5) ? lorem(R, 10 + Math.floor(R() * 600)) : [{ type: "text", text: lorem(R, 10 + Math.floor(R() * 300)) }]), timestamp: now() }));
    } else if (r < 0.5) {
      const n = chance(0.4) ? 1 + Math.floor(R() * 2) : 0;
      const blocks = [];
      if (chance(0.3)) blocks.push({ type: "thinking", thinking: lorem(R, 40), thinkingSignature: "EqQB" + seed });
      if (n === 0 || chance(0.3)) blocks.push({ type: "text", text: lorem(R, 5 + Math.floor(R() * 800)) });
      const cids = [];
      for (let k = 0; k < n; k++) {
        const cid = `toolu_${seed}_${calls++}`;
        cids.push(cid);
        blocks.push({ type: "toolCall", id: cid, name: pick(["read", "write", "edit", "exec"]), arguments: chance(0.8) ? { path: pick(["/srv/a.txt", "/srv/b.txt", "/etc/hosts", "/home/alice/notes.md"]), content: "x" } : { cmd: "ls -la" } });
      }
      const aborted = n > 0 && chance(0.15);
      ids.push(sm.appendMessage(assistant(blocks, aborted ? "aborted" : n > 0 ? "toolUse" : pick(["stop", "stop", "length"]))));
      for (const cid of cids) {
        if (aborted && chance(0.5)) continue;
        ids.push(sm.appendMessage({ role: "toolResult", toolCallId: cid, toolName: "read", content: [{ type: "text", text: lorem(R, 5 + Math.floor(R() * 3000)) }], isError: chance(0.1), timestamp: now() }));
      }
    } else if (r < 0.55) ids.push(sm.appendThinkingLevelChange(pick(["high", "low", "off"])));
    else if (r < 0.6) ids.push(sm.appendModelChange("openai", pick(["gpt-5.5", "gpt-5"])));
    else if (r < 0.66 && ids.length > 3) ids.push(sm.appendCompaction("## Goal\nEarlier work on /srv/a.txt.", pick(ids.slice(-6)), 900 + Math.floor(R() * 5000), { readFiles: ["/srv/old.txt"], modifiedFiles: chance(0.5) ? ["/srv/mod.txt"] : [] }, chance(0.3)));
    else if (r < 0.7 && ids.length > 0) ids.push(sm.appendLabelChange(pick(ids), pick(["checkpoint-1", "mark"])));
    else if (r < 0.74) ids.push(sm.appendCustomEntry("openclaw.cache-ttl", { timestamp: ts, provider: "anthropic" }));
    else if (r < 0.79) ids.push(sm.appendCustomMessageEntry(pick(["openclaw.runtime-context", "note"]), lorem(R, 20 + Math.floor(R() * 200)), chance(0.5)));
    else if (r < 0.81) ids.push(sm.appendSessionInfo("Host inspection " + s));
    else if (r < 0.86 && ids.length > 4) {
      const target = pick(ids.slice(0, -2));
      if (chance(0.5)) sm.branch(target);
      else ids.push(sm.branchWithSummary(target, lorem(R, 40)));
      ids.push(sm.appendMessage({ role: "user", content: lorem(R, 30), timestamp: now() }));
      ids.push(sm.appendMessage(assistant([{ type: "text", text: lorem(R, 60) }], "stop")));
    } else ids.push(sm.appendMessage({ role: "user", content: lorem(R, 40), timestamp: now() }));
  }
  // End on a conversation turn so a compaction is possible.
  ids.push(sm.appendMessage({ role: "user", content: lorem(R, 50), timestamp: now() }));
  ids.push(sm.appendMessage(assistant([{ type: "text", text: lorem(R, 80) }], "stop")));
  const sid = sm.getSessionId ? sm.getSessionId() : crypto.randomUUID();
  const file = path.join(sessions, `${sid}.jsonl`);
  if (sm.getSessionFile() !== file) fs.renameSync(sm.getSessionFile(), file);
  fs.writeFileSync(path.join(sessions, "sessions.json"), JSON.stringify({ "agent:main:main": { sessionId: sid, updatedAt: ts, sessionFile: file, inputTokens: 100, outputTokens: 20, totalTokens: 5000, totalTokensFresh: true, contextBudgetStatus: { schemaVersion: 1 }, compactionCount: 1 } }, null, 2));
  return { file, sid, sessions, R };
}

function stubStream(record) {
  return async (model, context, options) => {
    const text = context.messages[0].content[0].text;
    const prefix = text.includes("This is the PREFIX of a turn");
    record.push({ call: prefix ? "turn-prefix" : "history", prompt: text, system: context.systemPrompt, maxTokens: options.maxTokens });
    return { result: async () => ({ role: "assistant", stopReason: "stop", content: [{ type: "text", text: prefix ? "PREFIX SUMMARY" : "HISTORY SUMMARY" }] }) };
  };
}

const strip = (x) => JSON.parse(JSON.stringify(x));

async function probeCase(P, dir, seed) {
  const { file, sid, sessions, R } = genCase(P, dir, seed);
  const out = { sid, plans: {} };
  const sm = P.SessionManager.open(file);
  const branch = sm.getBranch();
  for (const keep of BUDGETS) {
    const prep = P.prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep });
    if (!prep.ok || !prep.value) {
      out.plans[keep] = { compactable: false, error: prep.ok ? null : String(prep.error?.message) };
      continue;
    }
    const p = prep.value;
    const modified = new Set([...p.fileOps.edited, ...p.fileOps.written]);
    out.plans[keep] = {
      compactable: true,
      firstKeptEntryId: p.firstKeptEntryId,
      isSplitTurn: p.isSplitTurn,
      tokensBefore: p.tokensBefore,
      messagesToSummarize: strip(p.messagesToSummarize),
      turnPrefixMessages: strip(p.turnPrefixMessages),
      readFiles: [...p.fileOps.read].filter((f) => !modified.has(f)).toSorted(),
      modifiedFiles: [...modified].toSorted(),
    };
  }
  // compact() with a stub model at one budget, then the entry, hardening, rotation.
  const keep = BUDGETS[1 + Math.floor(R() * 5)];
  out.keep = keep;
  const prep = P.prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep }).value;
  const prompts = [];
  const model = { api: "anthropic-messages", provider: "anthropic", id: "m1", maxTokens: 8192, reasoning: false };
  const res = await P.compact(prep, model, "k", {}, undefined, undefined, undefined, stubStream(prompts));
  if (!res.ok) throw new Error(String(res.error?.message));
  out.prompts = prompts;
  out.result = strip(res.value);
  const hardened = path.join(dir, "peer-hardened.jsonl");
  fs.copyFileSync(file, hardened);
  const sm2 = P.SessionManager.open(hardened);
  sm2.appendCompaction(res.value.summary, res.value.firstKeptEntryId, res.value.tokensBefore, res.value.details, false);
  const h = await P.harden({ sessionFile: hardened, preserveRecentTail: false });
  out.hardenApplied = h.applied;
  out.contextAfter = strip(P.SessionManager.open(hardened).buildSessionContext().messages);
  const rot = await P.rotate({ sessionFile: hardened });
  out.rotation = strip(rot);
  if (rot.rotated) {
    fs.renameSync(rot.sessionFile, path.join(dir, "peer-successor.jsonl"));
    out.successorContext = strip(P.SessionManager.open(path.join(dir, "peer-successor.jsonl")).buildSessionContext().messages);
  }
  // Unhardened rotation (an explicit keepRecentTokens): the preserved-assistant path.
  const tail = path.join(dir, "peer-tail.jsonl");
  fs.copyFileSync(file, tail);
  P.SessionManager.open(tail).appendCompaction(res.value.summary, res.value.firstKeptEntryId, res.value.tokensBefore, res.value.details, false);
  const rot2 = await P.rotate({ sessionFile: tail });
  out.rotationTail = strip(rot2);
  if (rot2.rotated) fs.renameSync(rot2.sessionFile, path.join(dir, "peer-successor-tail.jsonl"));
  fs.rmSync(tail);
  // --max-lines on a copy of the state dir.
  const trimDir = path.join(dir, "trim", "agents", "main", "sessions");
  fs.mkdirSync(trimDir, { recursive: true });
  const trimFile = path.join(trimDir, `${sid}.jsonl`);
  fs.copyFileSync(file, trimFile);
  const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).length;
  const store = JSON.parse(fs.readFileSync(path.join(sessions, "sessions.json"), "utf8"));
  store["agent:main:main"].sessionFile = trimFile;
  fs.writeFileSync(path.join(trimDir, "sessions.json"), JSON.stringify(store, null, 2));
  const maxLines = 1 + Math.floor(R() * (lines + 2));
  out.maxLines = maxLines;
  const tr = await P.trim({ sessionId: sid, storePath: path.join(trimDir, "sessions.json"), sessionKey: "agent:main:main", agentId: "main" }, { maxLines, sessionFile: trimFile });
  out.trim = { compacted: tr.compacted, kept: tr.kept ?? null, archived: tr.archived ? path.basename(tr.archived).replace(/\.bak\..*$/, ".bak") : null };
  fs.writeFileSync(path.join(dir, "peer.json"), JSON.stringify(out));
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "run") {
  const P = await peerModules();
  const [outDir, seed, n] = [args[0], Number(args[1] ?? 1), Number(args[2] ?? 10)];
  for (let i = 0; i < n; i++) {
    const dir = path.join(outDir, `c${String(i).padStart(3, "0")}`);
    await probeCase(P, dir, seed * 1000 + i);
  }
  console.log(JSON.stringify({ cases: n }));
  process.exit(0);
} else {
  console.error("usage: compact_probe.mjs run OUT SEED N");
  process.exit(2);
}
