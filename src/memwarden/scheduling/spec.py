"""Build the UnitSpec of this machine from the settings and the environment (reads only)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from memwarden.process.errors import MemwardenError
from memwarden.process.runtime import JobContext
from memwarden.scheduling.host import (
    default_launchd_dir,
    default_systemd_dir,
    names_defined_in,
    pinned_environment,
    resolve_executable,
    unpinned_variables,
)
from memwarden.scheduling.jobs import scheduled_jobs
from memwarden.scheduling.units import UnitSpec, systemd_path
from memwarden.settings.config import default_secrets_file

# Jobs that write the agents' memory folders (rotate checkpoints a session before its reset).
MEMORY_WRITERS = frozenset({"checkpoint", "rotate", "index"})


def unit_spec(context: JobContext) -> UnitSpec:
    """Given a job context, return the spec the timers are rendered from.

    Raise UsageError if memwarden's executable cannot be found.
    """
    config, env = context.config, context.env
    install = config.install
    environment = pinned_environment(
        env,
        storage_dir=context.storage.root,  # each run finds its gateway's folder in it
        config_file=config.path,
        gateway_state_dir=context.state_dir_override,
    )
    jobs = tuple(scheduled_jobs(config))
    return UnitSpec(
        jobs=jobs,
        executable=resolve_executable(install.executable, env),
        secrets_file=secrets_file_path(context),
        storage_dir=_absolute(context.storage_dir),
        log_dir=_absolute(context.log_dir),
        environment=tuple(environment),
        systemd_dir=_configured(install.systemd_unit_dir, default_systemd_dir(env)),
        launchd_dir=_configured(install.launchd_agents_dir, default_launchd_dir(env)),
        launchd_label=install.launchd_label,
        writable_paths={job.name: writable_paths(context, job.name) for job in jobs},
    )


def secrets_file_path(context: JobContext) -> Path:
    """Return memwarden's secrets file: general.secrets_file, else the XDG default."""
    return _configured(context.config.general.secrets_file, default_secrets_file(context.env))


def _configured(setting: str, default: Path) -> Path:
    """The absolute path of a folder or file setting, else of its default."""
    return _absolute(Path(setting).expanduser() if setting else default)


def writable_paths(context: JobContext, job: str) -> tuple[str, ...]:
    """Given a scheduled job, return the `ReadWritePaths=` values of its hardening block: the
    folders it writes to.

    Every job: memwarden's storage and log dirs. checkpoint, rotate (which checkpoints) and index:
    each agent's memory folder. maintain: the sessions folder of each agent not in the SQLite
    era (it compresses and deletes old transcripts there; the gateway config backups go to the
    storage dir), and the memory folders when it archives daily logs or handoffs. health: the
    folder of `health.metrics_file`. A gateway that cannot be read yet leaves the agents'
    folders out; a folder that does not exist yet gets a `-` in front, which tells systemd to
    ignore it while it is missing (it fails the unit otherwise).
    """
    storage = _absolute(context.storage_dir)
    paths = [storage, _absolute(context.log_dir)]
    with contextlib.suppress(MemwardenError):
        agents = context.deployment.usable_agents()
        maintain = context.config.maintain
        archives = max(maintain.archive_daily_logs_after_days, maintain.archive_handoffs_after_days)
        if job in MEMORY_WRITERS or (job == "maintain" and archives > 0):
            paths += [_absolute(agent.memory_dir) for agent in agents]
        if job == "maintain":
            paths += [_absolute(agent.sessions_dir) for agent in agents if agent.era != "sqlite"]
    metrics_file = context.config.health.metrics_file
    if job == "health" and metrics_file:
        paths.append(_absolute(Path(metrics_file).expanduser()).parent)
    unique: list[Path] = []
    for path in paths:
        if not any(path == kept or kept in path.parents for kept in unique):
            unique = [kept for kept in unique if path not in kept.parents] + [path]
    # The storage dir exists once installed: the install writes its manifest there.
    return tuple(
        ("" if path == storage or path.is_dir() else "-") + systemd_path(str(path))
        for path in unique
    )


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def variables_timers_miss(context: JobContext, pinned: Collection[str]) -> list[str]:
    """Given the variables pinned into the timers, return those set in this shell that
    scheduled runs will not see (`host.unpinned_variables`) and the secrets file does not
    define either. The gateway token is missed only when the gateway config holds none."""
    defined = names_defined_in(secrets_file_path(context))
    missed = unpinned_variables(context.env, pinned, _config_has_token(context))
    return [name for name in missed if name not in defined]


def _config_has_token(context: JobContext) -> bool:
    """Return True when the gateway config itself holds a token (timers then find it there)."""
    try:
        deployment = context.deployment
    except MemwardenError:
        return False
    return replace(deployment, env={}).gateway_token() is not None
