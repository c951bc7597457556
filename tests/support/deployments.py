"""Build throwaway gateway state dirs from the real captures in tests/fixtures.

Each helper copies one capture into a temporary folder laid out as the gateway lays out its
state dir, and writes a JSON5 `openclaw.json` (comments, unquoted keys, trailing commas) whose
workspace points into that folder, never at the captures' `/srv/openclaw/...`. The captures
themselves are never modified.

    state = make_sqlite_era_state(tmp_path)
    deployment = discover(state.state_dir)
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json5
import orjson

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SQLITE_ERA_FIXTURE = FIXTURES / "openclaw-2026.9.6"
FILE_ERA_FIXTURE = FIXTURES / "openclaw-2026.7.35"


@dataclass(frozen=True)
class StateCopy:
    """Paths of a state dir built from a capture."""

    state_dir: Path
    config_path: Path
    agent_id: str
    workspace: Path

    @property
    def agent_dir(self) -> Path:
        return self.state_dir / "agents" / self.agent_id

    @property
    def sessions_dir(self) -> Path:
        return self.agent_dir / "sessions"

    @property
    def session_store(self) -> Path:
        return self.sessions_dir / "sessions.json"

    @property
    def sqlite_path(self) -> Path:
        return self.agent_dir / "agent" / "openclaw-agent.sqlite"


def make_sqlite_era_state(tmp: Path, agent_id: str = "main") -> StateCopy:
    """Copy the 2026.9.6 capture to `<tmp>/state` (DB under `agents/<agent_id>/agent/`).

    For an agent other than `main`, the config names it as the default agent with its own
    workspace `<tmp>/workspace-<agent_id>`.
    """
    state_dir = tmp / "state"
    database = state_dir / "agents" / agent_id / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    shutil.copy2(SQLITE_ERA_FIXTURE / "openclaw-agent.sqlite", database)
    workspace = tmp / ("workspace" if agent_id == "main" else f"workspace-{agent_id}")
    config = _fixture_config(SQLITE_ERA_FIXTURE, tmp)
    if agent_id != "main":
        config["agents"]["list"] = [{"id": agent_id, "default": True, "workspace": str(workspace)}]
    return _finish(state_dir, agent_id, workspace, config)


def make_file_era_state(tmp: Path) -> StateCopy:
    """Copy the 2026.7.35 capture (its `agents/` tree as is) to `<tmp>/state`."""
    state_dir = tmp / "state"
    shutil.copytree(FILE_ERA_FIXTURE / "agents", state_dir / "agents")
    config = _fixture_config(FILE_ERA_FIXTURE, tmp)
    return _finish(state_dir, "main", tmp / "workspace", config)


def write_json5_config(path: Path, config: dict[str, Any]) -> Path:
    """Write `config` to `path` as JSON5 with a comment, unquoted keys and trailing commas."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json5.dumps(config, indent=2, quote_keys=False, trailing_commas=True)
    path.write_text(f"// written by tests/support/deployments.py\n{text}\n", encoding="utf-8")
    return path


def _fixture_config(fixture: Path, tmp: Path) -> dict[str, Any]:
    config = json5.loads((fixture / "openclaw.json").read_text(encoding="utf-8"))
    config.setdefault("agents", {}).setdefault("defaults", {})["workspace"] = str(tmp / "workspace")
    config.setdefault("logging", {})["file"] = str(tmp / "logs" / "openclaw.log")
    return config


def _finish(state_dir: Path, agent_id: str, workspace: Path, config: dict[str, Any]) -> StateCopy:
    workspace.mkdir(parents=True, exist_ok=True)
    config_path = write_json5_config(state_dir / "openclaw.json", config)
    return StateCopy(state_dir, config_path, agent_id, workspace)


def make_generated_fleet(
    root: Path, names: list[str], updated_at: int, user_text: str | None = None
) -> tuple[Path, dict[str, Path]]:
    """Write a file-era state under `root` with one agent per name, each with a main session of
    three generated turns updated at `updated_at` (Unix ms) and its own workspace
    `<root>/workspace-<name>`; `user_text` replaces the first user message. Return the state
    dir and the workspaces by agent."""
    from support.transcripts import transcript_lines, write_jsonl

    state, workspaces, entries = root / "state", {}, []
    for index, name in enumerate(names):
        workspace = workspaces[name] = root / f"workspace-{name}"
        workspace.mkdir(parents=True)
        session_id = f"0000000{index}-0000-4000-8000-000000000000"
        lines = list(transcript_lines(3, session_id=session_id))
        if user_text is not None:
            lines[1]["message"]["content"] = user_text
        sessions = state / "agents" / name / "sessions"
        write_jsonl(sessions / f"{session_id}.jsonl", lines)
        store = {f"agent:{name}:main": {"sessionId": session_id, "updatedAt": updated_at}}
        (sessions / "sessions.json").write_bytes(orjson.dumps(store))
        entries.append({"id": name, "workspace": str(workspace)})
    write_json5_config(state / "openclaw.json", {"agents": {"list": entries}})
    return state, workspaces
