"""`memwarden install` / `uninstall` into a temporary HOME with the schedulers stubbed on PATH.

The stubs (systemctl, launchctl, crontab) are small shell scripts that record their arguments;
crontab also keeps the crontab in a file, as the real one does.
"""

from __future__ import annotations

import os
import platform
import plistlib
import pwd
import stat
from pathlib import Path

import orjson
import pytest

from support.cli import run_cli
from support.deployments import make_file_era_state
from support.schedulers import Stubs, install_stubs

JOBS = ("checkpoint", "rotate", "index", "health", "maintain")


@pytest.fixture
def stubs(tmp_path, monkeypatch) -> Stubs:
    found = install_stubs(tmp_path / "stubs")
    for name, value in found.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("USER", "alice")
    # A user session: the user manager's bus in the runtime folder.
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (runtime / "bus").touch()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return found


def tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_install_systemd_writes_units_enables_timers_and_uninstall_leaves_nothing(
    capsys, stubs, isolated_env
):
    home = isolated_env
    before = tree(home)
    result = run_cli(capsys, "install", "systemd")
    assert result.exit_code == 0, result.stderr
    unit_dir = home / ".config" / "systemd" / "user"
    for job in JOBS:
        assert mode(unit_dir / f"memwarden-{job}.service") == 0o600
        assert (unit_dir / f"memwarden-{job}.timer").is_file()
    calls = stubs.calls()
    assert calls[0] == "systemctl --user daemon-reload"
    assert calls[1:] == [f"systemctl --user enable --now memwarden-{job}.timer" for job in JOBS]
    secrets = home / ".config" / "memwarden" / "secrets.env"
    assert mode(secrets) == 0o600
    manifest = orjson.loads((home / ".local/state/memwarden/install/systemd.json").read_bytes())
    assert manifest["activated"] == [f"memwarden-{job}.timer" for job in JOBS]
    # The account's name, not $USER (alice) nor $HOME's folder name.
    user = pwd.getpwuid(os.getuid()).pw_name
    assert f" WARNING memwarden: user timers stop when {user} logs out" in result.stderr

    result = run_cli(capsys, "uninstall", "systemd")
    assert result.exit_code == 0, result.stderr
    assert tree(home) == before
    assert stubs.calls()[len(calls) :][:5] == [
        f"systemctl --user disable --now memwarden-{job}.timer" for job in JOBS
    ]
    assert "systemctl --user daemon-reload" in stubs.calls()[len(calls) :]


def test_install_launchd_bootstraps_each_agent_and_uninstall_boots_them_out(
    capsys, stubs, isolated_env
):
    home = isolated_env
    before = tree(home)
    result = run_cli(capsys, "install", "launchd")
    assert result.exit_code == 0, result.stderr
    agents = home / "Library" / "LaunchAgents"
    uid = os.getuid()
    for job in JOBS:
        data = plistlib.loads((agents / f"org.memwarden.{job}.plist").read_bytes())
        runner = Path(data["ProgramArguments"][0])
        assert mode(runner) == 0o700
        assert f"launchctl bootstrap gui/{uid} {agents}/org.memwarden.{job}.plist" in stubs.calls()
    assert (home / ".local/state/memwarden/logs").is_dir()

    result = run_cli(capsys, "uninstall", "launchd")
    assert result.exit_code == 0, result.stderr
    assert tree(home) == before
    assert stubs.calls()[-1] == f"launchctl bootout gui/{uid}/org.memwarden.maintain"


def test_install_cron_keeps_user_lines_and_uninstall_restores_them(capsys, stubs, isolated_env):
    mine = "MAILTO=ops@example.org\n0 2 * * * /usr/local/bin/backup\n"
    stubs.crontab.write_text(mine)
    assert run_cli(capsys, "install", "cron").exit_code == 0
    installed = stubs.crontab.read_text()
    assert installed.startswith(mine)
    assert installed.count("# >>> memwarden >>>") == 1
    assert run_cli(capsys, "install", "cron").exit_code == 0
    assert stubs.crontab.read_text() == installed

    assert run_cli(capsys, "uninstall", "cron").exit_code == 0
    assert stubs.crontab.read_text() == mine
    assert not (isolated_env / ".local/state/memwarden").exists()


def test_install_cron_without_crontab_before_removes_it_on_uninstall(capsys, stubs):
    assert run_cli(capsys, "install", "cron").exit_code == 0
    assert stubs.crontab.exists()
    assert run_cli(capsys, "uninstall", "cron").exit_code == 0
    assert not stubs.crontab.exists()
    assert stubs.calls()[-1] == "crontab -r"


