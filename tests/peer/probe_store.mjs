// Differential probe of the store load normalisation, prompt-blob projection and
// `openclaw sessions --json` rows against the real program (openclaw@2026.7.1).
//
//   node probe_store.mjs gen  OUT [SEED] [STORES] [ENTRIES]   generate seeded stores OUT/sNN/
//   node probe_store.mjs genpolicy OUT [SEED] [STORES]         main-alias DM stores (policy keys)
//   node probe_store.mjs peer OUT                             record the peer's results
//
// For every OUT/sNN/sessions.json, `peer` writes next to it:
//   loaded.json     JSON.stringify of the peer's loadSessionStore() (hydrate, migrate, normalise)
//   projected.json  JSON.stringify of projectSessionStoreForPersistence() on that store
//   twice.json      the loaded store after a second normalisation pass (idempotence)
//   saved.json      the bytes saveSessionStore() writes for the store as the writer loads it
//                   (uncloned, so keys left undefined by the load pass keep their position)
//   rows.json       `openclaw sessions --store … --json --limit all` (CLI, config OUT/sNN/config.json if any)
// The Rust side (`cargo test -p clawstate --lib -- --ignored peer_differential` with
// CLAWSTATE_PEER_PROBE=OUT) recomputes all of it and counts mismatches.
//
// Environment: OPENCLAW_PEER_DIST (dist/ of the package), OPENCLAW_PEER (the CLI wrapper).

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const PEER = process.env.OPENCLAW_PEER ?? "/root/.cache/openclaw-peer/openclaw";

// ---- seeded PRNG (mulberry32) ---------------------------------------------------------
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

