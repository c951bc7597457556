"""The gateway's agents: ids, the default agent, workspaces and storage era.

The precedence rules follow the gateway's own code, read in the published npm packages
openclaw@2026.7.35 and openclaw@2026.9.6 (`dist/`, built from `src/agents/agent-scope-config.ts`,
`src/agents/agent-roster.ts`, `src/agents/workspace-default.ts`) and in the older
`openclaw/openclaw` sources (`src/agents/agent-scope.ts`). Where versions disagree, the rule
below says which one wins and why.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memwarden.fs.files import real_path
from memwarden.openclaw.fields import describe, mapping
from memwarden.openclaw.paths import (
    LEGACY_STATE_DIR_NAMES,
    STATE_DIR_NAME,
    env_text,
    resolve_home,
    user_path,
)

Era = Literal["sqlite", "file", "none"]

DEFAULT_AGENT_ID = "main"
SQLITE_FILE_NAME = "openclaw-agent.sqlite"
SESSION_STORE_FILE_NAME = "sessions.json"

_AGENT_ID_VALID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
_AGENT_ID_INVALID_CHARACTERS = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True)
class Agent:
    """One agent of the gateway: its id, workspace and the folder holding its state."""

    id: str
    workspace: Path
    agent_dir: Path
    is_default: bool
    era: Era
    # Why memwarden refuses to write into this workspace (None: it may): a relative path, `/`,
    # the home folder itself or a system folder. See `workspace_problem`.
    workspace_problem: str | None = None
    # The workspace's real path when it was discovered ("": an Agent made by hand); see
    # `real_workspace`.
    discovered_real_workspace: str = field(default="", compare=False, repr=False)

    @property
    def real_workspace(self) -> str:
        """The workspace's real path (resolved once, at discovery): what tells apart agents
        sharing one workspace. A write checks its target's path again (files.check_inside)."""
        return self.discovered_real_workspace or real_path(self.workspace)

    @property
    def sessions_dir(self) -> Path:
        """The file-era session folder (`sessions.json` and transcripts)."""
        return self.agent_dir / "sessions"

    @property
    def sqlite_path(self) -> Path:
        """The SQLite-era agent database."""
        return self.agent_dir / "agent" / SQLITE_FILE_NAME

    @property
    def memory_dir(self) -> Path:
        """The workspace's memory folder."""
        return self.workspace / "memory"

    @property
    def store_files(self) -> list[Path]:
        """The files of the agent's session store that change whenever a session does: the
        SQLite database and its write-ahead log, or `sessions.json`."""
        if self.era == "sqlite":
            return [self.sqlite_path, self.sqlite_path.with_name(self.sqlite_path.name + "-wal")]
        return [self.sessions_dir / "sessions.json"]


def normalize_agent_id(value: object) -> str:
    """Given an agent id as written anywhere, return the gateway's canonical form.

    Lower-cased; runs of other characters than `a-z0-9_-` become `-`; leading and trailing
    dashes dropped; at most 64 characters; empty or unusable → `main` (normalization-core).
    """
    text = value.strip() if isinstance(value, str) else ""
    if _AGENT_ID_VALID.match(text):
        return text.lower()
    cleaned = _AGENT_ID_INVALID_CHARACTERS.sub("-", text.lower()).strip("-")[:64]
    return cleaned or DEFAULT_AGENT_ID


