#!/usr/bin/env python3
"""Regenerates the demo state dir (examples/demo): two agents, realistic entries and
transcripts. Seeded, so the output is stable; BASE is the demo's "now"."""
import datetime, json, random, uuid
from pathlib import Path

random.seed(42)
BASE = int(datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.timezone.utc).timestamp() * 1000)
ROOT = Path(__file__).resolve().parent / "demo"

def sid():
    return str(uuid.UUID(int=random.getrandbits(128), version=4))

main = {
    "agent:main:main": {"sessionId": sid(), "updatedAt": BASE - 120000, "sessionStartedAt": BASE - 7200000, "chatType": "direct", "thinkingLevel": "medium", "inputTokens": 18422, "outputTokens": 3120, "totalTokens": 21542, "totalTokensFresh": True, "model": "claude-sonnet-4", "modelProvider": "anthropic", "origin": {"provider": "telegram", "chatType": "direct", "from": "telegram:5551234", "to": "telegram:bot"}, "lastChannel": "telegram", "lastTo": "5551234"},
    "agent:main:telegram:group:-1001234567": {"sessionId": sid(), "updatedAt": BASE - 3600000, "chatType": "group", "channel": "telegram", "subject": "Family", "groupActivation": "mention", "totalTokens": 54210},
    "agent:main:discord:channel:889900": {"sessionId": sid(), "updatedAt": BASE - 86400000 * 3, "chatType": "channel", "channel": "discord", "label": "ops-room"},
    "agent:main:cron:nightly-digest": {"sessionId": sid(), "updatedAt": BASE - 86400000, "status": "done"},
    "agent:main:subagent:" + sid(): {"sessionId": sid(), "updatedAt": BASE - 600000, "spawnedBy": "agent:main:main", "spawnDepth": 1, "subagentRole": "leaf", "label": "research"},
    "agent:main:hook:gmail:18c2f": {"sessionId": sid(), "updatedAt": BASE - 86400000 * 40},
}
work = {
    "agent:work:main": {"sessionId": sid(), "updatedAt": BASE - 900000, "modelOverride": "gpt-5.5", "providerOverride": "openai", "modelOverrideSource": "user"},
    "agent:work:slack:channel:c042:thread:1719.22": {"sessionId": sid(), "updatedAt": BASE - 7200000, "chatType": "channel", "channel": "slack"},
}

for agent, store in (("main", main), ("work", work)):
    d = ROOT / "agents" / agent / "sessions"
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    (d / "sessions.json").write_text(json.dumps(store, indent=2, ensure_ascii=False))
    for e in store.values():
        ts = e["updatedAt"] - 60000
        iso = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        lines = [
            {"type": "session", "version": 3, "id": e["sessionId"], "timestamp": iso, "cwd": "/home/demo"},
            {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": iso, "message": {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": ts}},
            {"type": "message", "id": "e5f6a7b8", "parentId": "a1b2c3d4", "timestamp": iso, "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi! How can I help?"}], "timestamp": ts + 1500}},
        ]
        (d / f"{e['sessionId']}.jsonl").write_text("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
