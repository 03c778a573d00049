// Differential probe: where the real program (openclaw@2026.7.1) finds each entry's
// transcript (`resolveSessionFilePath`, the gateway's own resolution).
//
//   node resolve_probe.mjs STORE AGENT     prints {"<key>": "<path>" | {"error": "…"}}
//
// OPENCLAW_STATE_DIR is the state dir the gateway would run with (its agents' sessions
// directories are the siblings it accepts). Environment: OPENCLAW_PEER_DIST.

import fs from "node:fs";
import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const paths = await import(path.join(DIST, "paths-C2C4lJH6.js"));
const resolveSessionFilePath = paths.a;
const resolveSessionFilePathOptions = paths.o;

const [store, agentId] = process.argv.slice(2);
const entries = JSON.parse(fs.readFileSync(store, "utf8"));
const opts = resolveSessionFilePathOptions({ storePath: store, agentId });
const out = {};
for (const [key, entry] of Object.entries(entries)) {
  try {
    out[key] = resolveSessionFilePath(entry.sessionId, entry, opts);
  } catch (e) {
    out[key] = { error: String(e.message ?? e) };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
