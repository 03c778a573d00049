// The gateway's transcript repair (openclaw@2026.7.1's repairSessionFileIfNeeded) on files
// we made, for differential tests.
//
//   node repair_probe.mjs FILE...    repair each FILE in place; prints one JSON line each:
//                                    {repaired, droppedLines, reason} or {threw: "Name: message"}
//
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const sm = await import(path.join(DIST, "session-manager-BKz2VYho.js"));
const repair = sm.u;

for (const file of process.argv.slice(2)) {
  try {
    const r = await repair({ sessionFile: file });
    console.log(JSON.stringify({ repaired: r.repaired, droppedLines: r.droppedLines, reason: r.reason ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ threw: `${e?.constructor?.name}: ${e?.message}` }));
  }
}
