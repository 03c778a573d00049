// The gateway's compaction of a transcript that needs repair (openclaw@2026.7.1's
// compactEmbeddedAgentSession: repairSessionFileIfNeeded under the lock, then
// SessionManager.open and prepareCompaction on what it wrote), for differential tests.
//
//   node repair_compact_probe.mjs FILE KEEP...   repairs FILE in place, then prints one JSON
//                                                line: {repair: {repaired, droppedLines},
//                                                plans: {KEEP: {compactable, firstKeptEntryId,
//                                                isSplitTurn, tokensBefore, messagesToSummarize,
//                                                turnPrefixMessages, readFiles, modifiedFiles}}}
//
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const sm = await import(path.join(DIST, "session-manager-BKz2VYho.js"));
const proxy = await import(path.join(DIST, "proxy-BzhBz8iM.js"));
const repair = sm.u;
const SessionManager = sm.t;
const prepareCompaction = proxy.j;

const strip = (x) => JSON.parse(JSON.stringify(x));
const [file, ...keeps] = process.argv.slice(2);
const r = await repair({ sessionFile: file });
const branch = SessionManager.open(file).getBranch();
const plans = {};
for (const k of keeps) {
  const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: Number(k) });
  if (!prep.ok || !prep.value) {
    plans[k] = { compactable: false };
    continue;
  }
  const p = prep.value;
  const modified = new Set([...p.fileOps.edited, ...p.fileOps.written]);
  plans[k] = {
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
console.log(JSON.stringify({ repair: { repaired: r.repaired, droppedLines: r.droppedLines ?? 0 }, plans }));
