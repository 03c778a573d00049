// Differential probe: how openclaw@2026.7.1's `sessions_history` tool resolves and shows a
// sessionKey argument, from the peer's own functions (`resolveSessionReference`, the
// gateway's `sessions.resolve` handler `resolveSessionKeyFromResolveParams`,
// `resolveDisplaySessionKey`), composed as `createSessionsHistoryTool` composes them.
//
//   node session_key_probe.mjs CONFIG_JSON INPUT...
//
// The state dir is OPENCLAW_STATE_DIR (run it on a copy: the gateway canonicalises legacy
// alias keys in place). Prints [{input, ok, key?, displayKey?, error?}] as JSON.
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const imp = (f) => import(path.join(DIST, f));

const helpers = await imp("sessions-helpers-CHZmugbQ.js");
const resolve = await imp("sessions-resolve-pnU6LoeF.js");
const resolveMainSessionAlias = helpers.c;
const resolveSessionReference = helpers.l;
const resolveDisplaySessionKey = helpers.o;
const shouldResolveSessionIdInput = helpers.d;
const resolveSessionKeyFromResolveParams = resolve.t;

const [cfgText, ...inputs] = process.argv.slice(2);
const cfg = JSON.parse(cfgText);
const { mainKey, alias } = resolveMainSessionAlias(cfg);
const out = [];
for (const input of inputs) {
  const raw = input.trim();
  if (shouldResolveSessionIdInput(raw)) {
    // resolveSessionReferenceByKeyOrSessionId: sessions.resolve {key}, then {sessionId}
    // with includeGlobal/includeUnknown (no sandbox).
    let r = await resolveSessionKeyFromResolveParams({ cfg, p: { key: raw } });
    if (!(r.ok && r.key)) {
      r = await resolveSessionKeyFromResolveParams({
        cfg,
        p: { sessionId: raw, includeGlobal: true, includeUnknown: true },
      });
    }
    if (r.ok && r.key) {
      out.push({ input, ok: true, key: r.key, displayKey: resolveDisplaySessionKey({ key: r.key, alias, mainKey }) });
    } else {
      out.push({ input, ok: false, error: r.error?.message ?? "No session found" });
    }
    continue;
  }
  const ref = await resolveSessionReference({ sessionKey: input, alias, mainKey, restrictToSpawned: false });
  out.push(ref.ok ? { input, ok: true, key: ref.key, displayKey: ref.displayKey } : { input, ok: false, error: ref.error });
}
process.stdout.write(JSON.stringify(out) + "\n");
