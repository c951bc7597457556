"""Root memory guard: MEMORY.md rewritten from 160 entries to 20 plus raw Candidate: lines is caught
by health's own scan, named with the one-file rewind that restores it exactly."""

from __future__ import annotations

import hashlib
import shlex
from datetime import timedelta
from pathlib import Path

import pytest

from memwarden.history import records
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.health import T0, HealthRunner
from support.history import write_tree

SECTIONS = ("People", "Projects", "Preferences", "Decisions")


def original_memory() -> bytes:
    lines = ["# MEMORY.md", ""]
    for number in range(160):
        if number % 40 == 0:
            lines += ["", f"## {SECTIONS[number // 40]}", ""]
        lines.append(f"- [FACT] entry {number:03d}: something the agent must not forget")
    return ("\n".join(lines) + "\n").encode()


def consolidated(original: bytes) -> bytes:
    """What a bad consolidation leaves: 20 of the entries and raw Candidate: lines."""
    kept = [line for line in original.decode().splitlines() if "entry 0" in line][:20]
    candidates = [f"- Candidate: user might like topic {n} (score 0.{n})" for n in range(12)]
    return ("# MEMORY.md\n\n## People\n" + "\n".join(kept + candidates) + "\n").encode()


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def memory_rewrite_results(result) -> list[dict]:
    return [c for c in result.data["checks"] if c["key"].startswith("memory.rewrite")]


@pytest.fixture
def state(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    write_tree(state.workspace, {"MEMORY.md": original_memory(), "USER.md": b"# User\n- Sam\n"})
    write_tree(
        state.workspace / "memory",
        {"2026-11-21.md": b"# daily\n- did things\n", "ACTIVE_CONTEXT.md": b"# context\n"},
    )
    return state


def test_memory_md_rewritten_is_warned_by_health_and_one_file_rewind_restores_it(
    state, capsys, monkeypatch
):
    runner = HealthRunner(state.state_dir)
    first = runner.run(at=T0)
    (ok,) = memory_rewrite_results(first)
    assert (ok["key"], ok["status"]) == ("memory.rewrite", "ok")

    original = (state.workspace / "MEMORY.md").read_bytes()
    (state.workspace / "MEMORY.md").write_bytes(consolidated(original))
    memory_before = fingerprint(state.workspace / "memory")
    user_before = (state.workspace / "USER.md").read_bytes()

    second = runner.run(at=T0 + timedelta(minutes=5))

    (warning,) = memory_rewrite_results(second)
    assert (warning["key"], warning["status"]) == ("memory.rewrite:main:MEMORY.md", "warning")
    message = warning["message"]
    assert message.startswith("agent main: MEMORY.md lost 140 of 160 entries (88 %), ")
    assert "lost 3 of 5 sections" in message and "gained 12 raw Candidate: line(s)" in message
    assert '"- [FACT] entry 020: something the agent must not forget"' in message
    command = warning["details"]["command"]
    assert message.endswith(command) and command.endswith(" --path MEMORY.md")

    argv = shlex.split(command)
    assert argv[:3] == ["memwarden", "history", "rewind"]
    with monkeypatch.context() as patched:
        patched.setattr(JobContext, "now", lambda self: T0 + timedelta(minutes=7))
        rewound = run_cli(capsys, "--state-dir", state.state_dir, "--json", *argv[1:])
    assert rewound.exit_code == 0, rewound.stderr
    assert [(f["path"], f["status"]) for f in rewound.json()["files"]] == [
        ("MEMORY.md", "restored")
    ]
    assert (state.workspace / "MEMORY.md").read_bytes() == original
    assert fingerprint(state.workspace / "memory") == memory_before
    assert (state.workspace / "USER.md").read_bytes() == user_before

    third = runner.run(at=T0 + timedelta(minutes=10))
    (resolved,) = memory_rewrite_results(third)
    assert (resolved["key"], resolved["status"]) == ("memory.rewrite", "ok")
    assert "memory.rewrite:main:MEMORY.md" in [n["key"] for n in third.data["alerts"]["notices"]]


def test_rewinding_memory_md_to_a_shorter_version_is_not_taken_for_a_destructive_rewrite(
    state, capsys, monkeypatch
):
    runner = HealthRunner(state.state_dir)
    short = b"# MEMORY.md\n\n- [FACT] one\n- [FACT] two\n"
    (state.workspace / "MEMORY.md").write_bytes(short)
    runner.run(at=T0)
    context = runner.context()
    try:
        small = records.latest(context.state, "main").id
    finally:
        context.close()
    (state.workspace / "MEMORY.md").write_bytes(original_memory())  # it grows to 160 entries
    runner.run(at=T0 + timedelta(minutes=5))

    with monkeypatch.context() as patched:
        patched.setattr(JobContext, "now", lambda self: T0 + timedelta(minutes=7))
        rewound = run_cli(
            capsys, "--state-dir", state.state_dir, "--json", "history", "rewind", small,
            "--path", "MEMORY.md",
        )  # fmt: skip
    assert rewound.exit_code == 0, rewound.stderr
    assert (state.workspace / "MEMORY.md").read_bytes() == short
    assert rewound.json()["rewound_snapshot"] is not None  # what the rewind chose, on record

    after = runner.run(at=T0 + timedelta(minutes=10))
    (check,) = memory_rewrite_results(after)
    assert (check["key"], check["status"]) == ("memory.rewrite", "ok")


def test_health_scan_reports_a_missing_workspace_and_snapshots_nothing(state, tmp_path):
    import json5

    from support.deployments import write_json5_config

    config = json5.loads(state.config_path.read_text())
    config["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(tmp_path / "unmounted")},
    ]
    write_json5_config(state.config_path, config)
    result = HealthRunner(state.state_dir).run(at=T0)
    (failed,) = [c for c in result.data["checks"] if c["key"].startswith("history.snapshot")]
    assert failed["key"] == "history.snapshot:ops" and failed["status"] == "warning"
    assert "does not exist" in failed["message"]


def test_health_dry_run_takes_no_snapshot(state):
    HealthRunner(state.state_dir).run(at=T0, dry_run=True)
    runner = HealthRunner(state.state_dir)
    context = runner.context()
    try:
        assert context.state.events(types=["snapshot.taken"]) == []
    finally:
        context.close()
