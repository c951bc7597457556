"""Where the OpenClaw gateway keeps things: state dir, config, agents and their workspaces.

The precedence rules follow the gateway's own code, read in the published npm packages
openclaw@2026.7.35 and openclaw@2026.9.6 (`dist/`, built from `src/config/paths.ts`,
`src/config/state-dir.ts`, `src/agents/agent-scope-config.ts`, `src/agents/agent-roster.ts`,
`src/agents/workspace-default.ts`, `src/agents/embedded-agent-helpers/bootstrap.ts`) and in the
older `openclaw/openclaw` sources (`src/agents/agent-scope.ts`). Where versions disagree, the
rule below says which one wins and why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from memwarden.errors import GatewayConfigError

Era = Literal["sqlite", "file", "none"]

STATE_DIR_NAME = ".openclaw"
# Source order (openclaw src/config/paths.ts); 2026.9.x only still looks for ".clawdbot".
LEGACY_STATE_DIR_NAMES = (".clawdbot", ".moldbot", ".moltbot")
CONFIG_FILE_NAME = "openclaw.json"
LEGACY_CONFIG_FILE_NAMES = ("clawdbot.json", "moldbot.json", "moltbot.json")
DEFAULT_AGENT_ID = "main"
DEFAULT_GATEWAY_PORT = 18789
# embedded-agent-helpers/bootstrap.ts in 2026.7.35 and 2026.9.6 (older releases used other totals).
DEFAULT_BOOTSTRAP_MAX_CHARS = 20_000
DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS = 60_000
DEFAULT_COMPACTION_MODE = "default"
SQLITE_FILE_NAME = "openclaw-agent.sqlite"
SESSION_STORE_FILE_NAME = "sessions.json"

_AGENT_ID_VALID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.IGNORECASE)
_AGENT_ID_INVALID_CHARACTERS = re.compile(r"[^a-z0-9_-]+")
_JSON5_ERROR = re.compile(r"^<string>:(?P<line>\d+) (?P<reason>.*) at column (?P<column>\d+)$")
_ENV_REFERENCE = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}$")
_PORT_SUFFIX = re.compile(r"^(?:\d+|\[[^\]]+\]:\d+|[^:]+:\d+)$")


# --- paths ----------------------------------------------------------------------------------


def resolve_home(env: Mapping[str, str] = os.environ, home: Path | None = None) -> Path:
    """Given the environment and an optional home, return the home OpenClaw uses.

    `$OPENCLAW_HOME` wins (a leading `~` in it is the account's home), as in the gateway's
    `infra/home-dir.ts`; else `home`, else `$HOME`, else the account's home.
    """
    account_home = home or _env_path(env, "HOME") or Path.home()
    explicit = _env_text(env, "OPENCLAW_HOME")
    if explicit:
        return user_path(explicit, account_home)
    return Path(os.path.abspath(account_home))


def user_path(text: str, home: Path) -> Path:
    """Given a path as written in config or env and the home, return it absolute (`~` expanded)."""
    stripped = text.strip()
    if stripped == "~" or stripped.startswith(("~/", "~\\")):
        stripped = str(home) + stripped[1:]
    return Path(os.path.abspath(stripped))


def resolve_state_dir(
    override: Path | None = None,
    env: Mapping[str, str] = os.environ,
    home: Path | None = None,
) -> Path:
    """Given memwarden's `--state-dir`, the environment and home, return the gateway state dir.

    Order: `override`, `$OPENCLAW_STATE_DIR`, `$CLAWDBOT_STATE_DIR`, `~/.openclaw` when it
    exists, else the first existing legacy dir (`~/.clawdbot`, `~/.moldbot`, `~/.moltbot`),
    else `~/.openclaw`.
    """
    user_home = resolve_home(env, home)
    if override is not None:
        return user_path(str(override), user_home)
    for name in ("OPENCLAW_STATE_DIR", "CLAWDBOT_STATE_DIR"):
        value = _env_text(env, name)
        if value:
            return user_path(value, user_home)
    current = user_home / STATE_DIR_NAME
    if current.exists():
        return current
    for legacy_name in LEGACY_STATE_DIR_NAMES:
        if (user_home / legacy_name).exists():
            return user_home / legacy_name
    return current


def resolve_config_path(
    state_dir: Path,
    env: Mapping[str, str] = os.environ,
    home: Path | None = None,
) -> Path:
    """Given the state dir, the environment and home, return the gateway config file path.

    Order: `$OPENCLAW_CONFIG_PATH`, `$CLAWDBOT_CONFIG_PATH`, then the first existing of
    `<state>/openclaw.json`, `clawdbot.json`, `moldbot.json`, `moltbot.json`, else
    `<state>/openclaw.json` (which may not exist: a gateway without config is valid).
    """
    for name in ("OPENCLAW_CONFIG_PATH", "CLAWDBOT_CONFIG_PATH"):
        value = _env_text(env, name)
        if value:
            return user_path(value, resolve_home(env, home))
    candidates = [state_dir / name for name in (CONFIG_FILE_NAME, *LEGACY_CONFIG_FILE_NAMES)]
    return next((path for path in candidates if path.exists()), candidates[0])


# --- config ---------------------------------------------------------------------------------


def load_gateway_config(path: Path) -> dict[str, Any]:
    """Given the path of openclaw.json, return its content as a dict (`{}` if it does not exist).

    Raise GatewayConfigError (one line naming the file, the line and column when known, and the
    fix) if the file cannot be read, is not JSON5, or is not an object.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise GatewayConfigError(
            f"{path}: cannot read the gateway config ({error.strerror or error}); {_fix_hint(path)}"
        ) from error
    config = _parse_config(path, raw)
    if not isinstance(config, dict):
        raise GatewayConfigError(
            f"{path}: the gateway config is not a JSON object; {_fix_hint(path)}"
        )
    return config


def _parse_config(path: Path, raw: bytes) -> Any:
    try:
        return orjson.loads(raw)  # fast path: the gateway rewrites its config as plain JSON
    except orjson.JSONDecodeError:
        pass
    import json5  # only for configs a person edited by hand: plain JSON never needs it

    try:
        return json5.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise GatewayConfigError(
            f"{path}: the gateway config is not UTF-8 text; {_fix_hint(path)}"
        ) from error
    except (ValueError, RecursionError) as error:
        raise GatewayConfigError(
            f"{path}: {_describe_json5_error(error)}; {_fix_hint(path)}"
        ) from error


def _describe_json5_error(error: Exception) -> str:
    text = " ".join(str(error).split())
    match = _JSON5_ERROR.match(text)
    if match is None:
        return f"not valid JSON5: {text or type(error).__name__}"
    return (
        f"line {match['line']}, column {match['column']}: not valid JSON5: "
        f"{match['reason'][0].lower()}{match['reason'][1:]}"
    )


def _fix_hint(path: Path) -> str:
    return f"fix the syntax or restore {path.name}.bak / {path.name}.last-good"


# --- agents ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agent:
    """One agent of the gateway: its id, workspace and the folder holding its state."""

    id: str
    workspace: Path
    agent_dir: Path
    is_default: bool
    era: Era
    configured: bool

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


def configured_agents(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Given the gateway config, return its agent entries by normalized id, in config order.

    `agents.entries` (a map, newer configs) wins over `agents.list` (older configs): like the
    gateway's `agents/agent-roster.ts` (2026.9.x), a list next to an entries map is ignored.
    When an id repeats, the first entry wins.
    """
    agents = _mapping(config.get("agents"))
    entries = agents.get("entries")
    if isinstance(entries, dict):
        pairs = [(key, value) for key, value in entries.items() if isinstance(value, dict)]
    elif isinstance(agents.get("list"), list):
        pairs = [(entry.get("id"), entry) for entry in agents["list"] if isinstance(entry, dict)]
    else:
        pairs = []
    roster: dict[str, dict[str, Any]] = {}
    for raw_id, entry in pairs:
        roster.setdefault(normalize_agent_id(raw_id), entry)
    return roster


def default_agent_id(config: Mapping[str, Any]) -> str:
    """Given the gateway config, return the id of its default agent.

    The entry marked `default: true` (the first one; ignored under `agents.ownership:
    "explicit"`), else `agents.defaults.systemAgent.agentId` (what 2026.9.x migrates that mark
    to), else the first configured agent, else `main`. 2026.7.x uses the mark, then the first
    entry; 2026.9.x only accepts a single marked entry or a sole agent and otherwise has no
    default at all, so for a many-agent config without a mark memwarden takes the first.
    """
    roster = configured_agents(config)
    agents = _mapping(config.get("agents"))
    if agents.get("ownership") != "explicit":
        marked = next((key for key, entry in roster.items() if entry.get("default") is True), None)
        if marked:
            return marked
    system_agent = _mapping(_mapping(agents.get("defaults")).get("systemAgent")).get("agentId")
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
) -> Path:
    """Given an agent, its config entry and where things live, return its workspace folder.

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
    own = entry.get("workspace")
    if isinstance(own, str) and own.strip():
        return user_path(own, home)
    defaults_workspace = _mapping(_mapping(config.get("agents")).get("defaults")).get("workspace")
    fallback = (
        user_path(defaults_workspace, home)
        if isinstance(defaults_workspace, str) and defaults_workspace.strip()
        else None
    )
    legacy_era = state_dir.name in LEGACY_STATE_DIR_NAMES
    if is_default:
        if fallback is not None:
            return fallback
        workspace_env = _env_text(env, "OPENCLAW_WORKSPACE_DIR")
        if workspace_env:
            return user_path(workspace_env, home)
        candidates = [home / "clawd"] if legacy_era else []
        if state_dir != home / STATE_DIR_NAME:
            candidates.append(state_dir / "workspace")
        candidates.append(home / STATE_DIR_NAME / "workspace")
    else:
        candidates = [home / f"clawd-{agent_id}"] if legacy_era else []
        if fallback is not None:
            candidates.append(fallback / agent_id)
        candidates.append(state_dir / f"workspace-{agent_id}")
    return _first_existing(candidates)


def discover_agents(
    config: Mapping[str, Any],
    state_dir: Path,
    env: Mapping[str, str] = os.environ,
    home: Path | None = None,
) -> list[Agent]:
    """Given the config and the state dir, return every agent, the default agent first.

    Agents come from the config's entries (or list) and from `<state>/agents/<id>/` folders,
    deduplicated by normalized id, in the order: default agent, config order, folders (sorted).
    With nothing configured and no folder, the result is the default agent `main` alone.
    """
    user_home = resolve_home(env, home)
    roster = configured_agents(config)
    default_id = default_agent_id(config)
    ordered = list(dict.fromkeys([default_id, *roster, *disk_agent_ids(state_dir)]))
    return [
        _make_agent(agent_id, roster, default_id, config, state_dir, env, user_home)
        for agent_id in ordered
    ]


def _make_agent(
    agent_id: str,
    roster: Mapping[str, Mapping[str, Any]],
    default_id: str,
    config: Mapping[str, Any],
    state_dir: Path,
    env: Mapping[str, str],
    home: Path,
) -> Agent:
    agent_dir = state_dir / "agents" / agent_id
    workspace = resolve_workspace(
        agent_id,
        roster.get(agent_id, {}),
        is_default=agent_id == default_id,
        config=config,
        state_dir=state_dir,
        env=env,
        home=home,
    )
    return Agent(
        id=agent_id,
        workspace=workspace,
        agent_dir=agent_dir,
        is_default=agent_id == default_id,
        era=storage_era(agent_dir),
        configured=agent_id in roster,
    )


def storage_era(agent_dir: Path) -> Era:
    """Given an agent's state folder, return `sqlite` (its DB exists), `file` or `none`."""
    if (agent_dir / "agent" / SQLITE_FILE_NAME).is_file():
        return "sqlite"
    if (agent_dir / "sessions" / SESSION_STORE_FILE_NAME).is_file():
        return "file"
    return "none"


# --- deployment -----------------------------------------------------------------------------


@dataclass
class Deployment:
    """A gateway installation as memwarden sees it: where it lives, its config and agents.

    `config` and `env` may hold the gateway token: they stay out of `repr` (and so out of logs).
    """

    state_dir: Path
    config_path: Path
    config: dict[str, Any] = field(repr=False)
    agents: list[Agent]
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    _roster_cache: tuple[dict[str, Any], dict[str, dict[str, Any]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def agent(self, agent_id: str) -> Agent | None:
        """Given an agent id (any case), return that agent, or None if there is none."""
        wanted = normalize_agent_id(agent_id)
        return next((agent for agent in self.agents if agent.id == wanted), None)

    def default_agent(self) -> Agent:
        """Return the default agent (always present, first in `agents`)."""
        return next((agent for agent in self.agents if agent.is_default), self.agents[0])

    def gateway_port(self) -> int:
        """Return the gateway port: `$OPENCLAW_GATEWAY_PORT`, `gateway.port`, else 18789.

        The environment wins over the config, as in the gateway's `resolveGatewayPort`
        (config/paths.ts, 2026.7.35 and 2026.9.6); the variable may be `port` or `host:port`.
        """
        for name in ("OPENCLAW_GATEWAY_PORT", "CLAWDBOT_GATEWAY_PORT"):
            port = _port_from_env(_env_text(self.env, name))
            if port is not None:
                return port
        configured = _mapping(self.config.get("gateway")).get("port")
        if _is_positive_number(configured):
            return int(configured)
        return DEFAULT_GATEWAY_PORT

    def gateway_token(self) -> str | None:
        """Return the gateway token (`gateway.auth.token`, else `$OPENCLAW_GATEWAY_TOKEN`), or None.

        A `${NAME}` string or an env SecretRef (`{"source": "env", "id": NAME}`) is looked up in
        the environment. Never log the result.
        """
        configured = _mapping(_mapping(self.config.get("gateway")).get("auth")).get("token")
        token = _secret_value(configured, self.env)
        return token or _env_text(self.env, "OPENCLAW_GATEWAY_TOKEN") or None

    def bootstrap_max_chars(self, agent_id: str) -> int:
        """Given an agent id, return the per-file bootstrap cap (`bootstrapMaxChars`)."""
        return self._bootstrap_limit(agent_id, "bootstrapMaxChars", DEFAULT_BOOTSTRAP_MAX_CHARS)

    def bootstrap_total_max_chars(self, agent_id: str) -> int:
        """Given an agent id, return the total bootstrap cap (`bootstrapTotalMaxChars`)."""
        return self._bootstrap_limit(
            agent_id, "bootstrapTotalMaxChars", DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS
        )

    def _roster(self) -> dict[str, dict[str, Any]]:
        """Return `configured_agents(self.config)`, built once per config object: asked for
        every agent, rebuilding it each time made a run over N agents cost N² normalisations."""
        cached = self._roster_cache
        if cached is None or cached[0] is not self.config:
            cached = self._roster_cache = (self.config, configured_agents(self.config))
        return cached[1]

    def compaction_mode(self) -> str:
        """Return `agents.defaults.compaction.mode` (`default` when unset)."""
        defaults = _mapping(_mapping(self.config.get("agents")).get("defaults"))
        mode = _mapping(defaults.get("compaction")).get("mode")
        return mode if isinstance(mode, str) and mode else DEFAULT_COMPACTION_MODE

    def _bootstrap_limit(self, agent_id: str, key: str, fallback: int) -> int:
        # bootstrap.ts `resolveBootstrapCharLimit`: the agent's entry, else agents.defaults;
        # a value that is not a positive number counts as unset.
        entry = self._roster().get(normalize_agent_id(agent_id), {})
        defaults = _mapping(_mapping(self.config.get("agents")).get("defaults"))
        value = entry.get(key)
        if value is None:
            value = defaults.get(key)
        return int(value) if _is_positive_number(value) else fallback


def discover(
    state_dir_override: Path | None = None,
    env: Mapping[str, str] = os.environ,
    home: Path | None = None,
) -> Deployment:
    """Given memwarden's `--state-dir`, the environment and home, return the Deployment.

    Raise GatewayConfigError if the gateway config exists but cannot be read or parsed.
    """
    environment = dict(env)
    state_dir = resolve_state_dir(state_dir_override, environment, home)
    config_path = resolve_config_path(state_dir, environment, home)
    config = load_gateway_config(config_path)
    agents = discover_agents(config, state_dir, environment, home)
    return Deployment(state_dir, config_path, config, agents, environment)


# --- small helpers --------------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _env_text(env: Mapping[str, str], name: str) -> str:
    return (env.get(name) or "").strip()


def _env_path(env: Mapping[str, str], name: str) -> Path | None:
    value = _env_text(env, name)
    return Path(value) if value else None


def _first_existing(candidates: list[Path]) -> Path:
    return next((path for path in candidates if path.is_dir()), candidates[0])


def _is_positive_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value == value  # not NaN
        and 0 < value < float("inf")
    )


def _port_from_env(text: str) -> int | None:
    if not _PORT_SUFFIX.match(text):
        return None
    port = int(text.rsplit(":", 1)[-1])
    return port if 0 < port < 65536 else None


def _secret_value(configured: object, env: Mapping[str, str]) -> str | None:
    if isinstance(configured, str):
        reference = _ENV_REFERENCE.match(configured.strip())
        return _env_text(env, reference["name"]) if reference else configured.strip()
    secret = _mapping(configured)
    if secret.get("source") == "env" and isinstance(secret.get("id"), str):
        return _env_text(env, secret["id"])
    return None
