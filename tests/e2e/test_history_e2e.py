"""Memory history against the real gateway's workspace: the root files the gateway seeds are kept
with memory/; a MEMORY.md rewritten to a few entries and raw Candidate: lines is warned by
health and restored by the one-file rewind it names; after a rewind of memory/, the next
checkpoint writes the handoff from the live transcript again.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import uuid
from pathlib import Path

import pytest

from memwarden.settings.config import defaults
from support.cli import run_subprocess

pytestmark = pytest.mark.e2e


def memwarden(gateway, env: dict[str, str], *arguments: str) -> dict:
    result = run_subprocess("--state-dir", gateway.state_dir, "--json", *arguments, env=env)
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_history_keeps_seeded_root_files_guards_memory_md_and_rewinds(gateway_factory, tmp_path):
    gateway = gateway_factory()
    env = dict(gateway.env)
    env.update(
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        OPENCLAW_GATEWAY_TOKEN=gateway.token,
        MEMWARDEN_HEALTH_DISABLED_CHECKS=json.dumps(["disk:*", "jobs.stale:*"]),
    )
    first_words = f"the kestrel is {uuid.uuid4().hex[:6]}"
    gateway.agent_turn(f"Please remember this: {first_words}.")
    gateway.agent_turn("And plan the migration for Tuesday.")
    roots = set(defaults().history.root_files)
    seeded = sorted(p.name for p in gateway.workspace.glob("*.md") if p.name in roots)
    assert {"AGENTS.md", "SOUL.md"} <= set(seeded), seeded

    first = memwarden(gateway, env, "checkpoint")["agents"][0]
    assert first["outcome"] == "written", first
    shown = memwarden(gateway, env, "history", "show", first["snapshot"])
    kept = {item["path"] for item in shown["file_list"]}
    assert {"memory/ACTIVE_CONTEXT.md", *seeded} <= kept, kept

    # Consolidation rewrites MEMORY.md between two timer runs; health's scan catches it.
    lines = [f"- [FACT] fact {n:02d}: kept about the user" for n in range(40)]
    original = ("# MEMORY.md\n\n## Facts\n" + "\n".join(lines) + "\n").encode()
    (gateway.workspace / "MEMORY.md").write_bytes(original)
    memwarden(gateway, env, "health", "--no-alert")
    rewritten = "# MEMORY.md\n" + "\n".join(lines[:5]) + "\n- Candidate: likes kestrels\n"
    (gateway.workspace / "MEMORY.md").write_text(rewritten)
    memory_before = fingerprint(gateway.workspace / "memory")

    checks = memwarden(gateway, env, "health", "--no-alert")["checks"]
    (warning,) = [c for c in checks if c["key"] == "memory.rewrite:main:MEMORY.md"]
    assert "MEMORY.md lost 35 of 40 entries (88 %)" in warning["message"]
    assert "gained 1 raw Candidate: line(s)" in warning["message"]
    command = shlex.split(warning["details"]["command"])
    assert command[1:3] == ["history", "rewind"] and command[-2:] == ["--path", "MEMORY.md"]
    rewound = memwarden(gateway, env, *command[1:])
    assert [(f["path"], f["status"]) for f in rewound["files"]] == [("MEMORY.md", "restored")]
    assert (gateway.workspace / "MEMORY.md").read_bytes() == original
    assert fingerprint(gateway.workspace / "memory") == memory_before

    # A later turn, checkpointed; then memory/ rewound to the first checkpoint's snapshot.
    later_words = f"the osprey is {uuid.uuid4().hex[:6]}"
    gateway.agent_turn(f"Note too: {later_words}.")
    assert memwarden(gateway, env, "checkpoint")["agents"][0]["outcome"] == "written"
    handoff = gateway.workspace / "memory" / "ACTIVE_CONTEXT.md"
    assert later_words in handoff.read_text()
    memwarden(gateway, env, "history", "rewind", first["snapshot"], "--path", "memory")
    assert later_words not in handoff.read_text()

    again = memwarden(gateway, env, "checkpoint")["agents"][0]

    assert again["outcome"] == "written", again
    assert later_words in handoff.read_text()
    daily = sorted((gateway.workspace / "memory").glob("20??-??-??.md"))
    assert sum(path.read_text().count(later_words) for path in daily) == 1
