"""`memwarden status`: last run of each job, open alerts, pending sends (read-only)."""

from __future__ import annotations

import time

import pytest

from memwarden.process.runtime import JobContext
from memwarden.settings import config as config_module
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import HealthRunner
from support.slack_server import SlackServer, server_error


def record_run(job: str, exit_code: int, minutes_ago: float, summary: dict | None = None) -> None:
    context = JobContext(config=config_module.load(None))
    try:
        stamp = time.time() - minutes_ago * 60
        run_id = context.state.start_run(job, now=stamp)
        context.state.finish_run(run_id, exit_code, summary or {}, now=stamp + 1)
    finally:
        context.close()


def test_status_on_a_fresh_install_says_nothing_ran(capsys):
    result = run_cli(capsys, "status")
    assert result.exit_code == 0
    assert "  checkpoint  never run" in result.stdout
    assert "open alerts: none" in result.stdout
    assert "pending sends: none" in result.stdout


def test_status_shows_outcome_age_and_last_success_of_each_job(capsys):
    record_run("checkpoint", 0, 200)
    record_run("checkpoint", 1, 12, {"error": "workspace not writable"})
    record_run("index", 0, 30)
    result = run_cli(capsys, "status", "--json")
    assert result.exit_code == 0
    jobs = {job["job"]: job for job in result.json()["jobs"]}
    assert jobs["checkpoint"]["outcome"] == "failed"
    assert jobs["checkpoint"]["error"] == "workspace not writable"
    assert 11 * 60 <= jobs["checkpoint"]["age_seconds"] <= 13 * 60
    assert jobs["index"]["outcome"] == "ok"
    assert jobs["rotate"]["outcome"] == "never run"
    text = run_cli(capsys, "status").stdout
    line = next(line for line in text.splitlines() if line.startswith("  checkpoint"))
    assert "failed" in line and "12 min ago" in line
    assert "last success 3.3 h ago: workspace not writable" in line


def test_one_sessions_checkpoint_never_passes_for_the_scheduled_job(capsys, tmp_path, monkeypatch):
    """The session-summary hook's `checkpoint --session` before every reset or compaction is
    no run of the scheduled job: a checkpoint timer that fails stays failed in status."""
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(make_sqlite_era_state(tmp_path).state_dir))
    record_run("checkpoint", 1, 12, {"error": "workspace not writable"})

    assert run_cli(capsys, "checkpoint", "--session", "agent:main:main").exit_code == 0
    assert run_cli(capsys, "checkpoint", "--session", "agent:main:nothing").exit_code == 2

    jobs = {job["job"]: job for job in run_cli(capsys, "status", "--json").json()["jobs"]}
    assert jobs["checkpoint"]["outcome"] == "failed"
    assert jobs["checkpoint"]["last_success_at"] is None
    context = JobContext(config=config_module.load(None))
    try:
        runs = context.state.last_runs("checkpoint --session", 2)
    finally:
        context.close()
    assert [run.exit_code for run in runs] == [2, 0]


def test_quiet_status_says_only_what_needs_a_look_one_line_each(capsys):
    record_run("checkpoint", 0, 30)
    quiet = run_cli(capsys, "-q", "status")
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")

    record_run("index", 2, 5, {"error": "config.toml: index.max_chars: expected an integer"})
    record_run("rotate", 75, 3)  # skipped, another run held the lock: nothing to look at
    quiet = run_cli(capsys, "-q", "status")

    assert quiet.exit_code == 0 and quiet.stdout == ""
    (line,) = quiet.stderr.splitlines()
    assert "status: index       config error" in line
    assert line.endswith("never succeeded: config.toml: index.max_chars: expected an integer")


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


def test_status_lists_open_alerts_and_pending_sends(capsys, tmp_path, sim):
    state = make_sqlite_era_state(tmp_path)
    with SlackServer(token="xoxb-t", channels={"C1"}) as slack:
        slack.default = server_error(503)
        runner = HealthRunner(
            state.state_dir,
            env={
                "MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url,
                "MEMWARDEN_SLACK_BOT_TOKEN": "xoxb-t",
                "MEMWARDEN_SLACK_CHANNEL": "C1",
                "MEMWARDEN_SLACK_API_BASE_URL": slack.api_base_url,
            },
        )
        sim.faults.http = "error"
        runner.run()
    result = run_cli(capsys, "status")
    assert result.exit_code == 0
    assert "open alerts:" in result.stdout
    assert "critical gateway.live: gateway not live" in result.stdout
    assert "pending sends:" in result.stdout
    assert "1 new (critical)" in result.stdout
    assert "1 attempt(s); last error: Slack Web API answered HTTP 503" in result.stdout
    quiet = run_cli(capsys, "-q", "status").stderr.splitlines()
    assert len(quiet) == 3
    assert "status: health      failed" in quiet[0]  # the health run that found it
    assert "status: open alert critical gateway.live: gateway not live" in quiet[1]
    assert "status: pending send #" in quiet[2] and "Slack Web API answered HTTP 503" in quiet[2]
    data = run_cli(capsys, "status", "--json").json()
    assert {alert["key"] for alert in data["open_alerts"]} == {"gateway.live"}
    assert data["pending_sends"][0]["keys"] == ["gateway.live"]