def read_roster(config: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Given the gateway config, return its agent entries by normalized id, in config order,
    and the problems of the entries it skipped or misread.

    `agents.entries` (a map, newer configs) wins over `agents.list` (older configs): like the
    gateway's `agents/agent-roster.ts` (2026.9.x), a list next to an entries map is ignored.
    When an id repeats, the first entry wins. An entry that (like the gateway) it skips or takes
    for another agent than meant is one problem line: an entry that is not an object, a list
    entry whose `id` is missing or not a string (read as agent `main`'s).
    """
    noted: list[str] = []
    agents = mapping(config.get("agents"))
    entries, listed = agents.get("entries"), agents.get("list")
    roster: dict[str, dict[str, Any]] = {}
    if isinstance(entries, dict):
        for key, entry in entries.items():
            if isinstance(entry, dict):
                roster.setdefault(normalize_agent_id(key), entry)
            else:
                noted.append(
                    f"agents.entries.{key}: {describe(entry)} where an agent entry (an object) "
                    "should be; the gateway and memwarden ignore it: make it an object or remove it"
                )
    elif isinstance(listed, list):
        for index, entry in enumerate(listed):
            where = f"agents.list[{index}]"
            if not isinstance(entry, dict):
                noted.append(
                    f"{where}: {describe(entry)} where an agent entry (an object with `id` and "
                    "`workspace`) should be; the gateway and memwarden ignore it: make it an "
                    "object or remove it"
                )
                continue
            agent_id = normalize_agent_id(entry.get("id"))
            if not isinstance(entry.get("id"), str):
                found = "missing" if "id" not in entry else describe(entry["id"])
                noted.append(
                    f"{where}.id: {found}, where the agent's id (a string) should be; the entry "
                    f"is read as agent {agent_id}'s: write the id as a string"
                )
            roster.setdefault(agent_id, entry)
    elif listed is not None:
        noted.append(
            f"agents.list: {describe(listed)} where a list of agent entries should be; the "
            "gateway and memwarden ignore it: make it a list of objects with `id` and `workspace`"
        )
    return roster, noted


def default_agent_id(config: Mapping[str, Any]) -> str:
    """Given the gateway config, return the id of its default agent.

    The entry marked `default: true` (the first one; ignored under `agents.ownership:
    "explicit"`), else `agents.defaults.systemAgent.agentId` (what 2026.9.x migrates that mark
    to), else the first configured agent, else `main`. 2026.7.x uses the mark, then the first
    entry; 2026.9.x only accepts a single marked entry or a sole agent and otherwise has no
    default at all, so for a many-agent config without a mark memwarden takes the first.
    """
    roster, _ = read_roster(config)
    agents = mapping(config.get("agents"))
    if agents.get("ownership") != "explicit":
        marked = next((key for key, entry in roster.items() if entry.get("default") is True), None)
        if marked:
            return marked
    system_agent = mapping(mapping(agents.get("defaults")).get("systemAgent")).get("agentId")
    if isinstance(system_agent, str) and system_agent.strip():
        return normalize_agent_id(system_agent)
    return next(iter(roster), DEFAULT_AGENT_ID)


def disk_agent_ids(state_dir: Path) -> list[str]:
    """Given the state dir, return the ids of the `<state>/agents/<id>/` folders, sorted.

    Folders whose name is not a canonical agent id (the gateway never makes them) are skipped.
    """
    agents_dir = state_dir / "agents"
    try:
        names = sorted(child.name for child in agents_dir.iterdir() if child.is_dir())
    except OSError:
        return []
    return [name for name in names if normalize_agent_id(name) == name]


def resolve_workspace(
    agent_id: str,
    entry: Mapping[str, Any],
    *,
    is_default: bool,
    config: Mapping[str, Any],
    state_dir: Path,
    env: Mapping[str, str],
    home: Path,
) -> tuple[Path, tuple[str, str] | None]:
    """Given an agent, its config entry and where things live, return its workspace folder and
    the setting that named it ((name, text) of the entry's `workspace`,
    `agents.defaults.workspace` or `$OPENCLAW_WORKSPACE_DIR`; None when none is set).

    1. The entry's own `workspace`.
    2. Default agent: `agents.defaults.workspace`, else `$OPENCLAW_WORKSPACE_DIR`, else the
       first existing of `~/clawd` (Clawdbot-era state dir only), `<state>/workspace` (state
       dir elsewhere than `~/.openclaw`: 2026.9.x) and `~/.openclaw/workspace` (2026.7.x),
       else the first of them.
    3. Other agents: the first existing of `~/clawd-<id>` (Clawdbot era only),
       `<agents.defaults.workspace>/<id>` (2026.7.x and 2026.9.x, when the default is set) and
       `<state>/workspace-<id>` (older releases, and current ones without the default), else
       the first of them.

    Sources: agent-scope-config.ts `resolveAgentWorkspaceDir` and workspace-default.ts
    `resolveDefaultAgentWorkspaceDir` in openclaw@2026.7.35 / @2026.9.6; `src/agents/agent-scope.ts`
    in older openclaw/openclaw (non-default agents: `<state>/workspace-<id>` only); Clawdbot's
    `resolveAgentWorkspaceDir` (`~/clawd-<id>`).
    """
    defaults_workspace = mapping(mapping(config.get("agents")).get("defaults")).get("workspace")
    settings = [("its workspace", entry.get("workspace"))]
    settings.append(("agents.defaults.workspace", defaults_workspace))
    if is_default:
        settings.append(("$OPENCLAW_WORKSPACE_DIR", env_text(env, "OPENCLAW_WORKSPACE_DIR")))
    setting = next(
        ((name, text.strip()) for name, text in settings if isinstance(text, str) and text.strip()),
        None,
    )
    if setting is not None and (is_default or setting[0] == "its workspace"):
        return user_path(setting[1], home), setting
    legacy_era = state_dir.name in LEGACY_STATE_DIR_NAMES
    if is_default:
        candidates = [home / "clawd"] if legacy_era else []
        if state_dir != home / STATE_DIR_NAME:
            candidates.append(state_dir / "workspace")
        candidates.append(home / STATE_DIR_NAME / "workspace")
    else:
        candidates = [home / f"clawd-{agent_id}"] if legacy_era else []
        if setting is not None:
            candidates.append(user_path(setting[1], home) / agent_id)
        candidates.append(state_dir / f"workspace-{agent_id}")
    return next((path for path in candidates if path.is_dir()), candidates[0]), setting


# Folders that are never an agent's workspace: memwarden creates `memory/` in a workspace.
# Their subfolders are fine (/srv/openclaw/workspace, /var/lib/openclaw/workspace).
_SYSTEM_FOLDERS = frozenset((
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media",
    "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr",  # noqa: S108
    "/var", "/Applications", "/Library", "/System", "/Users", "/Volumes", "/private",
    "/private/tmp", "/private/var",
))  # fmt: skip


def workspace_problem(
    agent_id: str,
    workspace: Path,
    setting: tuple[str, str] | None,
    workspace_real: str,
    home_real: str,
) -> str | None:
    """Given an agent, its resolved workspace, the setting that named it (see
    `resolve_workspace`) and the real paths of the workspace and the home, return why memwarden
    must not write there, or None.

    A relative setting: the gateway resolves it with Node's `path.resolve` against its own
    working directory (`resolveUserPath`, infra/home-dir.ts, 2026.7.35 and 2026.9.6), which is
    $HOME under its systemd user service, `/` under launchd and the shell's folder when started
    by hand; memwarden cannot see which, so it refuses rather than write into another folder.
    `/`, the home folder itself and system folders are refused whatever the setting.
    """
    if setting is not None and setting[1] != "~" and not setting[1].startswith(("/", "~/", "~\\")):
        return (
            f'agent {agent_id}: {setting[0]} "{setting[1]}" is a relative path: the gateway '
            "resolves it against the folder it was started from, which memwarden cannot "
            "know; write it as an absolute path (or ~/...)"
        )
    what = unsafe_folder(workspace, workspace_real, home_real)
    if what is None:
        return None
    return (
        f"agent {agent_id}: its workspace {workspace} is {what}; memwarden will not create "
        "memory/ there: give the agent a folder of its own (its `workspace` in openclaw.json)"
    )


def unsafe_folder(folder: Path, folder_real: str, home_real: str) -> str | None:
    """Given a folder, its real path and the home's, return what it is when memwarden must never
    create memory/ in it (`the root folder`, `a system folder`, `the home folder itself`)."""
    if folder_real in _SYSTEM_FOLDERS or str(folder) in _SYSTEM_FOLDERS:
        return "the root folder" if folder_real == "/" else "a system folder"
    if folder_real == home_real:
        return "the home folder itself"
    return None


def discover_agents(
    config: Mapping[str, Any], state_dir: Path, env: Mapping[str, str] = os.environ
) -> list[Agent]:
    """Given the config and the state dir, return every agent, the default agent first.

    Agents come from the config's entries (or list) and from `<state>/agents/<id>/` folders,
    deduplicated by normalized id, in the order: default agent, config order, folders (sorted).
    With nothing configured and no folder, the result is the default agent `main` alone.
    """
    user_home = resolve_home(env)
    home_real = real_path(user_home)
    roster, _ = read_roster(config)
    default_id = default_agent_id(config)
    agents = []
    for agent_id in dict.fromkeys([default_id, *roster, *disk_agent_ids(state_dir)]):
        agent_dir = state_dir / "agents" / agent_id
        is_default = agent_id == default_id
        workspace, setting = resolve_workspace(
            agent_id,
            roster.get(agent_id, {}),
            is_default=is_default,
            config=config,
            state_dir=state_dir,
            env=env,
            home=user_home,
        )
        real = real_path(workspace)
        agent = Agent(
            id=agent_id,
            workspace=workspace,
            agent_dir=agent_dir,
            is_default=is_default,
            era=storage_era(agent_dir),
            workspace_problem=workspace_problem(agent_id, workspace, setting, real, home_real),
            discovered_real_workspace=real,
        )
        agents.append(agent)
    return agents


def lost_workspace(agent: Agent) -> str | None:
    """Given an agent, return why its missing workspace is a failure, or None.

    The gateway makes (and seeds) an agent's workspace before the agent's first session, so an
    agent with a session store but no workspace lost it since: it was removed or moved, or the
    config now points elsewhere. An agent with neither is new: the gateway makes its workspace
    on its first run, and there is nothing to protect yet (None, as for a present workspace).
    """
    if agent.era == "none" or agent.workspace.is_dir():
        return None
    what = not_a_folder(agent.workspace)
    if what is not None:
        return (
            f"{agent.workspace}: the workspace of agent {agent.id} is {what} where a folder "
            "should be; move it away, or fix the agent's `workspace` in openclaw.json"
        )
    return (
        f"{agent.workspace}: the workspace of agent {agent.id} is gone, though the agent has "
        "sessions; restore it, or fix the agent's `workspace` in openclaw.json"
    )


def not_a_folder(path: Path) -> str | None:
    """Given a path that should be a folder, return what is there instead ("a file", "not a
    folder"), or None when it is a folder or nothing is there."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return None
    return "a file" if stat.S_ISREG(mode) else "not a folder"


def storage_era(agent_dir: Path) -> Era:
    """Given an agent's state folder, return `sqlite` (its DB exists), `file` (its
    sessions.json exists) or `none`. A folder in either place counts: reading it says why the
    agent's sessions cannot be read, instead of silently finding none."""
    if (agent_dir / "agent" / SQLITE_FILE_NAME).exists():
        return "sqlite"
    if (agent_dir / "sessions" / SESSION_STORE_FILE_NAME).exists():
        return "file"
    return "none"
