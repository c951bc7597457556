"""`memwarden health` through the CLI: exit codes, --json, --dry-run, the metrics file, secrets."""

from __future__ import annotations

import os
import socket
import stat

import pytest

from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import MACHINE_DEPENDENT_CHECKS
from support.slack_server import SlackServer

TOKEN = "xoxb-never-print-me"


@pytest.fixture
def state(tmp_path):
    return make_sqlite_era_state(tmp_path)


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    monkeypatch.setenv("MEMWARDEN_HEALTH_DISABLED_CHECKS", MACHINE_DEPENDENT_CHECKS)
    monkeypatch.setenv("MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS", "2")


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_health_json_healthy_gateway_exits_0_with_every_check(capsys, monkeypatch, state, sim):
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    result = run_cli(capsys, "--state-dir", state.state_dir, "health", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.json()
    keys = {check["key"] for check in data["checks"]}
    assert {"gateway.live", "gateway.ready", "transcripts.volume", "memory.oversized"} <= keys
    assert {"cron.errors", "jobs.stale:checkpoint", "rotate.failing", "context.pressure"} <= keys
    assert not any(key.startswith("disk:") for key in keys), "disabled checks are not reported"
    assert data["summary"]["critical"] == 0


def test_health_gateway_down_prints_table_and_exits_1(capsys, monkeypatch, state):
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", closed_port_url())
    result = run_cli(capsys, "--state-dir", state.state_dir, "health")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["STATUS", "CHECK", "MESSAGE"]
    live = next(line for line in lines if " gateway.live " in line)
    assert live.startswith("critical") and "connection refused" in live
    assert "no Slack destination" in result.stdout


def test_health_quiet_prints_nothing_on_stdout(capsys, monkeypatch, state, sim):
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    result = run_cli(capsys, "-q", "--state-dir", state.state_dir, "health")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_health_writes_metrics_file_private_by_default(capsys, monkeypatch, state, sim, tmp_path):
    target = tmp_path / "textfile" / "memwarden.prom"
    target.parent.mkdir()
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(target))
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_NAME", "gw-1")
    result = run_cli(capsys, "--state-dir", state.state_dir, "health")
    assert result.exit_code == 0, result.stderr
    text = target.read_text()
    assert 'memwarden_health_check_status{gateway="gw-1",check="gateway.live"} 0' in text
    assert 'memwarden_session_context_ratio{gateway="gw-1",agent="main"' in text
    checkpoint = 'memwarden_job_last_success_timestamp_seconds{gateway="gw-1",memwarden_job="check'
    assert checkpoint not in text, "never ran: no sample"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["memwarden.prom"]

    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE_MODE", "0644")
    run_cli(capsys, "--state-dir", state.state_dir, "health")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


@pytest.mark.parametrize("dry_run", [False, True])
def test_health_metrics_file_in_missing_folder_is_a_problem_and_creates_nothing(
    capsys, monkeypatch, state, sim, tmp_path, dry_run
):
    target = tmp_path / "textfle" / "memwarden.prom"  # the operator's typo
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(target))
    arguments = ["--dry-run"] if dry_run else []
    result = run_cli(capsys, "-q", "--state-dir", state.state_dir, "health", *arguments)
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.endswith(
        f" ERROR memwarden: health.metrics_file: {target}: folder {target.parent} does not "
        "exist; create it first (node_exporter's textfile folder), or fix health.metrics_file"
    )
    assert not target.parent.exists()


def test_health_metrics_file_symlink_is_refused_and_left_alone(
    capsys, monkeypatch, state, sim, tmp_path
):
    folder = tmp_path / "textfile"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere.prom"
    elsewhere.write_text("# someone else's\n")
    target = folder / "memwarden.prom"
    target.symlink_to(elsewhere)
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(target))
    result = run_cli(capsys, "--state-dir", state.state_dir, "health")
    assert result.exit_code == 1
    assert (
        f"health.metrics_file: {target}: is a symlink; memwarden does not write through links"
        in result.stderr
    )
    assert "metrics: wrote" not in result.stdout
    assert target.is_symlink() and target.readlink() == elsewhere
    assert elsewhere.read_text() == "# someone else's\n"
    assert [p.name for p in folder.iterdir()] == ["memwarden.prom"]


