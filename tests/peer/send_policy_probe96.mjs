// Differential probe of the send-policy decision on agent-database entries against
// openclaw@2026.9.6: each case loads its entry from the agent database as the gateway does
// (loadSessionEntryReadOnly) and asks resolveSendPolicy (dist/send-policy-*.mjs).
//
//   node send_policy_probe96.mjs CASES.json OUT.json
//
// CASES.json: {stateDir, cfg, cases: [{key, channel?, chatType?}]}. OUT.json: one
// {decision, entryFound, delivery} per case. Environment: OPENCLAW_PEER_DIST.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const DIST = process.env.OPENCLAW_PEER_DIST;

async function importNamed(prefix, needs) {
  const exportsOf = (f) => {
    const src = fs.readFileSync(path.join(DIST, f), "utf8");
    return src.slice(src.lastIndexOf("export {"));
  };
  const file = fs
    .readdirSync(DIST)
    .find((f) => f.startsWith(prefix) && f.endsWith(".mjs") && new RegExp(`\\b${needs}\\b`).test(exportsOf(f)));
  if (!file) throw new Error(`no ${prefix}*.mjs exporting ${needs}`);
  const mod = await import(pathToFileURL(path.join(DIST, file)).href);
  const out = {};
  for (const m of exportsOf(file).matchAll(/(\w+) as (\w+)/g)) out[m[1]] = mod[m[2]];
  return out;
}

const [casesPath, outPath] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(casesPath, "utf8"));
process.env.OPENCLAW_STATE_DIR = input.stateDir;
process.env.OPENCLAW_LOG_LEVEL ??= "silent";
const P = await importNamed("send-policy-", "resolveSendPolicy");
const A = await importNamed("session-accessor.sqlite-entry-", "loadSessionEntryReadOnly");
const results = [];
for (const c of input.cases) {
  let entry;
  try {
    entry = A.loadSessionEntryReadOnly({ sessionKey: c.key, clone: false, env: process.env });
  } catch (err) {
    results.push({ error: String(err) });
    continue;
  }
  results.push({
    decision: P.resolveSendPolicy({
      cfg: input.cfg,
      entry,
      sessionKey: c.key,
      ...(c.channel !== undefined ? { channel: c.channel } : {}),
      ...(c.chatType !== undefined ? { chatType: c.chatType } : {}),
    }),
    entryFound: Boolean(entry),
    delivery: entry?.delivery ?? null,
  });
}
fs.writeFileSync(outPath, JSON.stringify(results, null, 1));
process.exit(0);
