"""Install and uninstall plans: which files, which scheduler commands, in which order."""

from __future__ import annotations

from pathlib import Path

from memwarden.scheduling.cron import BEGIN_MARKER
from memwarden.scheduling.jobs import OFFSETS, SUMMARIES, ScheduledJob
from memwarden.scheduling.manifest import InstalledFile, Manifest
from memwarden.scheduling.plan import (
    dirs_to_remove,
    plan_install,
    plan_uninstall,
    removal_decision,
)
from memwarden.scheduling.units import UnitSpec

UID = 501


def spec(*jobs: str) -> UnitSpec:
    names = jobs or ("checkpoint", "health")
    return UnitSpec(
        jobs=tuple(ScheduledJob(n, 20, SUMMARIES[n], OFFSETS[n]) for n in names),
        executable=Path("/h/bin/memwarden"),
        secrets_file=Path("/h/.config/memwarden/secrets.env"),
        storage_dir=Path("/h/state"),
        log_dir=Path("/h/state/logs"),
        environment=(("PATH", "/usr/bin"),),
        systemd_dir=Path("/h/.config/systemd/user"),
        launchd_dir=Path("/h/Library/LaunchAgents"),
        launchd_label="org.memwarden",
    )


def manifest(target: str, activated: list[str], files: list[InstalledFile], **extra) -> Manifest:
    return Manifest(
        target=target,
        installed_at="2026-11-01T00:00:00+00:00",
        memwarden_version="0.1.0",
        executable="/h/bin/memwarden",
        jobs={"checkpoint": 20},
        environment={},
        files=files,
        activated=activated,
        **extra,
    )


def argvs(commands) -> list[str]:
    return [" ".join(command.argv) for command in commands]


def test_plan_install_systemd_reloads_then_enables_each_timer():
    plan = plan_install("systemd", spec(), None, UID)
    assert argvs(plan.after) == [
        "systemctl --user daemon-reload",
        "systemctl --user enable --now memwarden-checkpoint.timer",
        "systemctl --user enable --now memwarden-health.timer",
    ]
    assert plan.before == ()
    assert plan.activated == ("memwarden-checkpoint.timer", "memwarden-health.timer")


def test_plan_install_systemd_reinstall_stops_dropped_job_and_restarts_kept_ones():
    old_unit = InstalledFile("/h/.config/systemd/user/memwarden-rotate.timer", "x", "unit")
    kept_unit = InstalledFile("/h/.config/systemd/user/memwarden-health.timer", "y", "unit")
    secrets = InstalledFile("/h/.config/memwarden/secrets.env", "z", "secrets")
    previous = manifest(
        "systemd",
        ["memwarden-rotate.timer", "memwarden-health.timer"],
        [old_unit, kept_unit, secrets],
    )
    plan = plan_install("systemd", spec(), previous, UID)
    assert argvs(plan.before) == ["systemctl --user disable --now memwarden-rotate.timer"]
    assert plan.before[0].may_fail
    assert plan.stale_files == (old_unit,)
    assert "systemctl --user restart memwarden-health.timer" in argvs(plan.after)
    assert "systemctl --user restart memwarden-checkpoint.timer" not in argvs(plan.after)


def test_plan_install_launchd_unloads_before_loading_each_agent():
    plan = plan_install("launchd", spec(), None, UID)
    assert argvs(plan.before) == [
        f"launchctl bootout gui/{UID}/org.memwarden.checkpoint",
        f"launchctl bootout gui/{UID}/org.memwarden.health",
    ]
    assert all(command.may_fail for command in plan.before)
    assert argvs(plan.after) == [
        f"launchctl bootstrap gui/{UID} /h/Library/LaunchAgents/org.memwarden.checkpoint.plist",
        f"launchctl bootstrap gui/{UID} /h/Library/LaunchAgents/org.memwarden.health.plist",
    ]
    assert {p.path.name for p in plan.files} == {
        "memwarden-launchd",
        "org.memwarden.checkpoint.plist",
        "org.memwarden.health.plist",
    }


def test_plan_install_cron_sends_the_merged_crontab_on_stdin():
    plan = plan_install("cron", spec(), None, UID, "0 1 * * * /usr/bin/mine\n")
    (command,) = plan.after
    assert command.argv == ("crontab", "-")
    assert command.stdin == plan.crontab
    assert plan.crontab.startswith("0 1 * * * /usr/bin/mine\n\n" + BEGIN_MARKER)
    assert [p.path.name for p in plan.files] == ["memwarden-cron"]


def test_plan_uninstall_systemd_disables_every_timer_then_reloads():
    previous = manifest("systemd", ["memwarden-checkpoint.timer"], [])
    plan = plan_uninstall(previous, UID)
    assert argvs(plan.commands) == ["systemctl --user disable --now memwarden-checkpoint.timer"]
    assert argvs(plan.after) == [
        "systemctl --user daemon-reload",
        "systemctl --user reset-failed memwarden-checkpoint.service",
    ]


def test_plan_uninstall_cron_created_crontab_is_removed_entirely():
    crontab = plan_install("cron", spec(), None, UID, "").crontab
    plan = plan_uninstall(manifest("cron", ["crontab"], [], crontab_existed=False), UID, crontab)
    assert argvs(plan.commands) == ["crontab -r"]


def test_plan_uninstall_cron_keeps_the_users_lines():
    crontab = plan_install("cron", spec(), None, UID, "0 1 * * * /usr/bin/mine\n").crontab
    plan = plan_uninstall(manifest("cron", ["crontab"], [], crontab_existed=True), UID, crontab)
    (command,) = plan.commands
    assert command.argv == ("crontab", "-")
    assert command.stdin == "0 1 * * * /usr/bin/mine\n"


def test_removal_decision_unchanged_missing_changed_and_forced():
    unit = InstalledFile("/u", "abc", "unit")
    secrets = InstalledFile("/s", "abc", "secrets")
    assert removal_decision(unit, "abc", force=False) == "remove"
    assert removal_decision(unit, None, force=False) == "missing"
    assert removal_decision(unit, "edited", force=False) == "keep"
    assert removal_decision(unit, "edited", force=True) == "remove"
    assert removal_decision(secrets, "filled-in", force=True) == "keep"


def test_dirs_to_remove_deepest_first():
    assert dirs_to_remove(["/a", "/a/b/c", "/a/b"]) == [Path("/a/b/c"), Path("/a/b"), Path("/a")]


def test_plan_uninstall_cron_without_memwarden_block_runs_nothing():
    for crontab in ("", "0 1 * * * /usr/bin/mine\n"):
        for existed in (False, True):
            previous = manifest("cron", ["crontab"], [], crontab_existed=existed)
            assert plan_uninstall(previous, UID, crontab).commands == ()
