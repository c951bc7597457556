"""Build the UnitSpec of this machine from the settings and the environment (reads only)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path

from memwarden.errors import MemwardenError
from memwarden.runtime import JobContext
from memwarden.scheduling.host import (
    default_launchd_dir,
    default_secrets_file,
    default_systemd_dir,
    home_dir,
    pinned_environment,
    resolve_executable,
)
from memwarden.scheduling.jobs import scheduled_jobs
from memwarden.scheduling.units import UnitSpec


def unit_spec(context: JobContext) -> UnitSpec:
    """Given a job context, return the spec the timers are rendered from.

    Raise ConfigError or UsageError if install.jobs is invalid or memwarden's executable cannot
    be found.
    """
    config, env = context.config, context.env
    home = home_dir(env)
    install = config.install
    environment = pinned_environment(
        env,
        storage_dir=context.storage_dir,
        config_file=config.path,
        gateway_state_dir=context.state_dir_override,
    )
    return UnitSpec(
        jobs=tuple(scheduled_jobs(config)),
        executable=resolve_executable(install.executable, env),
        secrets_file=secrets_file_path(context),
        storage_dir=_absolute(context.storage_dir),
        log_dir=_absolute(context.log_dir),
        environment=tuple(environment),
        systemd_dir=_absolute(
            Path(install.systemd_unit_dir).expanduser()
            if install.systemd_unit_dir
            else default_systemd_dir(env, home)
        ),
        launchd_dir=_absolute(
            Path(install.launchd_agents_dir).expanduser()
            if install.launchd_agents_dir
            else default_launchd_dir(home)
        ),
        launchd_label=install.launchd_label,
        writable_paths=tuple(writable_paths(context)),
    )


def secrets_file_path(context: JobContext) -> Path:
    """Return memwarden's secrets file: general.secrets_file, else the XDG default."""
    configured = context.config.general.secrets_file
    if configured:
        return _absolute(Path(configured).expanduser())
    return _absolute(default_secrets_file(context.env, home_dir(context.env)))


def writable_paths(context: JobContext) -> list[Path]:
    """Return the folders memwarden writes to: its storage and log dirs, each memory folder.

    Used only for the commented hardening block; a gateway that cannot be read yet leaves the
    agents' folders out.
    """
    paths = [_absolute(context.storage_dir), _absolute(context.log_dir)]
    with contextlib.suppress(MemwardenError):
        paths += [agent.memory_dir for agent in context.deployment.agents]
    unique = []
    for path in paths:
        if not any(path == kept or kept in path.parents for kept in unique):
            unique.append(path)
    return unique


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def config_has_token(context: JobContext) -> bool:
    """Return True when the gateway config itself holds a token (timers then find it there)."""
    try:
        deployment = context.deployment
    except MemwardenError:
        return False
    return replace(deployment, env={}).gateway_token() is not None