@pytest.mark.parametrize("target", ["systemd", "launchd", "cron"])
def test_install_dry_run_writes_nothing_runs_nothing_and_prints_every_file(
    capsys, stubs, isolated_env, target
):
    before = tree(isolated_env)
    result = run_cli(capsys, "install", target, "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    assert tree(isolated_env) == before
    assert [call for call in stubs.calls() if call != "crontab -l"] == []
    data = result.json()
    assert data["dry_run"] is True
    expected = {"systemd": 10, "launchd": 6, "cron": 1}[target]
    assert len([f for f in data["files"] if f["role"] in ("unit", "runner")]) == expected
    assert all(f["content"] for f in data["files"])
    if target == "cron":
        assert (
            sum(f" {job} >>" in line for job in JOBS for line in data["crontab"].splitlines()) == 5
        )
    text = run_cli(capsys, "install", target, "--dry-run").stdout
    for entry in data["files"]:
        assert f"would write {entry['path']} ({entry['mode']}):" in text
    for command in data["commands"]:
        assert f"would run: {' '.join(command['argv'])}" in text


def test_install_missing_scheduler_command_exits_2_before_writing(
    capsys, monkeypatch, isolated_env
):
    monkeypatch.setenv("PATH", "/nonexistent")
    before = tree(isolated_env)
    result = run_cli(capsys, "install", "systemd")
    assert result.exit_code == 2
    assert "systemctl not found on PATH" in result.stderr
    assert tree(isolated_env) == before


def test_install_failing_command_exits_1_and_uninstall_still_cleans_up(
    capsys, stubs, monkeypatch, isolated_env
):
    before = tree(isolated_env)
    monkeypatch.setenv("STUB_FAIL", "--user enable --now memwarden-rotate.timer")
    result = run_cli(capsys, "install", "systemd")
    assert result.exit_code == 1
    assert (
        "failed: systemctl --user enable --now memwarden-rotate.timer: stub failure"
        in result.stderr
    )
    assert "systemctl --user enable --now memwarden-maintain.timer" in stubs.calls()
    monkeypatch.delenv("STUB_FAIL")
    assert run_cli(capsys, "uninstall", "systemd").exit_code == 0
    assert tree(isolated_env) == before


def test_uninstall_whose_stop_cannot_reach_the_scheduler_keeps_everything_and_a_rerun_finishes(
    capsys, stubs, monkeypatch, isolated_env
):
    before = tree(isolated_env)
    assert run_cli(capsys, "install", "systemd").exit_code == 0
    installed = tree(isolated_env)
    record = isolated_env / ".local/state/memwarden/install/systemd.json"
    recorded = record.read_bytes()
    monkeypatch.setenv("STUB_FAIL", "--user disable --now memwarden-rotate.timer")
    monkeypatch.setenv("STUB_FAIL_OUTPUT", "Failed to connect to bus: No medium found")

    result = run_cli(capsys, "uninstall", "systemd")

    assert result.exit_code == 1
    assert tree(isolated_env) == installed
    assert record.read_bytes() == recorded
    assert (
        "failed: systemctl --user disable --now memwarden-rotate.timer: Failed to connect to bus"
        in result.stderr
    )
    assert "run `memwarden uninstall systemd` again once the scheduler is reachable" in (
        result.stderr
    )
    monkeypatch.delenv("STUB_FAIL")
    assert run_cli(capsys, "uninstall", "systemd").exit_code == 0
    assert stubs.calls().count("systemctl --user disable --now memwarden-rotate.timer") == 2
    assert tree(isolated_env) == before


def test_uninstall_whose_crontab_update_fails_keeps_the_record_doctor_and_force_rely_on(
    capsys, stubs, monkeypatch, isolated_env
):
    stubs.crontab.write_text("MAILTO=me\n")
    assert run_cli(capsys, "install", "cron").exit_code == 0
    runner = isolated_env / ".local/state/memwarden/bin/memwarden-cron"
    runner.write_text(runner.read_text() + "# my edit\n")
    record = isolated_env / ".local/state/memwarden/install/cron.json"
    recorded = record.read_bytes()
    monkeypatch.setenv("STUB_FAIL", "-")

    result = run_cli(capsys, "uninstall", "cron", "--force")

    assert result.exit_code == 1
    assert record.read_bytes() == recorded
    assert runner.exists()
    assert "failed: crontab -  (new crontab on stdin): stub failure" in result.stderr
    assert "again once the scheduler is reachable" in result.stderr
    doctor = run_cli(capsys, "doctor", "--json")
    timers = [f for f in doctor.json()["findings"] if f["key"] == "timers.cron"]
    assert not any("nothing is scheduled" in f["message"] for f in timers), timers
    monkeypatch.delenv("STUB_FAIL")
    assert run_cli(capsys, "uninstall", "cron", "--force").exit_code == 0
    assert stubs.crontab.read_text() == "MAILTO=me\n"
    assert not runner.exists()
    assert not record.exists()


def test_uninstall_keeps_a_unit_changed_since_install_unless_forced(capsys, stubs, isolated_env):
    assert run_cli(capsys, "install", "systemd").exit_code == 0
    edited = isolated_env / ".config/systemd/user/memwarden-health.timer"
    edited.write_text(edited.read_text() + "# my edit\n")
    result = run_cli(capsys, "uninstall", "systemd")
    assert result.exit_code == 1
    assert f"kept {edited}: changed since install" in result.stderr
    assert edited.exists()
    assert not (isolated_env / ".config/systemd/user/memwarden-rotate.timer").exists()
    result = run_cli(capsys, "uninstall", "systemd", "--force")
    assert result.exit_code == 0, result.stderr
    assert not edited.exists()
    assert not (isolated_env / ".local/state/memwarden/install/systemd.json").exists()


def test_uninstall_cron_keeping_an_edited_runner_records_only_it_and_force_finishes(
    capsys, stubs, isolated_env
):
    assert run_cli(capsys, "install", "cron").exit_code == 0
    runner = isolated_env / ".local/state/memwarden/bin/memwarden-cron"
    record = isolated_env / ".local/state/memwarden/install/cron.json"
    runner.write_text(runner.read_text() + "# my edit\n")
    dry = run_cli(capsys, "uninstall", "cron", "--dry-run")
    assert f"would keep (changed since install) {runner}" in dry.stdout
    assert f"would keep {record}, listing only the kept files" in dry.stdout
    assert f"would remove {record}" not in dry.stdout

    result = run_cli(capsys, "uninstall", "cron")
    assert result.exit_code == 1
    assert "rerun with --force" in result.stderr
    assert not stubs.crontab.exists()
    left = orjson.loads(record.read_bytes())
    assert [entry["path"] for entry in left["files"]] == [str(runner)]
    assert (left["jobs"], left["activated"]) == ({}, [])
    doctor = run_cli(capsys, "doctor", "--json")
    cron = [f for f in doctor.json()["findings"] if f["key"] == "timers.cron"]
    assert [f["fix"] for f in cron] == ["memwarden uninstall cron --force"], cron
    assert "not activated" not in cron[0]["message"]

    dry = run_cli(capsys, "uninstall", "cron", "--force", "--dry-run")
    assert f"would remove {runner}" in dry.stdout
    assert f"would remove {record}" in dry.stdout
    assert "would run" not in dry.stdout
    calls = len(stubs.calls())
    result = run_cli(capsys, "uninstall", "cron", "--force")
    assert result.exit_code == 0, result.stderr
    assert stubs.calls()[calls:] == ["crontab -l"]
    assert not runner.exists() and not record.exists()


def test_uninstall_keeps_the_secrets_file_once_filled_in(capsys, stubs, isolated_env):
    assert run_cli(capsys, "install", "cron").exit_code == 0
    secrets = isolated_env / ".config/memwarden/secrets.env"
    secrets.write_text("MEMWARDEN_SLACK_BOT_TOKEN=xoxb-1\n")
    result = run_cli(capsys, "uninstall", "cron")
    assert result.exit_code == 0, result.stderr
    assert secrets.read_text() == "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-1\n"
    assert f"kept {secrets}: it holds your secrets" in result.stdout


def test_install_again_with_fewer_jobs_stops_and_removes_the_dropped_ones(
    capsys, stubs, isolated_env, tmp_path
):
    assert run_cli(capsys, "install", "systemd").exit_code == 0
    config = tmp_path / "config.toml"
    config.write_text('[install]\njobs = ["checkpoint", "health"]\n')
    result = run_cli(capsys, "--config", config, "install", "systemd")
    assert result.exit_code == 0, result.stderr
    unit_dir = isolated_env / ".config/systemd/user"
    assert sorted(p.name for p in unit_dir.iterdir()) == [
        "memwarden-checkpoint.service",
        "memwarden-checkpoint.timer",
        "memwarden-health.service",
        "memwarden-health.timer",
    ]
    assert "systemctl --user disable --now memwarden-rotate.timer" in stubs.calls()
    assert "systemctl --user restart memwarden-health.timer" in stubs.calls()
    service = (unit_dir / "memwarden-health.service").read_text()
    assert f"Environment=MEMWARDEN_CONFIG={config}" in service


def test_install_again_keeps_a_dropped_unit_changed_since_install(
    capsys, stubs, isolated_env, tmp_path
):
    assert run_cli(capsys, "install", "systemd").exit_code == 0
    unit_dir = isolated_env / ".config/systemd/user"
    edited = unit_dir / "memwarden-rotate.timer"
    edited.write_text(edited.read_text() + "# my edit\n")
    config = tmp_path / "config.toml"
    config.write_text('[install]\njobs = ["checkpoint", "health"]\n')
    result = run_cli(capsys, "--config", config, "install", "systemd")
    assert result.exit_code == 0, result.stderr
    assert f"removed {unit_dir / 'memwarden-rotate.service'} (no longer scheduled)" in result.stdout
    assert (
        f"kept {edited}: no longer scheduled but changed since install; delete it by hand"
        in result.stderr
    )
    assert edited.exists()


def test_install_never_writes_secrets_from_the_environment(capsys, stubs, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", "xoxb-must-not-leak")
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "gateway-must-not-leak")
    for target in ("systemd", "launchd", "cron"):
        result = run_cli(capsys, "install", target, "--dry-run", "--json")
        assert result.exit_code == 0, result.stderr
        assert "must-not-leak" not in result.stdout
        assert "MEMWARDEN_SLACK_BOT_TOKEN is set in this shell but the timers" in result.stderr
        assert "OPENCLAW_GATEWAY_TOKEN is set in this shell" in result.stderr


@pytest.mark.skipif(platform.system() != "Linux", reason="Linux scheduler choice")
def test_install_auto_without_a_user_manager_chooses_cron(capsys, stubs):
    result = run_cli(capsys, "install", "auto", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()["target"] == "cron"


def test_uninstall_auto_nothing_installed_says_so(capsys, stubs):
    result = run_cli(capsys, "uninstall", "auto")
    assert result.exit_code == 0
    assert "nothing to uninstall" in result.stdout


def test_uninstall_auto_removes_every_installed_target(capsys, stubs, isolated_env):
    before = tree(isolated_env)
    assert run_cli(capsys, "install", "cron").exit_code == 0
    assert run_cli(capsys, "install", "systemd").exit_code == 0
    result = run_cli(capsys, "uninstall", "auto", "--json")
    assert result.exit_code == 0, result.stderr
    assert [entry["target"] for entry in result.json()["targets"]] == ["systemd", "cron"]
    assert tree(isolated_env) == before


def test_install_hooks_dispatches_to_the_hook_installer(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    result = run_cli(
        capsys, "--state-dir", state.state_dir, "install", "hooks", "--dry-run", "--json"
    )
    assert result.exit_code == 0, result.stderr
    assert result.json()["hooks_dir"] == str(state.state_dir / "hooks")
    assert not (state.state_dir / "hooks").exists()


def hardening_paths(result, job: str) -> list[str]:
    """The `# ReadWritePaths=` values of a job's service in an install --dry-run --json."""
    (service,) = [
        entry["content"]
        for entry in result.json()["files"]
        if entry["path"].endswith(f"memwarden-{job}.service")
    ]
    prefix = "# ReadWritePaths="
    return [line[len(prefix) :] for line in service.splitlines() if line.startswith(prefix)]


def test_install_systemd_hardening_paths_are_what_each_job_writes(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(tmp_path / "textfile" / "mw.prom"))
    state = make_file_era_state(tmp_path)
    storage = Path(os.environ["XDG_STATE_HOME"]) / "memwarden"
    memory = state.workspace / "memory"  # not created yet

    result = run_cli(
        capsys, "--state-dir", state.state_dir, "install", "systemd", "--dry-run", "--json"
    )

    assert result.exit_code == 0, result.stderr
    for job in ("checkpoint", "rotate", "index"):
        assert hardening_paths(result, job) == [str(storage), f"-{memory}"]
    # maintain archives idle handoffs by default (maintain.archive_handoffs_after_days = 30).
    assert hardening_paths(result, "maintain") == [
        str(storage),
        f"-{memory}",
        str(state.sessions_dir),
    ]
    assert hardening_paths(result, "health") == [str(storage), f"-{tmp_path / 'textfile'}"]


def test_install_systemd_maintain_archiving_daily_logs_may_write_memory(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_ARCHIVE_DAILY_LOGS_AFTER_DAYS", "30")
    state = make_file_era_state(tmp_path)
    (state.workspace / "memory").mkdir()

    result = run_cli(
        capsys, "--state-dir", state.state_dir, "install", "systemd", "--dry-run", "--json"
    )

    assert str(state.workspace / "memory") in hardening_paths(result, "maintain")


def test_install_systemd_maintain_without_archiving_leaves_memory_out(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_ARCHIVE_HANDOFFS_AFTER_DAYS", "0")
    state = make_file_era_state(tmp_path)
    storage = Path(os.environ["XDG_STATE_HOME"]) / "memwarden"

    result = run_cli(
        capsys, "--state-dir", state.state_dir, "install", "systemd", "--dry-run", "--json"
    )

    assert hardening_paths(result, "maintain") == [str(storage), str(state.sessions_dir)]


def test_install_systemd_without_a_user_manager_is_refused_before_writing(
    capsys, stubs, isolated_env, monkeypatch
):
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    before = tree(isolated_env)

    dry = run_cli(capsys, "install", "systemd", "--dry-run")
    assert dry.exit_code == 0
    assert "note: no systemd user manager is reachable" in dry.stdout
    result = run_cli(capsys, "install", "systemd")

    assert result.exit_code == 2
    assert "no systemd user manager is reachable" in result.stderr
    assert "memwarden install cron" in result.stderr
    assert tree(isolated_env) == before
    assert stubs.calls() == []


def test_install_records_only_the_timers_that_were_enabled_and_doctor_says_so(
    capsys, stubs, isolated_env, monkeypatch
):
    monkeypatch.setenv("STUB_FAIL", "--user enable --now memwarden-health.timer")
    result = run_cli(capsys, "install", "systemd")
    assert result.exit_code == 1
    manifest = orjson.loads(
        (isolated_env / ".local/state/memwarden/install/systemd.json").read_bytes()
    )
    assert "memwarden-health.timer" not in manifest["activated"]
    assert "memwarden-checkpoint.timer" in manifest["activated"]

    doctor = run_cli(capsys, "doctor", "--json")
    timers = [f for f in doctor.json()["findings"] if f["key"] == "timers.systemd"]
    assert any("health" in f["message"] and f["severity"] == "action" for f in timers), timers


def test_install_for_a_second_gateway_refuses_to_repoint_the_first_ones_timers(
    capsys, stubs, isolated_env, tmp_path
):
    first = make_file_era_state(tmp_path / "first")
    second = make_file_era_state(tmp_path / "second")
    assert run_cli(capsys, "--state-dir", first.state_dir, "install", "systemd").exit_code == 0
    units = isolated_env / ".config" / "systemd" / "user"
    before = {path.name: path.read_bytes() for path in units.iterdir()}

    result = run_cli(capsys, "--state-dir", second.state_dir, "install", "systemd")

    assert result.exit_code == 2
    assert str(first.state_dir) in result.stderr
    assert "uninstall systemd" in result.stderr
    assert {path.name: path.read_bytes() for path in units.iterdir()} == before
    # The first gateway's own reinstall is still fine.
    assert run_cli(capsys, "--state-dir", first.state_dir, "install", "systemd").exit_code == 0


def test_install_warns_when_no_gateway_lives_in_the_state_dir(
    capsys, stubs, isolated_env, tmp_path
):
    result = run_cli(capsys, "--state-dir", tmp_path / "typo", "install", "systemd", "--dry-run")
    assert result.exit_code == 0
    assert "no OpenClaw gateway state here" in result.stderr
    assert "the timers will fail (exit 2) until it exists" in result.stderr


def test_install_launchd_records_agents_whose_unload_first_found_nothing_as_activated(
    capsys, stubs, isolated_env, monkeypatch
):
    # On a first install no agent is loaded: launchctl bootout fails, and bootstrap loads it.
    monkeypatch.setenv("STUB_FAIL", f"bootout gui/{os.getuid()}/org.memwarden.health")
    result = run_cli(capsys, "install", "launchd")
    assert result.exit_code == 0, result.stderr
    manifest = orjson.loads(
        (isolated_env / ".local/state/memwarden/install/launchd.json").read_bytes()
    )
    assert manifest["activated"] == [f"org.memwarden.{job}" for job in JOBS]
