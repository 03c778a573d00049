// The workspace bootstrap files as openclaw@2026.7.1 injects them into a turn's system
// prompt (resolveBootstrapFilesForRun, buildBootstrapContextForFiles and the report's
// buildBootstrapInjectionStats), for differential tests.
//
//   node bootstrap_probe.mjs CASES.json   CASES: [{workspaceDir, config, sessionKey, agentId}]
//                                          prints one JSON line per case: the stats rows
//                                          {name, path, missing, rawChars, injectedChars, truncated}
//
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import fs from "node:fs";
import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const files = await import(path.join(DIST, "bootstrap-files-DYOYF1PC.js"));
const budget = await import(path.join(DIST, "bootstrap-budget-DFC5I5_X.js"));
const resolveBootstrapFilesForRun = files.o;
const buildBootstrapContextForFiles = files.n;
const buildBootstrapInjectionStats = budget.r;

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
for (const c of cases) {
  const params = {
    workspaceDir: c.workspaceDir,
    config: c.config,
    sessionKey: c.sessionKey,
    sessionId: "probe",
    agentId: c.agentId,
  };
  const bootstrapFiles = await resolveBootstrapFilesForRun(params);
  const injectedFiles = buildBootstrapContextForFiles(bootstrapFiles, params);
  console.log(JSON.stringify(buildBootstrapInjectionStats({ bootstrapFiles, injectedFiles })));
}
