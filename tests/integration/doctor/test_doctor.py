"""`memwarden doctor` against copies of real gateway state and a fake gateway on 127.0.0.1."""

from __future__ import annotations

import grp
import os
import shutil
import sys
import time
from pathlib import Path

import json5
import pytest

from memwarden.gateway_hooks.shipped import hook_sources
from memwarden.store.state import StateDB
from support.cli import run_cli
from support.deployments import make_file_era_state, make_generated_fleet, write_json5_config
from support.gateway_sim import GatewaySimulator
from support.schedulers import crontab_stub

HOOKS = ("memory-index-inject", "session-summary")
JOBS = ("checkpoint", "rotate", "index", "health", "maintain")


@pytest.fixture
def gateway():
    with GatewaySimulator() as sim:
        yield sim


def edit_config(state, change) -> None:
    config = json5.loads(state.config_path.read_text())
    change(config)
    write_json5_config(state.config_path, config)
    state.config_path.chmod(0o600)


def healthy(tmp_path, home, sim, monkeypatch, capsys):
    """A deployment doctor should find nothing to fix in: hooks, timers, runs, modes, token."""
    state = make_file_era_state(tmp_path)

    def change(config):
        config["gateway"]["port"] = sim.port
        config["gateway"]["auth"]["token"] = sim.token
        config["hooks"]["internal"]["entries"] = {name: {"enabled": True} for name in HOOKS}

    edit_config(state, change)
    for name in HOOKS:
        shutil.copytree(hook_sources() / name, state.state_dir / "hooks" / name)
    executable = Path(sys.executable).with_name("memwarden")
    settings = state.state_dir / "hooks" / "session-summary" / "memwarden.json"
    settings.write_text(f'{{"executable": "{executable}"}}\n')
    receipts = home / ".local" / "state" / "memwarden" / "deliveries"
    inject = state.state_dir / "hooks" / "memory-index-inject" / "memwarden.json"
    inject.write_text(f'{{"deliveries": "{receipts}"}}\n')
    memory = state.workspace / "memory"
    memory.mkdir(mode=0o700)
    (memory / "INDEX.md").write_text("# Index\n")
    for name, value in crontab_stub(tmp_path / "stubs").items():
        monkeypatch.setenv(name, value)
    assert run_cli(capsys, "install", "cron").exit_code == 0
    secrets = home / ".config" / "memwarden" / "secrets.env"
    with secrets.open("a") as lines:  # alerts reach someone
        lines.write("MEMWARDEN_SLACK_WEBHOOK_URL=https://hooks.slack.example/T0/B0/x\n")
    storage = home / ".local" / "state" / "memwarden"
    db = StateDB(storage / "state.db")
    for job in JOBS:
        db.finish_run(db.start_run(job), 0, {})
    db.close()
    return state


def doctor_offline(capsys, state):
    """`doctor --skip-gateway --json` of the state dir."""
    return run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--skip-gateway", "--json")


def findings(result) -> dict[str, dict]:
    return {finding["key"]: finding for finding in result.json()["findings"]}


