"""The `memory.rewrite` check: a destructive rewrite warns until a rewind restores the file."""

from __future__ import annotations

from memwarden.health.checks.memory_rewrite import (
    KEY,
    SNAPSHOT_KEY,
    grade_rewrites,
    grade_snapshots,
)
from memwarden.health.model import Status


def rewrite(event_id: int, agent: str, path: str, previous: str = "aaaa1111") -> dict:
    return {
        "id": event_id,
        "type": "memory.rewrite",
        "agent_id": agent,
        "data": {
            "file": path,
            "snapshot": "bbbb2222",
            "previous_snapshot": previous,
            "dropped_entries": 140,
            "entries_before": 160,
            "command": f"memwarden history rewind {previous} --path {path}",
            "message": f"agent {agent}: {path} lost 140 of 160 entries (88 %)",
        },
    }


def rewind(event_id: int, agent: str, *restored: str) -> dict:
    return {
        "id": event_id,
        "type": "rewind.done",
        "agent_id": agent,
        "data": {"restored": list(restored)},
    }


def test_grade_rewrites_none_in_window_is_ok():
    (result,) = grade_rewrites([], 24)
    assert (result.key, result.status) == (KEY, Status.OK)
    assert "in the last 24 h" in result.message


def test_grade_rewrites_open_rewrite_is_a_warning_naming_file_and_command():
    (result,) = grade_rewrites([rewrite(1, "main", "MEMORY.md")], 24)
    assert (result.key, result.status) == (f"{KEY}:main:MEMORY.md", Status.WARNING)
    assert result.message == "agent main: MEMORY.md lost 140 of 160 entries (88 %)"
    assert result.details["command"] == "memwarden history rewind aaaa1111 --path MEMORY.md"
    assert (result.value, result.threshold) == (140, 160)


def test_grade_rewrites_rewind_of_that_file_resolves_it_but_not_the_others():
    events = [
        rewrite(1, "main", "MEMORY.md"),
        rewrite(2, "main", "USER.md"),
        rewrite(3, "ops", "MEMORY.md"),
        rewind(4, "main", "MEMORY.md", "memory/2026-11-21.md"),
    ]
    keys = [result.key for result in grade_rewrites(events, 24)]
    assert keys == [f"{KEY}:main:USER.md", f"{KEY}:ops:MEMORY.md"]


def test_grade_rewrites_a_rewrite_after_the_rewind_is_open_again():
    events = [
        rewrite(1, "main", "MEMORY.md"),
        rewind(2, "main", "MEMORY.md"),
        rewrite(3, "main", "MEMORY.md", previous="cccc3333"),
    ]
    (result,) = grade_rewrites(events, 24)
    assert result.details["previous_snapshot"] == "cccc3333"


def test_grade_snapshots_warns_per_agent_whose_workspace_failed():
    (result,) = grade_snapshots([("ops", "/srv/ops: the agent's workspace does not exist")])
    assert (result.key, result.status) == (f"{SNAPSHOT_KEY}:ops", Status.WARNING)
    assert "does not exist" in result.message


def test_grade_snapshots_one_warning_for_an_error_every_agent_shares():
    failures = [(f"agent{n}", "git: git not found; memory history needs git") for n in range(7)]
    failures.append(("ops", "/srv/ops: the agent's workspace does not exist"))
    results = grade_snapshots(failures)
    assert [r.key for r in results] == [SNAPSHOT_KEY, f"{SNAPSHOT_KEY}:ops"]
    assert results[0].message.startswith("7 agents (agent0, agent1, agent2, agent3, agent4 and 2 ")
    assert results[0].value == 7
