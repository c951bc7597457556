"""Doctor's check of the installed timers and the jobs' last successes."""

from __future__ import annotations

from dataclasses import replace

from memwarden import __version__
from memwarden.doctor.timers import check_timers
from memwarden.scheduling.manifest import InstalledFile, Manifest

NOW = 1_800_000_000.0
WANTED = {"checkpoint": 20, "health": 5}


def manifest(jobs=None, installed_at="2027-01-15T08:00:00+00:00", version=__version__) -> Manifest:
    return Manifest(
        target="systemd",
        installed_at=installed_at,
        memwarden_version=version,
        executable="/h/bin/memwarden",
        jobs=dict(WANTED if jobs is None else jobs),
        environment={},
        activated=[f"memwarden-{job}.timer" for job in (WANTED if jobs is None else jobs)],
    )


def check(manifests, last=None, executable_ok=True, multiples=(3.0, 6.0)):
    return {
        f.key: f
        for f in check_timers(
            manifests,
            WANTED,
            last or {},
            NOW,
            multiples,
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


def test_check_timers_job_stale_past_the_critical_multiple_needs_action():
    findings = check({"systemd": manifest()}, {"checkpoint": NOW - 121 * 60, "health": NOW})
    finding = findings["timers.checkpoint"]
    assert finding.severity == "action"
    assert finding.message.startswith("checkpoint: last success 2.0 h ago (runs every 20 min)")


def test_check_timers_multiples_are_the_ones_given_as_health_grades_them():
    last = {"checkpoint": NOW - 61 * 60, "health": NOW}
    findings = check({"systemd": manifest()}, last, multiples=(4.0, 8.0))
    assert findings["timers.checkpoint"].severity == "ok"
    assert findings["timers.checkpoint"].fix is None


def test_check_timers_job_never_run_long_after_install_needs_action():
    old_install = manifest(installed_at="2020-01-01T00:00:00+00:00")
    finding = check({"systemd": old_install})["timers.health"]
    assert finding.severity == "action"
    assert "no success yet (scheduled " in finding.message


def test_check_timers_job_never_run_just_after_install_is_info():
    fresh = manifest(installed_at="2027-01-15T07:59:00+00:00")  # NOW is 08:00 that day
    finding = check({"systemd": fresh})["timers.checkpoint"]
    assert finding.severity == "info"
    assert finding.message == "checkpoint: no success yet (scheduled 1 min ago) (runs every 20 min)"


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


def test_timers_installed_by_another_version_warn_to_install_again():
    finding = check({"systemd": manifest(version="0.0.9")})["timers.systemd"]
    assert finding.severity == "warning"
    assert "installed by memwarden 0.0.9" in finding.message
    assert finding.fix == "memwarden install systemd"


def test_timers_written_but_not_activated_need_action():
    written = replace(manifest(), activated=["memwarden-checkpoint.timer"])
    finding = check({"systemd": written})["timers.systemd"]
    assert finding.severity == "action"
    assert "not activated" in finding.message
    assert "health" in finding.message and "checkpoint" not in finding.message
    assert finding.fix == "memwarden install systemd"


def test_timers_whose_files_are_gone_need_action():
    gone = ["/h/.config/systemd/user/memwarden-health.timer"]
    findings = check_timers(
        {"systemd": manifest()},
        WANTED,
        {},
        NOW,
        (3.0, 6.0),
        {"systemd": True},
        "/h/logs",
        {"systemd": gone},
    )
    (finding,) = [f for f in findings if f.key == "timers.systemd"]
    assert finding.severity == "action"
    assert gone[0] in finding.message


def test_record_an_uninstall_kept_is_no_install_and_not_unactivated():
    unit = InstalledFile("/h/units/memwarden-health.timer", "abc", "unit")
    kept = replace(manifest(jobs={}), files=[unit])
    findings = check({"systemd": kept})
    assert findings["timers.installed"].severity == "action"
    finding = findings["timers.systemd"]
    assert (finding.severity, finding.fix) == ("info", "memwarden uninstall systemd --force")
    assert "/h/units/memwarden-health.timer" in finding.message
    assert "not activated" not in finding.message