function gen(out, seed, stores, entries) {
  const R = rng(seed);
  const pick = (xs) => xs[Math.floor(R() * xs.length)];
  const chance = (p) => R() < p;
  const maybe = (p, f) => (chance(p) ? f() : undefined);
  const hex = (n) => Array.from({ length: n }, () => pick("0123456789abcdef".split(""))).join("");
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(["8", "9", "a", "b"])}${hex(3)}-${hex(12)}`;
  const now = Date.now();

  const channels = [
    "telegram", "Telegram", " discord ", "lark", "WeChat", "webchat", "heartbeat", "cron",
    "", "  ", 5, null, "whatsapp", "slack", "foo", "teams", "微信", "Signal", "sessions_send",
    "imsg", "yuanbao", "Voice", "\u00a0telegram\ufeff", "\u0085slack", "İnstagram", "ΣΑΣ",
  ];
  const tos = ["123", " +1555 ", "", null, 5, "telegram:99", "telegram:42:topic:7", "user:x", "TELEGRAM:7", "c1", "\u3000 12 ", "x\u0085"];
  const accounts = ["default", "Acc One", "", null, "__proto__", "_x", "a".repeat(70), "--", "work", " W2 ", 7, "\u00a0Acc", "Ünï", "constructor", "x".repeat(63) + "-_y"];
  const threads = [7, 7.9, -0.5, "12", " ", "", null, {}, 0, "t-1", 1e3];
  const chatTypes = ["direct", "dm", "group", "channel", "DIRECT", " Dm ", "thread", "", 5, null];
  const models = ["  gpt  ", "", "  ", "claude-x", "gpt-5.5", "openai/gpt-4o", "claude-sonnet", "p/", "/x"];
  const modelProviders = ["anthropic", "claude-cli", " ", null, "OpenAI", "google-gemini-cli", "codex-cli", ""];
  const sessionIds = () => pick([
    uuid(), uuid(), uuid(), "  abc  ", "abc:def", "user@host", "../evil", 5, null, "x".repeat(200),
    `s.checkpoint.${uuid()}`, "", "a/b", "ok-id_1.2", "x".repeat(130), " ", "A:B@C",
    "\ufeffabc", "abc\u0085", "\u00a0id1 ", `X.CHECKPOINT.${uuid().toUpperCase()}`, "a".repeat(255), "a".repeat(256), "..",
  ]);

  const chan = () => pick(channels);
  const deliveryCtx = () =>
    pick([
      () => ({ channel: chan(), to: pick(tos), ...(chance(0.4) ? { accountId: pick(accounts) } : {}), ...(chance(0.3) ? { threadId: pick(threads) } : {}) }),
      () => ({ channel: chan(), extra: 1 }),
      () => "x",
      () => null,
      () => [],
      () => ({ to: pick(tos) }),
      () => ({ channel: "telegram", to: "42", accountId: "a1", threadId: 3, foo: { bar: 1 } }),
    ])();
  const route = () =>
    pick([
      () => ({ channel: chan(), ...(chance(0.5) ? { accountId: pick(accounts) } : {}), ...(chance(0.6) ? { target: { to: pick(tos), ...(chance(0.3) ? { rawTo: pick(tos) } : {}), ...(chance(0.3) ? { chatType: pick(chatTypes) } : {}) } } : {}), ...(chance(0.4) ? { thread: { id: pick(threads), ...(chance(0.5) ? { kind: pick(["topic", "", 0, "reply"]) } : {}), ...(chance(0.3) ? { source: pick(["key", "msg", null]) } : {}) } } : {}), ...(chance(0.2) ? { extra: true } : {}) }),
      () => "route",
      () => [1],
      () => null,
      () => ({ target: "x", thread: 5 }),
    ])();
  const origin = () => ({
    ...(chance(0.5) ? { provider: chan() } : {}),
    ...(chance(0.5) ? { to: pick(tos) } : {}),
    ...(chance(0.3) ? { from: pick(["telegram:555", "bob", " ", "whatsapp:+1"]) } : {}),
    ...(chance(0.5) ? { chatType: pick(chatTypes) } : {}),
    ...(chance(0.2) ? { surface: pick(["Telegram", "webchat", "slack"]) } : {}),
    ...(chance(0.2) ? { accountId: pick(accounts) } : {}),
    ...(chance(0.2) ? { threadId: pick(threads) } : {}),
    ...(chance(0.2) ? { nativeDirectUserId: pick(["U1", " ", "u-2"]) } : {}),
  });

  const keyPool = (i) =>
    pick([
      "agent:main:main", "main", "global", "unknown", `cron:${i}`, `agent:main:cron:job${i}`,
      `agent:main:cron:j${i}:run:abc`, `agent:main:telegram:group:-100${i}`, `agent:main:acp:${uuid()}`,
      `Agent:Main:Mixed${i}`, `agent:main:subagent:${i}`, `agent:work:x${i}`, `agent:main:x${i}`,
      `agent:main:telegram:direct:${i}`, `agent:main:signal:group:AbC${i}`, ` agent:main:sp${i} `,
      `agent:main:discord:channel:${i}`, `node-${i}`, `agent:My Agent:k${i}`, `agent:main:hook:${i}`,
      `x${i}`, `AGENT:MAIN:MAIN`, `agent:ops:main`, `agent::bad${i}`, `agent:main:matrix:channel:!Room${i}`,
    ]);

  const longPrompt = (n) => `Skill prompt ${R().toString(36)} ` + "lorem ipsum é 😀 ".repeat(n);

  for (let s = 0; s < stores; s++) {
    const dir = path.join(out, `s${String(s).padStart(2, "0")}`);
    fs.mkdirSync(dir, { recursive: true });
    const blob = (prompt, mutate) => {
      const hash = crypto.createHash("sha256").update(prompt).digest("hex");
      const p = path.join(dir, "skills-prompts", "sha256", hash.slice(0, 2), `${hash}.txt`);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      let content = Buffer.from(prompt, "utf8");
      if (mutate === "corrupt") content = Buffer.from(content.toString("utf8").replace(/l/, "L"), "utf8");
      if (mutate === "short") content = content.subarray(0, content.length - 1);
      fs.writeFileSync(p, content);
      return { version: 1, algorithm: "sha256", hash, bytes: Buffer.byteLength(prompt, "utf8") };
    };
    const store = {};
    for (let i = 0; i < entries; i++) {
      let key = keyPool(`${s}_${i}`);
      while (key in store) key = `${key}~${i}`;
      if (chance(0.04)) {
        store[key] = pick([5, null, "str", [1], true]);
        continue;
      }
      const e = {};
      const put = (k, v) => {
        if (v !== undefined) e[k] = v;
      };
      if (chance(0.85)) put("sessionId", sessionIds());
      put("sessionFile", maybe(0.2, () => pick(["/abs/x.jsonl", "rel.jsonl", "  ", 5, null])));
      put("updatedAt", maybe(0.9, () => pick([now - Math.floor(R() * 1e8), now - 5, "str", -5, 0, null, 1.5, 1e15])));
      if (chance(0.2)) put(String(Math.floor(R() * 20)), "ik");
      put("provider", maybe(0.15, chan));
      put("channel", maybe(0.3, chan));
      put("lastProvider", maybe(0.1, chan));
      put("lastChannel", maybe(0.35, chan));
      put("lastTo", maybe(0.35, () => pick(tos)));
      put("lastAccountId", maybe(0.2, () => pick(accounts)));
      put("lastThreadId", maybe(0.15, () => pick(threads)));
      put("room", maybe(0.1, () => pick(["#r", 5, null])));
      put("groupChannel", maybe(0.1, () => pick(["#g", 7])));
      put("deliveryContext", maybe(0.35, deliveryCtx));
      put("route", maybe(0.25, route));
      put("origin", maybe(0.3, origin));
      put("chatType", maybe(0.3, () => pick(chatTypes)));
      put("customField", maybe(0.2, () => pick([[1, { a: 2 }], "x", { n: null }])));
      put("model", maybe(0.35, () => pick(models.concat([5]))));
      put("modelProvider", maybe(0.3, () => pick(modelProviders.concat([5]))));
      if (chance(0.15)) {
        put("providerOverride", pick(["openai", "OpenAI", " ", "", "anthropic", "claude-cli"]));
      }
      if (chance(0.15)) {
        put("modelOverride", pick(["openai/gpt-x", "gpt-y", " ", "OPENAI/Gpt-Z", "p/", "anthropic/"]));
      }
      put("pendingFinalDelivery", maybe(0.1, () => pick([true, "yes", false, 1])));
      put("pendingFinalDeliveryText", maybe(0.08, () => pick(["t", null, 5])));
      put("pendingFinalDeliveryCreatedAt", maybe(0.08, () => pick([1, -1, "x", 1.5])));
      put("pendingFinalDeliveryLastAttemptAt", maybe(0.05, () => pick([2, -2, null])));
      put("pendingFinalDeliveryAttemptCount", maybe(0.08, () => pick([1, 1.5, -1, 0, "2"])));
      put("pendingFinalDeliveryLastError", maybe(0.05, () => pick(["boom", null, {}])));
      put("pendingFinalDeliveryContext", maybe(0.1, () => pick([{ channel: "Telegram", to: " 5 " }, { channel: "x" }, "x", { foo: 1 }, null, { channel: "telegram", to: "5" }, { channel: "slack", to: "c", threadId: 2.5, accountId: "A B" }])));
      put("pendingFinalDeliveryIntentId", maybe(0.05, () => pick(["i", null, 3])));
      put("restartRecoveryDeliveryContext", maybe(0.05, () => pick([{ channel: "lark", to: "u" }, [], { channel: "" }])));
      put("restartRecoveryDeliveryRunId", maybe(0.05, () => pick(["r", 5, null])));
      put("pluginExtensions", maybe(0.1, () => pick([
        { p: { ns: { a: 1 } } },
        { " p ": { " ns ": 1, "": 2, b: null }, q: 5, "": { x: 1 } },
        [], "x", { p: {} }, { p: { b: 1, " 5": 2 } }, { p: { big: "x".repeat(70000) } },
      ])));
      put("pluginExtensionSlotKeys", maybe(0.08, () => pick([
        { p: { a: "slotA", b: "model", c: " x ", d: "toString", e: 4, f: "9x" } },
        { p: { a: "slotA" } }, 5, { " p ": { n: "ok" } },
      ])));
      put("skillsSnapshot", maybe(0.15, () => pick([
        () => ({ prompt: "short", skills: [] }),
        () => ({ prompt: longPrompt(40), skills: [{ name: "s" }], version: 1 }),
        () => ({ prompt: longPrompt(40), resolvedSkills: [{ x: 1 }], skills: [] }),
        () => ({ skills: [], promptRef: blob(longPrompt(50)), version: 2 }),
        () => ({ promptRef: blob(longPrompt(30), "corrupt") }),
        () => ({ promptRef: blob(longPrompt(30), "short") }),
        () => ({ promptRef: { version: 1, algorithm: "sha256", hash: "0".repeat(64), bytes: 600 } }),
        () => ({ skills: [] }),
        () => "str",
        () => null,
        () => ({ prompt: 5, promptRef: blob(longPrompt(20)), skills: [] }),
        () => ({ promptRef: 1, prompt: longPrompt(45) }),
        () => ({ prompt: "x".repeat(511) }),
        () => ({ prompt: "x".repeat(512), resolvedSkills: null }),
      ])()));
      put("spawnedBy", maybe(0.08, () => pick(["agent:main:main", ""])));
      put("label", maybe(0.1, () => pick(["L", null, 3])));
      put("status", maybe(0.05, () => "done"));
      put("systemSent", maybe(0.1, () => pick([true, false])));
      put("thinkingLevel", maybe(0.05, () => "high"));
      put("totalTokens", maybe(0.2, () => pick([5, -1, "x", 1.5, 0, null])));
      put("totalTokensFresh", maybe(0.1, () => pick([true, false, null])));
      put("inputTokens", maybe(0.1, () => 7));
      put("contextTokens", maybe(0.08, () => pick([9, "x", null, 0])));
      put("sessionStartedAt", maybe(0.05, () => now - 1000));
      store[key] = e;
    }
    fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify(store));
    const config = CONFIGS[s % (CONFIGS.length + 1)];
    if (config) fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 2));
  }
}

// Configs for the listing rows (stores 1, 2, 3 of every 4; store 0 has none).
const CONFIGS = [
  {
    agents: {
      defaults: {
        model: { primary: "anthropic/claude-sonnet-4" },
        contextTokens: 123456,
        models: { "anthropic/claude-x": { agentRuntime: { id: "pi" } }, "openai/*": { agentRuntime: { id: "codex" } } },
        cliBackends: { "my-cli": { command: "x" } },
      },
      list: [{ id: "main", default: true }, { id: "work", model: "google/gemini-x" }, { id: "ops" }],
    },
    session: { mainKey: "Home", identityLinks: { Bob: ["telegram:12345", "bob", "telegram:99"] } },
    models: { providers: { openai: { baseUrl: "https://proxy.example/v1", models: [] } } },
  },
  {
    agents: {
      list: [{ id: "work", default: true, model: { primary: "claude-cli/sonnet" } }, { id: "main" }],
      defaults: { models: { "anthropic/sonnet": {}, "google/gemini-x": { agentRuntime: { id: "auto" } } } },
    },
    session: { scope: "global", identityLinks: { Alice: ["+1555", "whatsapp:+1", "123"] } },
    models: {
      providers: {
        anthropic: {
          baseUrl: "https://api.anthropic.com",
          agentRuntime: { id: "codex-app-server" },
          models: [{ id: "claude-x", name: "x", agentRuntime: { id: "openclaw" } }],
        },
      },
    },
  },
  {
    agents: { defaults: { model: "openai/gpt-4o", contextTokens: 50000 } },
    models: { providers: { openai: { baseUrl: "https://api.openai.com/v1", models: [] } } },
  },
];

// Stores of main-session aliases with direct-chat routing: exercises runtimePolicySessionKey.
function genPolicy(out, seed, stores) {
  const R = rng(seed);
  const pick = (xs) => xs[Math.floor(R() * xs.length)];
  const chance = (p) => R() < p;
  const now = Date.now();
  const keys = [
    "agent:main:main", "main", "AGENT:MAIN:MAIN", " main ", "agent:work:main", "agent:ops:main", "Main",
    "agent:main:MAIN", "global", "agent:Main:main", "agent:main:home", "home", "agent:main:main ",
    "agent:my agent:main", "agent:x:y",
  ];
  const channels = ["telegram", "Telegram", "whatsapp", "webchat", "lark", " slack ", "", 5, "WebChat", "imsg"];
  const ids = ["12345", "telegram:12345", "TELEGRAM:99:topic:3", "whatsapp:+1", "+1555", " bob ", "", "telegram:", "U1", "Telegram:İx", "slack:C1:TOPIC:x"];
  const accounts = ["Acc One", "", "default", "__proto__", "w2", null, "_z"];
  for (let s = 0; s < stores; s++) {
    const dir = path.join(out, `p${String(s).padStart(2, "0")}`);
    fs.mkdirSync(dir, { recursive: true });
    const store = {};
    for (const key of keys) {
      const e = { sessionId: `id-${s}-${Math.floor(R() * 1e6)}`, updatedAt: now - Math.floor(R() * 1e7) };
      const put = (k, v) => { if (v !== undefined) e[k] = v; };
      if (chance(0.8)) put("chatType", pick(["direct", "dm", "DIRECT", "group", "channel", " Dm "]));
      if (chance(0.6)) {
        const o = {};
        if (chance(0.5)) o.provider = pick(channels);
        if (chance(0.5)) o.to = pick(ids);
        if (chance(0.3)) o.from = pick(ids);
        if (chance(0.4)) o.chatType = pick(["direct", "group", "dm", null, 3]);
        if (chance(0.3)) o.surface = pick(channels);
        if (chance(0.3)) o.accountId = pick(accounts);
        if (chance(0.2)) o.nativeDirectUserId = pick(["U9", " ", "Nat Ive"]);
        put("origin", o);
      }
      if (chance(0.5)) put("lastChannel", pick(channels));
      if (chance(0.3)) put("channel", pick(channels));
      if (chance(0.5)) put("lastTo", pick(ids));
      if (chance(0.3)) put("lastAccountId", pick(accounts));
      if (chance(0.3)) put("deliveryContext", { channel: pick(channels), to: pick(ids), ...(chance(0.5) ? { accountId: pick(accounts) } : {}) });
      store[key] = e;
    }
    fs.writeFileSync(path.join(dir, "sessions.json"), JSON.stringify(store));
    const config = CONFIGS[s % (CONFIGS.length + 1)];
    if (config) fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 2));
  }
}

async function peer(out) {
  const st = await import(path.join(DIST, "store-CRMOBYMq.js"));
  const sp = await import(path.join(DIST, "skill-prompt-blobs-zJRX9N65.js"));
  const loadSessionStore = st.S;
  const normalizeShape = st.k;
  const projectSessionStoreForPersistence = sp.a;
  for (const name of fs.readdirSync(out).sort()) {
    const dir = path.join(out, name);
    const storePath = path.join(dir, "sessions.json");
    if (!fs.existsSync(storePath)) continue;
    const store = loadSessionStore(storePath, { skipCache: true });
    fs.writeFileSync(path.join(dir, "loaded.json"), JSON.stringify(store));
    const projected = projectSessionStoreForPersistence({ storePath, store }).store;
    fs.writeFileSync(path.join(dir, "projected.json"), JSON.stringify(projected));
    // Second pass through a save-time re-normalisation: write the loaded store and load it again.
    const tmp = path.join(dir, "loaded-as-store.json");
    fs.writeFileSync(tmp, JSON.stringify(store));
    fs.writeFileSync(path.join(dir, "twice.json"), JSON.stringify(loadSessionStore(tmp, { skipCache: true })));
    fs.rmSync(tmp);
    void normalizeShape;
    const writerStore = loadSessionStore(storePath, { skipCache: true, clone: false });
    await st.g(path.join(dir, "saved.json"), writerStore, { skipMaintenance: true });
    const home = fs.mkdtempSync(path.join(dir, "home-"));
    const cfg = path.join(dir, "config.json");
    if (fs.existsSync(cfg)) {
      fs.mkdirSync(path.join(home, ".openclaw"), { recursive: true });
      fs.copyFileSync(cfg, path.join(home, ".openclaw", "openclaw.json"));
    }
    const rows = execFileSync(PEER, ["sessions", "--store", storePath, "--json", "--limit", "all"], {
      env: { ...process.env, OPENCLAW_PEER_HOME: home },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    fs.writeFileSync(path.join(dir, "rows.json"), rows);
    fs.rmSync(home, { recursive: true, force: true });
    console.error(`${name}: ${Object.keys(store).length} entries`);
  }
}

const [cmd, out, ...rest] = process.argv.slice(2);
if (cmd === "gen") {
  gen(out, Number(rest[0] ?? 1), Number(rest[1] ?? 6), Number(rest[2] ?? 60));
} else if (cmd === "genpolicy") {
  genPolicy(out, Number(rest[0] ?? 1), Number(rest[1] ?? 16));
} else if (cmd === "peer") {
  await peer(out);
} else {
  console.error("usage: probe_store.mjs gen OUT [SEED] [STORES] [ENTRIES] | peer OUT");
  process.exit(2);
}
