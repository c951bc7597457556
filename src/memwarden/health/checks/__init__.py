"""The checks, each a small function `check(inputs) -> list[CheckResult]`, and the runner.

What the checks share is here; the list of them is `memwarden.health.run.CHECKS`.

A check that raises never stops the others: the runner turns the error into a warning under the
check's own key, so a broken check is itself reported. A check that cannot run because no gateway
lives in the state dir reports nothing: `gateway.state_dir` says so, once.
"""

from __future__ import annotations

import difflib
import fnmatch
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memwarden.alerts import (
    AlertRoutes,
    alert_lifetime,
    alertmanager_destination,
    slack_destination,
)
from memwarden.health.model import CheckResult, warning
from memwarden.indexing.bootstrap_files import bootstrap_lengths
from memwarden.process import stopping
from memwarden.process.errors import ConfigError, GatewayNotFound, MemwardenError

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.store.state import StateDB

log = logging.getLogger("memwarden.health")


@dataclass
class HealthInputs:
    """What the checks read: settings, the gateway layout (lazily), memwarden's state, the time.

    `deployment_loader` is called at most once; a GatewayConfigError it raises reaches each
    check that needs the layout, which the runner reports under that check's key.
    """

    config: Any
    deployment_loader: Callable[[], Deployment]
    state: StateDB
    now: datetime
    env: dict[str, str] = field(default_factory=dict)
    storage_dir: Path | None = None  # memwarden's own state folder, when the disk check sees it

    @cached_property
    def deployment(self) -> Deployment:
        return self.deployment_loader()

    @cached_property
    def bootstrap_lengths(self) -> dict[str, dict[str, int]]:
        """Each agent's bootstrap file lengths by agent id (none for an agent whose workspace is
        missing), each workspace read once a run for the budget check and the metrics."""
        agents = [agent for agent in self.deployment.agents if agent.workspace.is_dir()]
        lengths = {
            workspace: bootstrap_lengths(workspace)
            for workspace in {agent.workspace for agent in agents}
        }
        return {agent.id: lengths[agent.workspace] for agent in agents}

    @property
    def health(self) -> Any:
        return self.config.health


Check = Callable[[HealthInputs], list[CheckResult]]


def run_checks(
    inputs: HealthInputs, checks: Mapping[str, Check], disabled: Sequence[str] = ()
) -> tuple[list[CheckResult], list[str]]:
    """Given the inputs, the checks (each one's key, or key prefix, and its function) and the
    disabled keys or patterns, run every enabled check.

    Return the results (disabled keys filtered out) and one problem line per check that failed.
    """
    results: list[CheckResult] = []
    problems: list[str] = []
    for key, check in checks.items():
        if is_disabled(key, disabled):
            continue
        stopping.check()
        try:
            found = check(inputs)
        except GatewayNotFound:
            continue
        except MemwardenError as error:
            found = [warning(key, f"check could not run: {error.message}")]
            problems.append(f"health check {key}: {error.message}")
        except Exception as error:
            stopping.check()
            log.debug("health check %s failed", key, exc_info=True)
            text = f"{type(error).__name__}: {error}"
            found = [warning(key, f"check failed: {text}")]
            problems.append(f"health check {key} failed: {text}")
        results.extend(result for result in found if not is_disabled(result.key, disabled))
    return results, problems


STATE_KEY = "memwarden.state"  # the check a run adds when memwarden's state cannot be written
# The keys the checks report under, as docs/health.md's table lists them; `*` stands for what
# the key names (an agent, a mount, a job, a session).
REPORTED_KEYS = (
    *("gateway.state_dir", "gateway.live", "gateway.ready", "gateway.rpc", "gateway.process"),
    *("disk:*", "transcripts.volume", "memory.oversized", "memory.rewrite:*:*"),
    *("bootstrap.budget", "bootstrap.budget:*", "compaction.lossy:*:*:*"),
    *("handoff.delivery", "handoff.delivery:*:*", "history.snapshot", "history.snapshot:*"),
    *("cron.errors", "jobs.stale:*", "rotate.failing", "context.pressure", "config.drift"),
    *("sessions.store:*", STATE_KEY),
)


def unknown_check_patterns(config: Any) -> list[str]:
    """Return a problem per `health.disabled_checks` pattern that names no check: a key, the
    part of keys before a `.` or `:` (`gateway`, `disk`), or a glob over them or within one
    (`gateway.*`, `disk:*`, `compaction.lossy:main:*`), else it disables nothing without a
    word. A watched job's key is checked by its name (`jobs.stale:checkpoint`)."""
    jobs = [f"jobs.stale:{job}" for job in config.health.watched_jobs]
    names = [*REPORTED_KEYS, *jobs]
    # What a key with `*` names starts with (`disk:`); the jobs of `jobs.stale:*` are known.
    opens = [name.split("*")[0] for name in names if "*" in name and name != "jobs.stale:*"]
    problems = []
    for pattern in config.health.disabled_checks:
        literal = re.split(r"[*?[]", pattern, maxsplit=1)[0]
        if any(
            fnmatch.fnmatchcase(name, pattern) or name.startswith((f"{pattern}.", f"{pattern}:"))
            for name in names
        ) or literal.startswith(tuple(opens)):
            continue
        close = difflib.get_close_matches(pattern, names, n=1)
        hint = f"did you mean {close[0]}?" if close else "the checks: " + ", ".join(names)
        problems.append(f"health.disabled_checks: {pattern!r} names no check ({hint})")
    return problems


def check_settings(config: Any) -> AlertRoutes:
    """Given the settings, return where alerts go. Raise ConfigError listing every setting
    health refuses to run with (`memwarden config check` runs this too): a disabled_checks
    pattern that names no check, half a Slack setup, an Alertmanager resolve timeout that would
    let open alerts expire between two runs."""
    problems = unknown_check_patterns(config)
    alertmanager = alertmanager_destination(config.alertmanager)
    routes = AlertRoutes(
        _collected(problems, slack_destination, config.slack),
        alertmanager,
        _collected(problems, alert_lifetime, config) if alertmanager else None,
    )
    if problems:
        raise ConfigError(problems)
    return routes


def _collected(problems: list[str], read: Callable[[Any], Any], settings: Any) -> Any:
    """Return `read(settings)`, or None after adding the problems of the ConfigError it raised."""
    try:
        return read(settings)
    except ConfigError as error:
        problems += error.problems
        return None


def is_disabled(key: str, patterns: Sequence[str]) -> bool:
    """Given a check key and the `health.disabled_checks` patterns, return True if it is off.

    A pattern is a key, or a glob such as `disk:*` or `jobs.stale:*`.
    """
    return any(key == pattern or fnmatch.fnmatchcase(key, pattern) for pattern in patterns)


def regular_files(folder: str, skipped_folders: frozenset[str] = frozenset()):
    """Given a folder, yield (path, size) of the regular files under it, links not followed.

    Folders whose lower-cased name is in `skipped_folders` are not entered; a missing folder
    yields nothing. Paths are strings: a workspace holds thousands of files.
    """
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name.lower() not in skipped_folders:
                    pending.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry.path, entry.stat(follow_symlinks=False).st_size
