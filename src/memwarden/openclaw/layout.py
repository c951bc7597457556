"""A gateway deployment as memwarden sees it: state dir, config, agents, port, token and caps.

Defaults as in openclaw@2026.7.35 and @2026.9.6 (`config/paths.ts` for the port,
`embedded-agent-helpers/bootstrap.ts` for the bootstrap caps).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from memwarden.openclaw.agents import (
    Agent,
    discover_agents,
    disk_agent_ids,
    normalize_agent_id,
    read_roster,
)
from memwarden.openclaw.config_file import load_gateway_config
from memwarden.openclaw.fields import JS_SAFE_INTEGER_MAX, describe, mapping
from memwarden.openclaw.paths import env_text, locate_state_dir, resolve_config_path
from memwarden.process.errors import GatewayConfigError

DEFAULT_GATEWAY_PORT = 18789
# embedded-agent-helpers/bootstrap.ts in 2026.7.35 and 2026.9.6 (older releases used other totals).
_BOOTSTRAP_CAPS = (("bootstrapMaxChars", 20_000), ("bootstrapTotalMaxChars", 60_000))
DEFAULT_COMPACTION_MODE = "default"

_ENV_REFERENCE = re.compile(r"^\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}$")
_PORT_SUFFIX = re.compile(r"^(?:\d+|\[[^\]]+\]:\d+|[^:]+:\d+)$")


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

    def agent(self, agent_id: str) -> Agent | None:
        """Given an agent id (any case), return that agent, or None if there is none."""
        wanted = normalize_agent_id(agent_id)
        return next((agent for agent in self.agents if agent.id == wanted), None)

    @property
    def problems(self) -> list[str]:
        """One line per agent entry of the config that is ignored or misread (see
        `read_roster`) and per agent whose workspace memwarden refuses (see
        `workspace_problem`), naming the gateway config."""
        misread = self._read_roster[1]
        return [f"{self.config_path}: {problem}" for problem in misread] + [
            f"{self.config_path}: {agent.workspace_problem}"
            for agent in self.agents
            if agent.workspace_problem
        ]

    def usable_agents(self) -> list[Agent]:
        """Return the agents whose workspace memwarden does not refuse (`problems` says why)."""
        return [agent for agent in self.agents if agent.workspace_problem is None]

    def default_agent(self) -> Agent:
        """Return the default agent (always present, first in `agents`)."""
        return next((agent for agent in self.agents if agent.is_default), self.agents[0])

    def gateway_port_and_source(self) -> tuple[int, str]:
        """Return the gateway port: `$OPENCLAW_GATEWAY_PORT` (else `$CLAWDBOT_GATEWAY_PORT`),
        `gateway.port`, else 18789, and what set it, for people: the variable's name,
        `gateway.port in <config file>` or `default`.

        The environment wins over the config, as in the gateway's `resolveGatewayPort`
        (config/paths.ts, 2026.7.35 and 2026.9.6); the variable may be `port` or `host:port`.
        Raise GatewayConfigError naming the file and field if `gateway.port` is a number that
        is not a port.
        """
        from_env = env_port(self.env)
        if from_env is not None:
            return from_env
        configured = mapping(self.config.get("gateway")).get("port")
        if not _is_positive_number(configured):
            return DEFAULT_GATEWAY_PORT, "default"  # the gateway too ignores a non-number
        if configured != int(configured) or not 0 < configured < 65536:
            raise GatewayConfigError(
                f"{self.config_path}: gateway.port: {describe(configured)} is not a port; set "
                "a whole number from 1 to 65535 (the gateway cannot listen on it either)"
            )
        return int(configured), f"gateway.port in {self.config_path}"

    def gateway_token(self) -> str | None:
        """Return the gateway token (`gateway.auth.token`, else `$OPENCLAW_GATEWAY_TOKEN`), or None.

        A `${NAME}` string or an env SecretRef (`{"source": "env", "id": NAME}`) is looked up in
        the environment. Never log the result.
        """
        configured = mapping(mapping(self.config.get("gateway")).get("auth")).get("token")
        token = _secret_value(configured, self.env)
        return token or env_text(self.env, "OPENCLAW_GATEWAY_TOKEN") or None

    @cached_property
    def _read_roster(self) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """`read_roster(self.config)`, built once: asked for every agent, rebuilding it each
        time made a run over N agents cost N² normalisations."""
        return read_roster(self.config)

    def compaction_mode(self) -> str:
        """Return `agents.defaults.compaction.mode` (`default` when unset)."""
        defaults = mapping(mapping(self.config.get("agents")).get("defaults"))
        mode = mapping(defaults.get("compaction")).get("mode")
        return mode if isinstance(mode, str) and mode else DEFAULT_COMPACTION_MODE

    def bootstrap_caps(self, agent_id: str) -> tuple[int, int]:
        """Given an agent id, return its bootstrap caps: per file (`bootstrapMaxChars`) and in
        all (`bootstrapTotalMaxChars`).

        As bootstrap.ts `resolveBootstrapCharLimit`: the agent's entry, else agents.defaults; a
        value that is not a positive number counts as unset. The gateway floors the number;
        past Number.MAX_SAFE_INTEGER (1e308 = "no cap") no file is that long, and a bigger int
        would break SQLite and JSON writes downstream.
        """
        roster, _ = self._read_roster
        entry = roster.get(normalize_agent_id(agent_id), {})
        defaults = mapping(mapping(self.config.get("agents")).get("defaults"))
        caps = []
        for key, fallback in _BOOTSTRAP_CAPS:
            value = entry.get(key)
            if value is None:
                value = defaults.get(key)
            positive = _is_positive_number(value)
            caps.append(min(int(value), JS_SAFE_INTEGER_MAX) if positive else fallback)
        return caps[0], caps[1]


def discover(
    state_dir_override: Path | None = None, env: Mapping[str, str] = os.environ
) -> Deployment:
    """Given memwarden's `--state-dir` and the environment, return the Deployment.

    Raise GatewayConfigError if the gateway config exists but cannot be read or parsed.
    """
    environment = dict(env)
    state_dir = locate_state_dir(state_dir_override, environment)[0]
    config_path = resolve_config_path(state_dir, environment)
    config = load_gateway_config(config_path)
    agents = discover_agents(config, state_dir, environment)
    return Deployment(state_dir, config_path, config, agents, environment)


def not_a_gateway(state_dir: Path, config_path: Path) -> str | None:
    """Given a state dir and the gateway config path, return why no gateway lives there, or
    None when one does.

    A gateway's state dir holds its config (onboarding writes `openclaw.json`) or, for a
    gateway running on its defaults, `agents/<id>/` once an agent has run; a folder with
    neither is not one (a mistyped `--state-dir`, or a fresh one the gateway never used).
    """
    if not state_dir.exists():
        return "the folder does not exist"
    if not state_dir.is_dir():
        return "not a folder"
    if not config_path.is_file() and not disk_agent_ids(state_dir):
        config = config_path.name if config_path.parent == state_dir else str(config_path)
        return f"it holds neither the gateway config ({config}) nor agents/"
    return None


def _is_positive_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value == value  # not NaN
        and 0 < value < float("inf")
    )


def env_port(env: Mapping[str, str]) -> tuple[int, str] | None:
    """Return the gateway port the environment sets and the variable that set it, or None."""
    for name in ("OPENCLAW_GATEWAY_PORT", "CLAWDBOT_GATEWAY_PORT"):
        port = _port_from_env(env_text(env, name))
        if port is not None:
            return port, f"${name}"
    return None


def _port_from_env(text: str) -> int | None:
    if not _PORT_SUFFIX.match(text):
        return None
    port = int(text.rsplit(":", 1)[-1])
    return port if 0 < port < 65536 else None


def _secret_value(configured: object, env: Mapping[str, str]) -> str | None:
    if isinstance(configured, str):
        reference = _ENV_REFERENCE.match(configured.strip())
        return env_text(env, reference["name"]) if reference else configured.strip()
    secret = mapping(configured)
    if secret.get("source") == "env" and isinstance(secret.get("id"), str):
        return env_text(env, secret["id"])
    return None
