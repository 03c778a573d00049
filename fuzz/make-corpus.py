#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ from the spec's examples, the demo state
dir and the shapes the test fixtures use. Small on purpose (a few KB per target): the
fuzzer grows its own corpus in its output directory, not here.

    python3 fuzz/make-corpus.py        # rewrites fuzz/corpus/
"""
import json, os, re, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "corpus")
SPEC = os.path.join(ROOT, "..", "shared", "spec")  # optional: the steering repo's spec

def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def read(p):
    with open(os.path.join(ROOT, p), "rb") as f:
        return f.read()

shutil.rmtree(OUT, ignore_errors=True)

# ---- store -------------------------------------------------------------------------------
put("store", "demo-work", read("examples/demo/agents/work/sessions/sessions.json"))
put("store", "demo-main", read("examples/demo/agents/main/sessions/sessions.json")[:1400].rsplit(b"\n  \"", 1)[0] + b"\n}")
put("store", "empty-object", "{}")
put("store", "js-only-json", r'{"a":{"sessionId":"x","updatedAt":1e999},"b\ud83d":{"sessionId":"y","updatedAt":2,"label":"\ud800","n":-1e999,"u":1e-999,"r":"\udbff\udfff ' + "\U0010f7ff" + r'"}}')
put("store", "empty-file", "")
put("store", "not-object", "[1, 2]")
put("store", "bom", "\ufeff{\"agent:main:main\": {\"sessionId\": \"abc\", \"updatedAt\": 1}}")
put("store", "dupes-and-index-keys", '{"b": {"sessionId": "x", "updatedAt": 1}, "42": 5, "a": {}, "b": {"updatedAt": 2}, "7": {"sessionId": "../evil"}}')
put("store", "legacy-fields", json.dumps({
    "agent:main:telegram:group:-1001": {"sessionId": "  sess1  ", "updatedAt": 1767225000000.5,
        "provider": "telegram", "lastProvider": "Telegram", "room": "#r", "lastTo": " 5 ",
        "lastThreadId": {}, "origin": {"provider": "telegram", "threadId": 7, "chatType": "DM"},
        "deliveryContext": {"channel": "telegram", "to": "5", "threadId": 2.5},
        "model": "  gpt  ", "modelProvider": " "},
    "agent:main:main": {"sessionId": "s.checkpoint.0b6b5a3e-1f57-4e8e-9a6e-0c3f1d2e4a5b", "updatedAt": "x"},
    "global": None, "unknown": [1],
}, indent=2))
put("store", "delivery-and-plugins", json.dumps({
    "agent:main:slack:channel:c1:thread:17": {"sessionId": "0b6b5a3e-1f57-4e8e-9a6e-0c3f1d2e4a5b",
        "updatedAt": 1767225000000, "route": {"channel": "slack", "target": {"to": "c1", "chatType": "channel"},
        "thread": {"id": "17", "kind": "reply"}}, "pendingFinalDelivery": "yes",
        "pendingFinalDeliveryAttemptCount": 1.5, "pendingFinalDeliveryContext": {"channel": "Telegram", "to": " 5 "},
        "pluginExtensions": {" p ": {" ns ": 1, "": 2, "b": None}, "q": 5},
        "pluginExtensionSlotKeys": {"p": {"a": "slotA", "d": "toString", "e": 4}},
        "skillsSnapshot": {"prompt": "x" * 600, "resolvedSkills": [{"x": 1}], "skills": []},
        "sendPolicy": "deny", "customField": {"b": [1, {"2": 3, "a": None}], "1": 2}},
}))
put("store", "prompt-ref", json.dumps({"agent:main:main": {"sessionId": "abc", "skillsSnapshot": {
    "promptRef": {"version": 1, "algorithm": "sha256", "hash": "0" * 64, "bytes": 600}, "skills": []}}}))
put("store", "malformed", '{"agent:main:main": {"sessionId": "abc",')

# ---- transcript --------------------------------------------------------------------------
spec_tr = os.path.join(SPEC, "transcript.md")
blocks = []
if os.path.exists(spec_tr):
    blocks = [b for lang, b in re.findall(r"```(\w*)\n(.*?)```", open(spec_tr).read(), re.S) if lang == "jsonl"]
for i, b in enumerate(blocks[:3]):
    put("transcript", f"spec-{i}", b.encode()[:1500].rsplit(b"\n", 1)[0] + b"\n")
put("transcript", "demo", read("examples/demo/agents/main/sessions/23b8c1e9-3924-46de-beb1-3b9046685257.jsonl"))
H = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
def m(i, p, role, content, **kw):
    d = {"type": "message", "id": i, "parentId": p, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": role, "content": content, "timestamp": 1767225601000, **kw}}
    return json.dumps(d, separators=(",", ":")) + "\n"
put("transcript", "branches-leaf", H + m("a1", None, "user", "hi") + m("a2", "a1", "assistant", "yo", stopReason="stop")
    + m("b2", "a1", "assistant", [{"type": "text", "text": "other"}])
    + '{"type":"leaf","id":"l1","parentId":"b2","timestamp":"t","targetId":"a2"}\n'
    + '{"type":"label","id":"lb","parentId":"a2","timestamp":"t","targetId":"a2","label":"mark"}\n'
    + '{"type":"custom","customType":"x","data":{}}\n')
put("transcript", "tool-calls-torn", H + m("a1", None, "user", [{"type": "text", "text": " "}])
    + m("a2", "a1", "assistant", [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"p": 1}}])
    + m("a3", "a2", "assistant", [], stopReason="error")
    + m("a4", "a3", "user", [{"type": "image", "data": "!!notb64", "mimeType": "image/png"}])
    + 'not json\r\n\n  \n{"type":"message","id":"a5","parentId":"a4","mess')
put("transcript", "v1", '{"type":"session","id":"s","timestamp":"t","cwd":"/"}\n'
    '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}\n'
    '{"type":"message","timestamp":"t","message":{"role":"hookMessage","content":"b"}}\n'
    '{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":1}\n')
put("transcript", "v2-side", '{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/"}\n'
    + m("a1", None, "user", "q") + m("a2", "a1", "toolResult", {"x": 1}, toolCallId="c")
    + '{"type":"message","id":"s1","parentId":"a1","appendMode":"side","timestamp":"t","message":{"role":"user","content":"side"}}\n'
    + '{"type":"compaction","id":"c1","parentId":"a2","timestamp":"t","summary":"sum","firstKeptEntryId":"a2","tokensBefore":9}\n')
put("transcript", "no-header", '\ufeff' + m("x1", None, "user", "late header") + H)
put("transcript", "empty", "")
# What JSON.parse reads and serde_json alone refuses: lone surrogates, out-of-range numbers,
# and reserved code points (U+10F7FF..U+10FFFF) raw and escaped.
put("transcript", "js-only-json", H + "\n".join([
    r'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi \ud83d","timestamp":1}}',
    r'{"type":"message","id":"b\udc00","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":1e999,"output":-1e999,"totalTokens":1e-999}}}',
    r'{"type":"message","id":"c","parentId":"b\udc00","timestamp":"t","message":{"role":"user","content":"\udbfe\udc00 \udbfd\udfff ' + "\U0010ffff" + r'"}}',
]) + "\n")

# ---- session_key: key \0 agent \0 other --------------------------------------------------
keys = ["agent:main:main", "main", " Agent:Ops:Work ", "global", "agent:main:telegram:group:-1001:thread:77",
        "agent:main:matrix:channel:!RoomX:Thread:AbC", "agent:main:signal:group:AbCd=", "discord:guild-1:channel-2",
        "agent:main:explicit:model-run-0b6b5a3e-1f57-4e8e-9a6e-0c3f1d2e4a5b", "agent:main:cron:job1:run:r1",
        "agent:main:subagent:x:acp:y", "agent:main:whatsapp:group:123@g.us", "agent::bad", "İnstagram:DM:ΣΑΣ",
        "agent:main:direct:user1", "agent:x:matrix:group:Ab:thread:"]
for i, k in enumerate(keys):
    extra = ["", "\x00ops", "\x00main\x00agent:main:direct:user1", '\x00My Agent\x00{"chatType":"group","channel":"slack"}'][i % 4]
    put("session_key", f"k{i:02}", k + extra)

# ---- units: text \0 unit selector --------------------------------------------------------
for i, u in enumerate(["30d", "1h30m", "1.5h", "500", "2m 3s", "10mb", "5K", "1.5mb", "0.5s", " 7 ", "1e3ms",
                      "1d2h3m4s5ms", "99999999999999999d", "-5", "kb", "2g\x00\x02"]):
    put("units", f"u{i:02}", u)

# ---- config ------------------------------------------------------------------------------
put("config", "demo", read("examples/demo/openclaw.json"))
put("config", "json5", """// JSON5
{
  agents: { list: [ { id: 'main', default: true }, { id: "Work Bot", workspace: '~/w' }, ], defaults: { compaction: { reserveTokens: 2e4 } } },
  session: { mainKey: 'Main', scope: 'per-sender', dmScope: 'per-channel-peer', store: '~/s/{agentId}/sessions.json',
    reset: { mode: 'daily', atHour: 4, idleMinutes: 120 }, resetByType: { group: { mode: 'idle', idleMinutes: 30 } },
    resetByChannel: { telegram: { mode: 'idle' } }, sendPolicy: { default: 'allow', rules: [ { action: 'deny', match: { channel: 'discord', chatType: 'group' } } ] },
    maintenance: { mode: 'enforce', pruneAfter: '30d', maxEntries: 500, rotateBytes: '10mb', maxDiskBytes: '1gb', highWaterBytes: '800mb', resetArchiveRetention: false },
    writeLock: { acquireTimeoutMs: Infinity, staleMs: 1800000 } },
  gateway: { port: 18789, }, /* trailing */
}
""")
put("config", "invalid", '{"session": {"scope": 5, "mainKey": []}, "agents": {"list": [{"id": 3}]}}')
put("config", "empty", "")

# ---- patch: store \0 patch \0 key --------------------------------------------------------
st = json.dumps({"agent:main:main": {"sessionId": "0b6b5a3e-1f57-4e8e-9a6e-0c3f1d2e4a5b", "updatedAt": 1767225000000,
                 "label": "x", "nested": {"a": 1, "b": [1]}}, "agent:main:cron:old": {"sessionId": "old1", "updatedAt": 5}}, indent=2)
for i, (p, k) in enumerate([('{"sendPolicy":"deny"}', "main"), ('{"sendPolicy":"inherit","label":null}', "agent:main:main"),
                            ('{"sessionId":"../evil"}', "main"), ('{"sessionId":"New-Id_1.2"}', "old1"),
                            ('{"nested":{"a":null,"c":{"d":2}},"9":1}', "agent:main:cron:old"), ('{"sendPolicy":"maybe"}', "main"),
                            ('{"model":"  gpt  ","provider":"telegram","updatedAt":-1}', "AGENT:MAIN:MAIN"), ('{}', "nope")]):
    put("patch", f"p{i}", st + "\x00" + p + "\x00" + k)
put("patch", "default-store", '{"label":"y","skillsSnapshot":{"prompt":"' + "p" * 600 + '"}}')

total = 0
for t in sorted(os.listdir(OUT)):
    files = os.listdir(os.path.join(OUT, t))
    size = sum(os.path.getsize(os.path.join(OUT, t, f)) for f in files)
    total += size
    print(f"{t:12} {len(files):3} files {size:6} bytes")
