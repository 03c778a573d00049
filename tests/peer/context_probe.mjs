// Differential probe: the messages openclaw@2026.7.1 sends a model for a transcript, from
// the peer's own modules, composed as the embedded runner composes them before a call:
// SessionManager.buildSessionContext → sanitizeSessionHistory → validateReplayTurns (the
// transcript policy of the model's API, no provider plugin) → convertToLlm.
//
//   node context_probe.mjs MANIFEST
//
// MANIFEST is a JSON file [{file, api, modelId}] (api/modelId may be null). Prints
// [{file, messages} | {file, error}] as JSON. Run it on copies: nothing is meant to be
// written, but SessionManager owns the files it opens.
// Environment: OPENCLAW_PEER_DIST (dist/ of the package).

import fs from "node:fs";
import path from "node:path";

const DIST =
  process.env.OPENCLAW_PEER_DIST ??
  "/root/.cache/openclaw-peer/openclaw-2026.7.1/node_modules/openclaw/dist/";
const imp = (f) => import(path.join(DIST, f));

const sm = await imp("session-manager-BKz2VYho.js");
const proxy = await imp("proxy-BzhBz8iM.js");
const attempt = await imp("attempt.model-diagnostic-events-Dg8sP6iR.js");
const policyMod = await imp("tool-result-middleware-B8t-_qCu.js");
const SessionManager = sm.t;
const convertToLlm = proxy.H;
const sanitizeSessionHistory = attempt.x;
const validateReplayTurns = attempt.S;
const resolveTranscriptPolicy = policyMod.s;

// The model-snapshot bookkeeping is the only write the sanitiser makes: kept in memory.
const sessionState = { getEntries: () => [], appendCustomEntry: () => {} };

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = [];
for (const c of cases) {
  try {
    const ctx = SessionManager.open(c.file).buildSessionContext();
    const modelApi = c.api ?? undefined;
    const modelId = c.modelId ?? undefined;
    const policy = resolveTranscriptPolicy({ modelApi, modelId });
    const sanitized = await sanitizeSessionHistory({
      messages: ctx.messages,
      modelApi,
      modelId,
      sessionManager: sessionState,
      policy,
    });
    const validated = await validateReplayTurns({ messages: sanitized, modelApi, modelId, policy });
    out.push({ file: c.file, messages: JSON.parse(JSON.stringify(convertToLlm(validated))) });
  } catch (e) {
    out.push({ file: c.file, error: String(e?.message ?? e) });
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
