// Concurrency probe: appends messages to one transcript with the real program's appender
// (openclaw@2026.7.1 `appendSessionTranscriptMessage`: the session write lock, leaf lookup,
// one JSONL row per message), while clawstate appends to the same file.
//
//   node append_probe.mjs FILE N TAG [openclaw]   prints READY once the modules are loaded,
//                                                 then appends N user messages "TAG-<i>" and
//                                                 prints {"appended": N, "ms": …}
//
// The trailing `openclaw` argument makes this process look like OpenClaw to lock owners
// (the argv rule of store.md §5.4), so clawstate treats its lock as legitimate.
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const [file, n, tag] = process.argv.slice(2);
const acc = await import(path.join(DIST, "session-accessor-B4Nfa9CN.js"));
const append = acc.J; // appendSessionTranscriptMessage
console.log("READY");
const t = Date.now();
for (let i = 0; i < Number(n); i++) {
  await append({
    transcriptPath: file,
    message: { role: "user", content: [{ type: "text", text: `${tag}-${i}` }], timestamp: Date.now() },
  });
}
console.log(JSON.stringify({ appended: Number(n), ms: Date.now() - t }));
