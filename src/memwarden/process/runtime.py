"""What every job receives: the settings, the options, and lazy access to state and gateway.

Jobs have one entry point, `run(context, options) -> JobResult`. The context opens the state
database and discovers the gateway's layout only when a job asks for them, so a job pays only for
what it uses.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.openclaw.paths import locate_state_dir
from memwarden.process.errors import ConfigError, GatewayNotFound, StateError
from memwarden.process.locks import RunLock, memory_lock
from memwarden.settings.config import Config, storage_location
from memwarden.store.state import MEMORY, StateDB
from memwarden.store.storage import claim, locate

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.store.storage import Storage


class Problem(str):
    """A problem line that carries the level it is logged at (a `critical` health check:
    CRITICAL; something to know that is no failure: WARNING). It is the line itself, so it goes
    wherever a plain problem line goes."""

    level: int

    def __new__(cls, text: str, level: int = logging.ERROR) -> Problem:
        line = super().__new__(cls, text)
        line.level = level
        return line


@dataclass
class JobResult:
    """What a job did: `data` for --json, `lines` for people, `problems` always shown on stderr.

    `exit_code` follows the contract: 0 done, 1 done with failures. A problem given as plain
    text is logged as an error when the job failed, else as a warning; a `Problem` carries its
    own level.
    """

    job: str
    data: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    exit_code: int = 0

    def problem_levels(self) -> list[tuple[int, str]]:
        """Return each problem as (logging level, text), in order."""
        default = logging.ERROR if self.exit_code else logging.WARNING
        return [(getattr(problem, "level", default), str(problem)) for problem in self.problems]

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "exit_code": self.exit_code, **self.data}


@dataclass
class JobContext:
    """Settings and shared resources for one run of one job."""

    config: Config
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    state_dir_override: Path | None = None
    json_output: bool = False
    verbosity: int = 0
    run_id: int | None = None
    clock: Any = None
    claims_storage: bool = False
    # A dry run or a read-only command: it creates nothing in memwarden's storage.
    read_only: bool = False
    # memwarden's whole command line, for the jobs that describe it (shell completion).
    command_line: Callable[[], argparse.ArgumentParser] | None = None

    def __post_init__(self) -> None:
        # Variables of the secrets file that are not memwarden settings (OPENCLAW_GATEWAY_TOKEN)
        # reach the job as the environment would give them; the real environment wins.
        if self.config.secrets_environment:
            self.env = {**self.config.secrets_environment, **self.env}

    # Set when a job that must run without its state (health) could not record its run:
    # the job reports it instead of failing (see JobSpec.runs_without_state).
    state_problem: StateError | None = None

    def parser(self) -> argparse.ArgumentParser:
        """Return memwarden's whole command line. Raise RuntimeError outside the `memwarden`
        program (no command line was given)."""
        if self.command_line is None:
            raise RuntimeError("no command line in this context")
        return self.command_line()

    def now(self) -> datetime:
        """Return the current time, aware UTC (tests may set `clock` to a callable)."""
        return self.clock() if self.clock else datetime.now(UTC)

    @cached_property
    def zone(self) -> tzinfo | None:
        """The zone of `general.timezone`, or None for the machine's local zone. Raise
        ConfigError naming the option if the zone is unknown."""
        name = self.config.general.timezone
        if not name.strip():
            return None
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(name.strip())
        except (ZoneInfoNotFoundError, ValueError) as error:
            message = f"general.timezone: unknown time zone {name!r} (an IANA name: Europe/Paris)"
            raise ConfigError([message]) from error

    @cached_property
    def storage(self) -> Storage:
        """This gateway's storage under the storage root (see memwarden.store.storage). A context
        that `claims_storage` (a job that writes) records the root's owner when it has none."""
        return claim(self._located) if self.claims_storage else self._located

    @cached_property
    def _located(self) -> Storage:
        """Where this gateway's storage is under the root of memwarden's storage (every
        gateway's state is in it), before any claim (read once). Raise ConfigError if the root
        is a file."""
        root, _ = storage_location(self.config, self.env)
        if root.exists() and not root.is_dir():
            source = self.config.sources.get("general.storage_dir", "default")
            where = "" if source == "default" else f" (general.storage_dir from {source})"
            raise ConfigError(
                [
                    f"{root}{where}: memwarden's state folder is a file, not a folder; set "
                    "general.storage_dir to a folder (memwarden creates it)"
                ]
            )
        return locate(root, self.gateway_state_dir)

    @cached_property
    def storage_dir(self) -> Path:
        """memwarden's own state folder for this gateway: state.db, locks, logs, history.
        Raise ConfigError if the storage root is a file."""
        return self.storage.path

    @cached_property
    def log_dir(self) -> Path:
        configured = self.config.general.log_dir
        return Path(configured).expanduser() if configured else self.storage_dir / "logs"

    @cached_property
    def state(self) -> StateDB:
        """memwarden's state database; for a read-only run where none exists yet, an empty one
        in memory (nothing is created on disk)."""
        path = self.storage_dir / "state.db"
        if self.read_only and not path.exists():
            return StateDB(Path(MEMORY))
        return StateDB(path)

    @cached_property
    def gateway_state_location(self) -> tuple[Path, str]:
        """Return the gateway state dir and what named it, for people: `--state-dir`,
        `gateway.state_dir (<where it was set>)`, `$OPENCLAW_STATE_DIR`, … or `default`."""
        override, source = self.state_dir_override, "--state-dir"
        if override is None and self.config.gateway.state_dir:
            override = Path(self.config.gateway.state_dir)
            source = f"gateway.state_dir ({self.config.sources['gateway.state_dir']})"
        path, chosen_by = locate_state_dir(override, env=self.env)
        return path, source if chosen_by == "override" else chosen_by

    @property
    def gateway_state_dir(self) -> Path:
        return self.gateway_state_location[0]

    @cached_property
    def deployment(self) -> Deployment:
        """The gateway's state dir, config and agents.

        Raise GatewayNotFound (exit 2) if no gateway lives in the state dir, naming it, what
        chose it and the fix; GatewayConfigError if its config is unreadable.
        """
        # lazy: a job that reads no gateway (status) skips its layout
        from memwarden.openclaw.layout import discover, not_a_gateway

        deployment = discover(self.gateway_state_dir, env=self.env)
        reason = not_a_gateway(deployment.state_dir, deployment.config_path)
        if reason is not None:
            path, source = self.gateway_state_location
            raise GatewayNotFound(
                f"{path}: no OpenClaw gateway state here: {reason} (state dir from {source})",
                "point memwarden at the folder holding the gateway's openclaw.json and agents/ "
                "with --state-dir DIR, $OPENCLAW_STATE_DIR or [gateway] state_dir",
                reason,
            )
        return deployment

    def check_gateway_before_writing(self) -> None:
        """Raise GatewayNotFound (exit 2) when the state dir holds no gateway and memwarden keeps
        no state for it yet, before a job creates any: a mistyped folder leaves nothing behind,
        while a gateway that has state (gone since) still gets its runs recorded."""
        found = self._located
        if found.owner == found.gateway or (not found.shared_root and found.path.is_dir()):
            return
        self.deployment  # noqa: B018 (raises GatewayNotFound)

    def lock(self, name: str, *, shared: bool = False) -> RunLock:
        """The run lock `name` in this storage's lock folder."""
        return RunLock(self.storage_dir / "locks", name, shared=shared)

    def memory_lock(
        self, agent_id: str, wait_seconds: float | None = None
    ) -> AbstractContextManager[None]:
        """Hold the agent's memory lock (`process.locks.memory_lock`), waiting up to
        `wait_seconds` (None: `history.lock_wait_seconds`). Raise LockHeld if it stays held."""
        wait = self.config.history.lock_wait_seconds if wait_seconds is None else wait_seconds
        return memory_lock(self.storage_dir / "locks", agent_id, wait)

    def close(self) -> None:
        if "state" in self.__dict__:
            self.state.close()
