"""Doctor's check of the installed timers and the jobs' last successes."""

from __future__ import annotations

from memwarden.doctor.timers import check_timers
from memwarden.scheduling.manifest import Manifest

NOW = 1_800_000_000.0
WANTED = {"checkpoint": 20, "health": 5}


def manifest(jobs=None, installed_at="2027-01-15T08:00:00+00:00") -> Manifest:
    return Manifest(
        target="systemd",
        installed_at=installed_at,
        memwarden_version="0.1.0",
        executable="/h/bin/memwarden",
        jobs=dict(WANTED if jobs is None else jobs),
        environment={},
    )


def check(manifests, last=None, executable_ok=True):
    return {
        f.key: f
        for f in check_timers(
            manifests,
            WANTED,
            last or {},
            NOW,
            3.0,
            dict.fromkeys(manifests, executable_ok),
            "/h/logs",
        )
    }


def test_no_timers_installed_needs_action():
    finding = check({})["timers.installed"]
    assert (finding.severity, finding.fix) == ("action", "memwarden install auto")


def test_recent_successes_are_ok():
    findings = check({"systemd": manifest()}, {"checkpoint": NOW - 600, "health": NOW - 60})
    assert {key: f.severity for key, f in findings.items()} == {
        "timers.systemd": "ok",
        "timers.checkpoint": "ok",
        "timers.health": "ok",
    }


def test_job_not_succeeding_for_three_intervals_warns_with_its_log_command():
    findings = check({"systemd": manifest()}, {"checkpoint": NOW - 61 * 60, "health": NOW})
    finding = findings["timers.checkpoint"]
    assert finding.severity == "warning"
    assert finding.fix == "journalctl --user -u memwarden-checkpoint.service -n 50"


def test_job_never_run_long_after_install_warns():
    old_install = manifest(installed_at="2020-01-01T00:00:00+00:00")
    assert check({"systemd": old_install})["timers.health"].severity == "warning"


def test_timers_out_of_step_with_settings_suggest_reinstall():
    finding = check({"systemd": manifest({"checkpoint": 30, "health": 5})})["timers.systemd"]
    assert (finding.severity, finding.fix) == ("warning", "memwarden install systemd")
    assert "checkpoint every 20 minutes" in finding.message


def test_missing_executable_needs_reinstall():
    finding = check({"systemd": manifest()}, executable_ok=False)["timers.systemd"]
    assert (finding.severity, finding.fix) == ("action", "memwarden install systemd")


def test_two_schedulers_installed_warns_about_double_runs():
    cron = manifest()
    cron.target = "cron"
    findings = check({"systemd": manifest(), "cron": cron})
    assert findings["timers.duplicate"].severity == "warning"
