"""What every job receives: the settings, the options, and lazy access to state and gateway.

Jobs have one entry point, `run(context, options) -> JobResult`. The context opens the state
database and discovers the gateway's layout only when a job asks for them, so a job pays only for
what it uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.config import Config, storage_dir
from memwarden.errors import ConfigError, StateError
from memwarden.locks import RunLock

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.state import StateDB


@dataclass
class JobResult:
    """What a job did: `data` for --json, `lines` for people, `problems` always shown on stderr.

    `exit_code` follows the contract: 0 done, 1 done with failures.
    """

    job: str
    data: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    exit_code: int = 0

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
    # Set when a job that must run without its state (health) could not record its run:
    # the job reports it instead of failing (see JobSpec.runs_without_state).
    state_problem: StateError | None = None

    def now(self) -> datetime:
        """Return the current time, aware UTC (tests may set `clock` to a callable)."""
        return self.clock() if self.clock else datetime.now(UTC)

    @cached_property
    def storage_dir(self) -> Path:
        """memwarden's state folder. Raise ConfigError if that path is a file."""
        path = storage_dir(self.config, self.env)
        if path.exists() and not path.is_dir():
            source = self.config.sources.get("general.storage_dir", "default")
            where = "" if source == "default" else f" (general.storage_dir from {source})"
            raise ConfigError(
                [
                    f"{path}{where}: memwarden's state folder is a file, not a folder; set "
                    "general.storage_dir to a folder (memwarden creates it)"
                ]
            )
        return path

    @cached_property
    def log_dir(self) -> Path:
        configured = self.config.general.log_dir
        return Path(configured).expanduser() if configured else self.storage_dir / "logs"

    @cached_property
    def state(self) -> StateDB:
        from memwarden.state import StateDB

        return StateDB(self.storage_dir / "state.db")

    @cached_property
    def gateway_state_dir(self) -> Path:
        from memwarden.openclaw.paths import resolve_state_dir

        override = self.state_dir_override
        if override is None and self.config.gateway.state_dir:
            override = Path(self.config.gateway.state_dir)
        return resolve_state_dir(override, env=self.env)

    @cached_property
    def deployment(self) -> Deployment:
        """The gateway's state dir, config and agents. Raise GatewayConfigError if unreadable."""
        from memwarden.openclaw.layout import discover

        return discover(self.gateway_state_dir, env=self.env)

    def lock(self, name: str) -> RunLock:
        return RunLock(self.storage_dir / "locks", name)

    def close(self) -> None:
        if "state" in self.__dict__:
            self.state.close()
