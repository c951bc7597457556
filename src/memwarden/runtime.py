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
from memwarden.locks import RunLock

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.state import StateDB
    from memwarden.storage import Storage


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
    claims_storage: bool = False

    def __post_init__(self) -> None:
        # Variables of the secrets file that are not memwarden settings (OPENCLAW_GATEWAY_TOKEN)
        # reach the job as the environment would give them; the real environment wins.
        if self.config.secrets_environment:
            self.env = {**self.config.secrets_environment, **self.env}

    def now(self) -> datetime:
        """Return the current time, aware UTC (tests may set `clock` to a callable)."""
        return self.clock() if self.clock else datetime.now(UTC)

    @cached_property
    def storage(self) -> Storage:
        """This gateway's storage under the storage root (see memwarden.storage). A context
        that `claims_storage` (a job that writes) records the root's owner when it has none."""
        from memwarden.storage import claim, locate

        found = locate(storage_dir(self.config, self.env), self.gateway_state_dir)
        return claim(found) if self.claims_storage else found

    @cached_property
    def storage_dir(self) -> Path:
        """memwarden's own state folder for this gateway: state.db, locks, logs, history."""
        return self.storage.path

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