def test_doctor_healthy_deployment_exits_0_with_nothing_to_do(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    problems = [f for f in result.json()["findings"] if f["severity"] in ("action", "warning")]
    assert problems == []
    assert result.exit_code == 0
    found = findings(result)
    assert found["gateway.reachable"]["severity"] == "ok"
    assert "openclaw 2026.9.6" in found["gateway.reachable"]["message"]
    assert found["hooks.session-summary"]["severity"] == "ok"
    assert found["timers.cron"]["severity"] == "ok"
    assert found["bootstrap.main.INDEX.md"]["severity"] == "ok"


def test_doctor_crontab_without_memwarden_lines_needs_action(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    (tmp_path / "stubs" / "crontab.txt").unlink()  # what `crontab -r` does
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    finding = findings(result)["timers.cron"]
    assert finding["severity"] == "action"
    assert "memwarden's lines in your crontab" in finding["message"]
    assert finding["fix"] == "memwarden install cron"
    assert result.exit_code == 1


def test_doctor_safeguard_compaction_warns_with_the_exact_command(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    edit_config(state, lambda c: c["agents"]["defaults"].update(compaction={"mode": "safeguard"}))
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor")
    assert result.exit_code == 0
    assert "[warning] compaction.mode:" in result.stdout
    assert "fix: openclaw config set agents.defaults.compaction.mode default" in result.stdout


def test_doctor_fresh_deployment_needs_hooks_and_timers_and_exits_1(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    result = doctor_offline(capsys, state)
    assert result.exit_code == 1
    found = findings(result)
    assert found["hooks.memory-index-inject"]["fix"] == "memwarden install hooks"
    assert found["timers.installed"]["fix"] == "memwarden install auto"
    assert found["gateway.config"]["severity"] == "ok"
    assert "gateway.reachable" not in found


def test_doctor_hooks_installed_but_not_selected_gives_enable_commands(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    for name in HOOKS:
        folder = state.state_dir / "hooks" / name
        folder.mkdir(parents=True)
        (folder / "HOOK.md").write_text("---\n")
        (folder / "handler.js").write_text("\n")
    result = doctor_offline(capsys, state)
    fix = findings(result)["hooks.session-summary"]["fix"]
    assert fix == "memwarden install hooks"


def test_doctor_hook_left_from_an_older_memwarden_needs_reinstall(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    handler = state.state_dir / "hooks" / "memory-index-inject" / "handler.js"
    handler.write_text(handler.read_text().replace("manifest", "manifest_v1"))
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    assert result.exit_code == 1
    finding = findings(result)["hooks.memory-index-inject"]
    assert finding["severity"] == "action"
    assert "handler.js differs from this memwarden's (another version, or ed" in finding["message"]
    assert finding["fix"] == "memwarden install hooks"
    assert findings(result)["hooks.session-summary"]["severity"] == "ok"


def test_doctor_hook_starting_a_memwarden_that_is_gone_needs_reinstall(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    gone = tmp_path / "old-venv" / "bin" / "memwarden"
    settings = state.state_dir / "hooks" / "session-summary" / "memwarden.json"
    settings.write_text(f'{{"executable": "{gone}", "config": null, "stateDir": null}}\n')
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    finding = findings(result)["hooks.session-summary"]
    assert finding["severity"] == "action"
    assert f"memwarden.json starts {gone}, which is not an executable file" in finding["message"]
    assert finding["fix"] == "memwarden install hooks"
    settings.unlink()
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    message = findings(result)["hooks.session-summary"]["message"]
    assert "memwarden.json is missing or names no executable" in message


def test_doctor_bootstrap_hook_whose_receipts_health_cannot_read_needs_reinstall(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    settings = state.state_dir / "hooks" / "memory-index-inject" / "memwarden.json"
    elsewhere = tmp_path / "old-storage" / "deliveries"
    settings.write_text(f'{{"deliveries": "{elsewhere}"}}\n')
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    finding = findings(result)["hooks.memory-index-inject"]
    assert finding["severity"] == "action"
    receipts = isolated_env / ".local" / "state" / "memwarden" / "deliveries"
    assert f"sends the delivery receipts to {elsewhere}, not to {receipts}" in finding["message"]
    assert finding["fix"] == "memwarden install hooks"
    settings.unlink()
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    message = findings(result)["hooks.memory-index-inject"]["message"]
    assert "memwarden.json is missing or names no receipts folder" in message


def test_doctor_wrong_token_needs_action(capsys, tmp_path, isolated_env, gateway, monkeypatch):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    gateway.faults.wrong_token = True
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    assert result.exit_code == 1
    finding = findings(result)["gateway.reachable"]
    assert finding["severity"] == "action"
    assert "refused memwarden's token" in finding["message"]
    assert finding["fix"].startswith("MEMWARDEN_GATEWAY_TOKEN=<the gateway token>")
    assert gateway.token not in result.stdout


def test_doctor_gateway_down_needs_action(capsys, tmp_path, isolated_env, monkeypatch):
    with GatewaySimulator() as sim:
        state = healthy(tmp_path, isolated_env, sim, monkeypatch, capsys)
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    assert result.exit_code == 1
    finding = findings(result)["gateway.reachable"]
    assert (finding["severity"], finding["fix"]) == ("action", "openclaw gateway status")


def test_doctor_unparsable_gateway_config_needs_action_and_other_checks_still_run(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    state.config_path.write_text("{ gateway: { port: 18789, }\n")
    good = state.config_path.with_name("openclaw.json.last-good")
    good.write_text("{}\n")
    result = doctor_offline(capsys, state)
    assert result.exit_code == 1
    found = findings(result)
    assert found["gateway.config"]["severity"] == "action"
    assert found["gateway.config"]["fix"] == f"cp {good} {state.config_path}"
    assert "timers.installed" in found


def test_doctor_without_a_gateway_asks_for_the_state_dir_not_for_a_token(capsys, tmp_path):
    result = run_cli(capsys, "--state-dir", tmp_path / "typo", "doctor", "--json")

    found = findings(result)
    assert found["gateway.state_dir"]["severity"] == "action"
    assert found["gateway.token"]["severity"] == "info"
    assert found["gateway.token"]["fix"] is None
    assert "not checked: no gateway config was read" in found["gateway.token"]["message"]


def test_doctor_oversized_active_context_warns_with_cap_to_set(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    header = "# Active context\n\n> - session: `agent:main:main` (id `x`)\n\n"
    (memory / "ACTIVE_CONTEXT.md").write_text(header + "x" * 21_000)
    result = doctor_offline(capsys, state)
    finding = findings(result)["bootstrap.main.ACTIVE_CONTEXT.md"]
    assert finding["severity"] == "warning"
    assert finding["fix"] == "openclaw config set agents.defaults.bootstrapMaxChars 25000"


def test_doctor_active_context_at_the_cap_with_trailing_newlines_fits_as_index_says(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "0")
    state = make_file_era_state(tmp_path)
    memory = state.workspace / "memory"
    memory.mkdir()
    header = "# Active context\n\n> - session: `agent:main:main` (id `x`)\n\n"
    text = header + "x" * (20_000 - len(header)) + "\n" * 5  # the gateway trims the newlines
    (memory / "ACTIVE_CONTEXT.md").write_text(text)
    index = run_cli(capsys, "--state-dir", state.state_dir, "index", "--json")
    assert index.json()["workspaces"][0]["warnings"] == []

    result = doctor_offline(capsys, state)

    finding = findings(result)["bootstrap.main.ACTIVE_CONTEXT.md"]
    assert finding["severity"] == "ok"
    assert "(20,000 of 20,000 characters)" in finding["message"]


def _rotate_ran_ago(isolated_env, seconds: float) -> None:
    """Make the recorded rotate runs start and finish `seconds` ago."""
    db = StateDB(isolated_env / ".local" / "state" / "memwarden" / "state.db")
    db.connection.execute(
        "UPDATE runs SET started_at = ?, finished_at = ? WHERE job = 'rotate'",
        (time.time() - seconds, time.time() - seconds),
    )
    db.close()


def test_doctor_stale_job_warns_with_where_to_look(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    _rotate_ran_ago(isolated_env, 86400)
    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")
    finding = findings(result)["timers.rotate"]
    assert finding["severity"] == "action"  # 48 intervals: past health's critical multiple
    assert finding["fix"].startswith("tail -n 50 ") and finding["fix"].endswith("rotate.log")
    assert result.exit_code == 1


def test_doctor_stale_job_is_graded_with_the_health_multiples(
    capsys, tmp_path, isolated_env, gateway, monkeypatch
):
    state = healthy(tmp_path, isolated_env, gateway, monkeypatch, capsys)
    _rotate_ran_ago(isolated_env, 4 * 3600)
    monkeypatch.setenv("MEMWARDEN_HEALTH_STALE_WARNING_MULTIPLE", "10")
    monkeypatch.setenv("MEMWARDEN_HEALTH_STALE_CRITICAL_MULTIPLE", "20")

    result = run_cli(capsys, "--state-dir", state.state_dir, "doctor", "--json")

    assert findings(result)["timers.rotate"]["severity"] == "ok"  # 8 intervals, under 10


def test_doctor_token_only_in_shell_warns_that_timers_miss_it(capsys, tmp_path, monkeypatch):
    state = make_file_era_state(tmp_path)
    monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", "xoxb-secret-value")
    result = doctor_offline(capsys, state)
    finding = findings(result)["secrets.MEMWARDEN_SLACK_BOT_TOKEN"]
    assert finding["severity"] == "warning"
    assert "xoxb-secret-value" not in result.stdout


def test_doctor_disabled_check_that_names_no_check_needs_action(capsys, tmp_path, monkeypatch):
    state = make_file_era_state(tmp_path)
    monkeypatch.setenv("MEMWARDEN_HEALTH_DISABLED_CHECKS", '["gateway.lvie"]')
    result = doctor_offline(capsys, state)
    finding = findings(result)["health.disabled_checks"]
    assert finding["severity"] == "action"
    assert "'gateway.lvie' names no check (did you mean gateway.live?)" in finding["message"]


def test_doctor_metrics_file_node_exporter_ignores_for_its_name_warns(
    capsys, tmp_path, monkeypatch
):
    state = make_file_era_state(tmp_path)
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(tmp_path / "memwarden.txt"))
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE_MODE", "0644")
    result = doctor_offline(capsys, state)
    finding = findings(result)["metrics.file"]
    assert finding["severity"] == "warning"
    assert "reads only *.prom files: it ignores this one" in finding["message"]
    assert finding["fix"] == f'health.metrics_file = "{tmp_path / "memwarden.prom"}"'


def test_doctor_metrics_file_0640_names_the_group_it_takes(capsys, tmp_path, monkeypatch):
    state = make_file_era_state(tmp_path)
    folder = tmp_path / "textfile"
    folder.mkdir()
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(folder / "memwarden.prom"))
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE_MODE", "0640")
    result = doctor_offline(capsys, state)
    message = findings(result)["metrics.file"]["message"]
    assert f"group {grp.getgrgid(os.getegid()).gr_name} (your group: the folder has no setgid" in (
        message
    )
    folder.chmod(0o2775)
    result = doctor_offline(capsys, state)
    message = findings(result)["metrics.file"]["message"]
    assert f"group {grp.getgrgid(folder.stat().st_gid).gr_name} (the folder's)" in message


def test_doctor_problems_only_hides_what_is_fine(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    args = ("--state-dir", state.state_dir, "doctor", "--skip-gateway")
    full = run_cli(capsys, *args).stdout
    short = run_cli(capsys, *args, "--problems-only").stdout
    assert "[ok]" in full and "[ok]" not in short
    assert "[action]" in short


def test_doctor_unreadable_manifest_is_reported_and_other_checks_still_run(
    capsys, tmp_path, isolated_env
):
    state = make_file_era_state(tmp_path)
    manifest = isolated_env / ".local" / "state" / "memwarden" / "install" / "cron.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{not json")
    result = doctor_offline(capsys, state)
    found = findings(result)
    assert "could not check timers.installed" in found["timers.installed"]["message"]
    assert found["compaction.mode"]["severity"] == "ok"


def test_doctor_shell_gateway_token_is_fine_when_the_gateway_config_holds_one(
    capsys, tmp_path, monkeypatch
):
    state = make_file_era_state(tmp_path)
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "test-token-123")
    result = doctor_offline(capsys, state)
    assert "secrets.OPENCLAW_GATEWAY_TOKEN" not in findings(result)
    edit_config(state, lambda config: config["gateway"]["auth"].pop("token"))
    result = doctor_offline(capsys, state)
    assert findings(result)["secrets.OPENCLAW_GATEWAY_TOKEN"]["severity"] == "warning"


def test_doctor_one_workspace_replaced_by_a_file_leaves_the_other_permission_findings(
    capsys, tmp_path, isolated_env
):
    state_dir, workspaces = make_generated_fleet(tmp_path, ["main", "legacy"], 1_795_000_000_000)
    config = state_dir / "openclaw.json"
    write_json5_config(
        config,
        {
            "gateway": {"auth": {"token": "test-token-123"}},
            "agents": {"list": [{"id": n, "workspace": str(w)} for n, w in workspaces.items()]},
        },
    )
    config.chmod(0o644)
    (workspaces["main"] / "memory").mkdir(mode=0o755)
    (workspaces["main"] / "memory").chmod(0o755)
    storage = isolated_env / ".local" / "state" / "memwarden"
    storage.mkdir(parents=True, mode=0o755)
    storage.chmod(0o755)
    shutil.rmtree(workspaces["legacy"])
    workspaces["legacy"].write_text("hi\n")

    result = run_cli(capsys, "--state-dir", state_dir, "doctor", "--skip-gateway", "--json")

    found = findings(result)
    assert "permissions" not in found
    assert found["permissions.memory.main"]["severity"] == "warning"
    assert found["permissions.storage_dir"]["severity"] == "warning"
    assert found["permissions.gateway_config"]["severity"] == "action"
    legacy = found["permissions.memory.legacy"]
    assert legacy["severity"] == "warning"
    assert legacy["message"] == (
        f"could not check the mode of memory folder of legacy: {workspaces['legacy']}/memory: "
        "not a directory (a file is where a folder should be: move it away)"
    )
    assert "Errno" not in result.stdout

    text = run_cli(capsys, "--state-dir", state_dir, "doctor", "--skip-gateway").stdout
    assert "Errno" not in text and "permissions.memory.main" in text
