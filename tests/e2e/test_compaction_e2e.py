"""The compaction watch on the real gateway: a compaction whose summary drops a decision and a
TODO is reported by the timer's jobs and what it dropped is kept in a memory file.

Compaction mode `default` (the gateway accepts the fake model's generic summary) and a small
`keepRecentTokens`, so the compaction takes the first turns out of the context; turns with a
`[DECISION]` and a `[TODO]`, then filler turns, then `sessions.compact`. Then, as the timers run
them (`-q`): `memwarden checkpoint` logs the lossy compaction naming the lost items and appends
them to the day's log; `memwarden health` warns naming the session and the items;
`memwarden compactions --json` lists it. A second checkpoint writes nothing again.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from harness import Gateway

from support.cli import run_subprocess

PROMPT_TOKENS = 40_000


def memwarden(gateway: Gateway, tmp_path: Path, *arguments: str):
    env = {
        **gateway.env,
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "MEMWARDEN_HEALTH_DISABLED_CHECKS": json.dumps(["disk:*", "jobs.stale:*"]),
    }
    return run_subprocess("--state-dir", gateway.state_dir, *arguments, env=env, timeout=180)


def test_lossy_compaction_is_reported_and_its_items_kept(gateway_factory, tmp_path):
    tag = uuid.uuid4().hex[:8]
    key = f"agent:main:e2e-compaction-{tag}"
    decision = f"[DECISION] store the heron ledger {tag} in PostgreSQL with nightly backups"
    todo = f"[TODO] renew the falconry permit {tag} before the inspection"
    # Small messages all fit in the gateway's default `keepRecentTokens` (20000): nothing would
    # be compacted away. Keep only the last few.
    recent = {"agents": {"defaults": {"compaction": {"keepRecentTokens": 40}}}}
    gateway = gateway_factory(compaction_mode="default", extra_config=recent)
    gateway.llm.prompt_tokens = PROMPT_TOKENS
    gateway.agent_turn_rpc(f"We agreed on this.\n{decision}", session_key=key)
    gateway.agent_turn_rpc(f"One more thing for later:\n{todo}", session_key=key)
    for turn in range(4):
        gateway.agent_turn_rpc(f"small talk number {turn} about the weather", session_key=key)

    payload = gateway.rpc("sessions.compact", {"key": key}, timeout=120)
    assert payload["compacted"] is True, payload
    session_id = gateway.session(key)["sessionId"]
    (compaction,) = [
        line for line in gateway.transcript(session_id) if line["type"] == "compaction"
    ]
    assert decision not in compaction["summary"] and todo not in compaction["summary"]

    checkpoint = memwarden(gateway, tmp_path, "-q", "checkpoint")
    assert checkpoint.exit_code == 0, checkpoint.stderr
    (line,) = [m for m in checkpoint.messages if "compaction of" in m]
    assert key in line and decision in line and todo in line, checkpoint.stderr
    raw = [text for text in checkpoint.stderr.splitlines() if "compaction of" in text]
    assert " WARNING " in raw[0] or raw[0].startswith("<4>"), raw

    logs = list((gateway.workspace / "memory").glob("20??-??-??.md"))
    kept = [
        path for path in logs if f"dropped by compaction `{compaction['id']}`" in path.read_text()
    ]
    assert len(kept) == 1, [path.read_text() for path in logs]
    text = kept[0].read_text()
    assert f"  - {decision}\n" in text and f"  - {todo}\n" in text

    health = memwarden(gateway, tmp_path, "--json", "health", "--no-alert")
    checks = {check["key"]: check for check in json.loads(health.stdout)["checks"]}
    (lossy,) = [check for name, check in checks.items() if name.startswith("compaction.lossy:")]
    assert lossy["status"] in ("warning", "critical"), lossy
    assert key in lossy["message"] and decision in lossy["message"] and todo in lossy["message"]
    quiet = memwarden(gateway, tmp_path, "-q", "health", "--no-alert")
    assert any(key in m and decision in m for m in quiet.messages), quiet.stderr

    listed = json.loads(memwarden(gateway, tmp_path, "--json", "compactions").stdout)
    (row,) = [row for row in listed["compactions"] if row["session"] == key]
    assert row["compaction"] == compaction["id"] and row["kept"] is True
    assert {item["text"] for item in row["lost"]} >= {decision, todo}

    again = memwarden(gateway, tmp_path, "-q", "checkpoint", "--force")
    assert again.exit_code == 0, again.stderr
    assert kept[0].read_text().count(compaction["id"]) == 1