def test_health_metrics_file_replaced_keeps_no_temp_file_and_clears_stale_ones(
    capsys, monkeypatch, state, sim, tmp_path
):
    folder = tmp_path / "textfile"
    folder.mkdir()
    target = folder / "memwarden.prom"
    stale = folder / ".memwarden.prom.abcd1234.tmp"  # a run killed mid-write, hours ago
    stale.write_text("partial")
    os.utime(stale, (0, 0))
    other = folder / "node.prom"
    other.write_text("node 1\n")
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(target))
    for _run in range(2):
        result = run_cli(capsys, "--state-dir", state.state_dir, "health")
        assert result.exit_code == 0, result.stderr
        assert f"metrics: wrote {target}" in result.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["memwarden.prom", "node.prom"]
    assert other.read_text() == "node 1\n"


def test_health_dry_run_writes_and_sends_nothing(capsys, monkeypatch, state, tmp_path):
    target = tmp_path / "memwarden.prom"
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", closed_port_url())
    monkeypatch.setenv("MEMWARDEN_HEALTH_METRICS_FILE", str(target))
    with SlackServer(token=TOKEN, channels={"C1"}) as slack:
        monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", TOKEN)
        monkeypatch.setenv("MEMWARDEN_SLACK_CHANNEL", "C1")
        monkeypatch.setenv("MEMWARDEN_SLACK_API_BASE_URL", slack.api_base_url)
        result = run_cli(capsys, "--state-dir", state.state_dir, "health", "--dry-run")
        assert slack.requests == []
    assert result.exit_code == 1
    assert f"metrics: would write {target}" in result.stdout
    assert "alerts: would send to Slack Web API (channel C1)" in result.stdout
    assert "would report new: gateway.live (critical)" in result.stdout
    assert not target.exists()


def test_health_slack_refusal_reported_without_token(capsys, monkeypatch, state):
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", closed_port_url())
    with SlackServer(token="xoxb-the-right-one", channels={"C1"}) as slack:
        monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", TOKEN)
        monkeypatch.setenv("MEMWARDEN_SLACK_CHANNEL", "C1")
        monkeypatch.setenv("MEMWARDEN_SLACK_API_BASE_URL", slack.api_base_url)
        result = run_cli(capsys, "-v", "--state-dir", state.state_dir, "health", "--json")
    assert result.exit_code == 1  # critical checks, not the failed send
    assert "invalid_auth" in result.stderr
    assert "kept for the next run" in result.stderr
    assert TOKEN not in result.stdout + result.stderr
    assert result.json()["alerts"]["undelivered"] == 1


def test_health_bot_token_without_channel_exits_2(capsys, monkeypatch, state):
    monkeypatch.setenv("MEMWARDEN_SLACK_BOT_TOKEN", TOKEN)
    result = run_cli(capsys, "--state-dir", state.state_dir, "health")
    assert result.exit_code == 2
    assert "slack.channel: required with a bot token" in result.stderr
    assert TOKEN not in result.stderr


def test_health_broken_gateway_config_still_probes_and_reports(capsys, monkeypatch, state, sim):
    state.config_path.write_text("{ this is not json5 ")
    monkeypatch.setenv("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", sim.http_url)
    result = run_cli(capsys, "--state-dir", state.state_dir, "health", "--json")
    assert result.exit_code == 1
    checks = {check["key"]: check for check in result.json()["checks"]}
    assert checks["gateway.live"]["status"] == "ok"
    assert checks["transcripts.volume"]["status"] == "warning"
    assert "not valid JSON5" in checks["transcripts.volume"]["message"]


def test_health_help_explains_no_alert(capsys):
    with pytest.raises(SystemExit):
        run_cli(capsys, "health", "--help")
    assert "--no-alert" in capsys.readouterr().out


def test_health_options_never_take_secrets_on_the_command_line():
    from memwarden.cli import build_parser

    parser, _ = build_parser(["health"])
    commands = next(a for a in parser._actions if a.dest == "command")
    options = [o for action in commands.choices["health"]._actions for o in action.option_strings]
    assert options, "the health parser has options"
    assert not [o for o in options if "token" in o or "webhook" in o or "secret" in o]


def test_health_never_shows_a_password_in_the_gateway_url(capsys, monkeypatch, state):
    monkeypatch.setenv("MEMWARDEN_GATEWAY_URL", "ws://ops:hunter2-secret@" + closed_port_url()[7:])
    monkeypatch.setenv("MEMWARDEN_HEALTH_RPC_CHECK", "true")
    result = run_cli(capsys, "--state-dir", state.state_dir, "health", "--json", "--no-alert")
    assert result.exit_code == 1
    assert "hunter2-secret" not in result.stdout + result.stderr
    messages = {check["key"]: check["message"] for check in result.json()["checks"]}
    assert "gateway not live: http://127.0.0.1:" in messages["gateway.live"]
