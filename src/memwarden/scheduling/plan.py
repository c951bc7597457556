"""Decide what an install or an uninstall does: files to write or remove, commands to run.

Pure: the current crontab and the previous manifest come in as data; nothing here touches the
machine. `act` carries a plan out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memwarden.scheduling.cron import find_block, remove_block, replace_block
from memwarden.scheduling.manifest import InstalledFile, Manifest
from memwarden.scheduling.units import (
    PlannedFile,
    UnitSpec,
    cron_block,
    launchd_files,
    launchd_label,
    runner_file,
    systemd_files,
    systemd_unit_names,
)


@dataclass(frozen=True)
class Command:
    """A scheduler command. `may_fail`: failing is expected and harmless (nothing to stop)."""

    argv: tuple[str, ...]
    purpose: str
    stdin: str | None = None
    may_fail: bool = False

    def display(self) -> str:
        text = " ".join(self.argv)
        return f"{text}  (new crontab on stdin)" if self.stdin is not None else text

    def to_json(self) -> dict:
        return {"argv": list(self.argv), "purpose": self.purpose}


@dataclass(frozen=True)
class InstallPlan:
    """An install: stop what goes away, remove its files, write the new ones, activate them."""

    target: str
    files: tuple[PlannedFile, ...]
    stale_files: tuple[InstalledFile, ...] = ()
    before: tuple[Command, ...] = ()
    after: tuple[Command, ...] = ()
    activated: tuple[str, ...] = ()
    crontab: str | None = None


@dataclass(frozen=True)
class UninstallPlan:
    """An uninstall: stop the scheduler's entries, then (the manifest's files and folders
    removed) run `after`."""

    commands: tuple[Command, ...]
    after: tuple[Command, ...] = ()


def plan_install(
    target: str,
    spec: UnitSpec,
    previous: Manifest | None,
    uid: int,
    current_crontab: str | None = None,
) -> InstallPlan:
    """Given a target (one of TARGETS: the command line allows no other), the spec, the previous
    install (if any) and the user id, return the plan.

    For cron, `current_crontab` is the user's crontab now ("" when there is none).
    """
    if target == "systemd":
        return _plan_systemd(spec, previous)
    if target == "launchd":
        return _plan_launchd(spec, previous, uid)
    return _plan_cron(spec, previous, current_crontab or "")


def plan_uninstall(
    manifest: Manifest, uid: int, current_crontab: str | None = None
) -> UninstallPlan:
    """Given an install's manifest, return the plan that undoes exactly that install.

    For cron, `current_crontab` is the user's crontab now ("" when there is none). Only what
    is still active is stopped: systemd and launchd entries the manifest lists as activated,
    memwarden's block when the crontab still holds it.
    """
    timers = manifest.activated
    if manifest.target == "systemd":
        stops = tuple(_systemctl("disable", "--now", timer, may_fail=True) for timer in timers)
        after = (
            _systemctl("daemon-reload"),
            *(
                _systemctl("reset-failed", timer.removesuffix(".timer") + ".service", may_fail=True)
                for timer in timers
            ),
        )
        return UninstallPlan(stops, after)
    if manifest.target == "launchd":
        stops = tuple(_bootout(uid, label) for label in manifest.activated)
        return UninstallPlan(stops)
    return UninstallPlan(_crontab_removal(manifest, current_crontab or ""))


def _crontab_removal(manifest: Manifest, current: str) -> tuple[Command, ...]:
    """The command that takes memwarden's block out of the crontab; none when it holds no block
    (already removed, by an earlier uninstall or by hand: nothing of memwarden's runs)."""
    if find_block(current) is None:
        return ()
    remaining = remove_block(current)
    if remaining.strip() or manifest.crontab_existed:
        return (Command(("crontab", "-"), "remove memwarden's block", stdin=remaining),)
    return (Command(("crontab", "-r"), "remove the crontab install created"),)


def stale_files(previous: Manifest | None, files: list[PlannedFile]) -> tuple[InstalledFile, ...]:
    """Given the previous install and the new files, return the old unit files no longer wanted."""
    if previous is None:
        return ()
    wanted = {str(planned.path) for planned in files}
    return tuple(
        entry for entry in previous.files if entry.role != "secrets" and entry.path not in wanted
    )


def _plan_systemd(spec: UnitSpec, previous: Manifest | None) -> InstallPlan:
    files = systemd_files(spec)
    timers = tuple(systemd_unit_names(job.name)[1] for job in spec.jobs)
    before_timers = set(previous.activated) if previous and previous.target == "systemd" else set()
    before = tuple(
        _systemctl("disable", "--now", timer, may_fail=True)
        for timer in sorted(before_timers - set(timers))
    )
    after = (
        _systemctl("daemon-reload"),
        *(_systemctl("enable", "--now", timer) for timer in timers),
        *(_systemctl("restart", timer) for timer in timers if timer in before_timers),
    )
    return InstallPlan("systemd", tuple(files), stale_files(previous, files), before, after, timers)


def _plan_launchd(spec: UnitSpec, previous: Manifest | None, uid: int) -> InstallPlan:
    files = launchd_files(spec)
    labels = tuple(launchd_label(spec, job.name) for job in spec.jobs)
    earlier = tuple(previous.activated) if previous and previous.target == "launchd" else ()
    # An agent already loaded under a label makes bootstrap fail: unload first, then load.
    before = tuple(_bootout(uid, label) for label in dict.fromkeys((*earlier, *labels)))
    plists = [planned for planned in files if planned.path.suffix == ".plist"]
    after = tuple(
        Command(
            ("launchctl", "bootstrap", f"gui/{uid}", str(planned.path)),
            f"load {planned.path.stem}",
        )
        for planned in plists
    )
    return InstallPlan("launchd", tuple(files), stale_files(previous, files), before, after, labels)


def _plan_cron(spec: UnitSpec, previous: Manifest | None, current: str) -> InstallPlan:
    files = [runner_file(spec, "cron")]  # the runner script the crontab lines call
    crontab = replace_block(current, cron_block(spec))
    after = (Command(("crontab", "-"), "install memwarden's crontab block", stdin=crontab),)
    return InstallPlan(
        "cron", tuple(files), stale_files(previous, files), (), after, ("crontab",), crontab
    )


def _systemctl(*arguments: str, may_fail: bool = False) -> Command:
    return Command(("systemctl", "--user", *arguments), " ".join(arguments), may_fail=may_fail)


def _bootout(uid: int, label: str) -> Command:
    return Command(("launchctl", "bootout", f"gui/{uid}/{label}"), f"unload {label}", may_fail=True)


def removal_decision(entry: InstalledFile, current_sha256: str | None, force: bool) -> str:
    """Given an installed file and its current hash, return what uninstall does with it.

    `missing`: already gone. `remove`: unchanged since install (or `force`, except for the
    secrets file). `keep`: changed since install — the operator's edits are never deleted
    unasked, and a secrets file they filled in never at all.
    """
    if current_sha256 is None:
        return "missing"
    if current_sha256 == entry.sha256:
        return "remove"
    if force and entry.role != "secrets":
        return "remove"
    return "keep"


def dirs_to_remove(created_dirs: list[str] | tuple[str, ...]) -> list[Path]:
    """Given the folders install created, return them deepest first (to remove when empty)."""
    paths = [Path(path) for path in created_dirs]
    return sorted(paths, key=lambda path: len(path.parts), reverse=True)
