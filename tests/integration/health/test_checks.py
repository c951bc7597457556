"""Each health check on real files, a real state DB and local servers (no mocks)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.health.checks import HealthInputs, run_checks
from memwarden.health.checks import context as context_check
from memwarden.health.checks import cron as cron_check
from memwarden.health.checks import deliveries as deliveries_check
from memwarden.health.checks import disk as disk_check
from memwarden.health.checks import gateway as gateway_check
from memwarden.health.checks import jobs as jobs_check
from memwarden.health.checks import memory_files as memory_check
from memwarden.health.checks import process as process_check
from memwarden.health.checks import volume as volume_check
from memwarden.health.deliveries import begin_receipts
from memwarden.health.model import Status
from memwarden.openclaw.cron import cron_store_path
from memwarden.openclaw.layout import discover
from memwarden.settings import config as config_module
from memwarden.store.state import StateDB
from support.deployments import make_file_era_state, make_sqlite_era_state, write_json5_config
from support.gateway_sim import GatewaySimulator
from support.health import T0

KB = 1024


def inputs_for(state_dir: Path, tmp_path: Path, now=T0, **settings: str) -> HealthInputs:
    env = {"HOME": str(tmp_path)} | {
        f"MEMWARDEN_{key.upper()}": value for key, value in settings.items()
    }
    loaded = config_module.load(None, env=env)
    return HealthInputs(
        config=loaded,
        deployment_loader=lambda: discover(state_dir, env={}),
        state=StateDB(tmp_path / "memwarden" / "state.db"),
        now=now,
        env={},
    )


def by_key(results):
    return {result.key: result for result in results}


# --- gateway probes ----------------------------------------------------------------------------


@pytest.fixture
def sim():
    with GatewaySimulator() as simulator:
        yield simulator


@pytest.fixture
def state(tmp_path):
    return make_sqlite_era_state(tmp_path)


def gateway_results(state, tmp_path, url: str, **settings: str):
    inputs = inputs_for(state.state_dir, tmp_path, health_gateway_http_url=url, **settings)
    return by_key(gateway_check.check_gateway(inputs))


def test_gateway_healthy_sim_is_live_and_ready(sim, state, tmp_path):
    results = gateway_results(state, tmp_path, sim.http_url)
    assert results["gateway.live"].status is Status.OK
    assert results["gateway.ready"].status is Status.OK


def test_gateway_answering_html_with_200_is_not_live(sim, state, tmp_path):
    sim.faults.http = "html"
    results = gateway_results(state, tmp_path, sim.http_url)
    live = results["gateway.live"]
    assert live.status is Status.CRITICAL
    assert "HTTP 200 with text/html, not the gateway's JSON" in live.message
    assert "gateway.ready" not in results  # not probed: one outage, one critical result
    assert live.masks == ("gateway.ready", "gateway.rpc")


def test_gateway_not_ready_names_what_fails(sim, state, tmp_path):
    sim.faults.http = "not_ready"
    sim.faults.ready_failing = ["channels", "plugins"]
    results = gateway_results(state, tmp_path, sim.http_url)
    assert results["gateway.live"].status is Status.OK
    ready = results["gateway.ready"]
    assert ready.status is Status.CRITICAL
    assert "HTTP 503, not ready (failing: channels, plugins)" in ready.message
    assert ready.details["failing"] == ["channels", "plugins"]


def test_gateway_dropping_connections_is_critical(sim, state, tmp_path):
    sim.faults.http = "drop"
    results = gateway_results(state, tmp_path, sim.http_url)
    assert results["gateway.live"].status is Status.CRITICAL


def test_gateway_hanging_is_critical_within_the_probe_timeout(state, tmp_path):
    with socket.socket() as listener:  # accepts connections (backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        results = gateway_results(state, tmp_path, url, health_probe_timeout_seconds="0.3")
        elapsed = time.monotonic() - started
    live = results["gateway.live"]
    assert live.status is Status.CRITICAL
    assert "no complete answer within 0.3 s (timed out)" in live.message
    assert "(readiness not probed)" in live.message
    assert "gateway.ready" not in results
    assert elapsed < 2.5, "the probe waits for its own timeout, not the 3 s default"


def test_gateway_url_from_gateway_config_port_and_token(sim, state, tmp_path):
    import json5

    config = json5.loads(state.config_path.read_text())
    config["gateway"] |= {"port": sim.port, "auth": {"mode": "token", "token": sim.token}}
    write_json5_config(state.config_path, config)
    inputs = inputs_for(state.state_dir, tmp_path, health_rpc_check="true")
    assert gateway_check.gateway_base_url(inputs) == sim.http_url
    results = by_key(gateway_check.check_gateway(inputs))
    assert results["gateway.live"].status is Status.OK
    assert results["gateway.rpc"].status is Status.OK, results["gateway.rpc"].message


def test_gateway_rpc_health_ok_with_token_and_refused_without(sim, state, tmp_path):
    good = gateway_results(
        state,
        tmp_path,
        sim.http_url,
        health_rpc_check="true",
        gateway_url=sim.url,
        gateway_token=sim.token,
    )
    assert good["gateway.rpc"].status is Status.OK
    bad = gateway_results(
        state,
        tmp_path,
        sim.http_url,
        health_rpc_check="true",
        gateway_url=sim.url,
        gateway_token="wrong-token",
    )
    assert bad["gateway.rpc"].status is Status.WARNING
    assert "wrong-token" not in bad["gateway.rpc"].message


# --- process -----------------------------------------------------------------------------------


def test_process_check_finds_a_process_titled_like_the_gateway(state, tmp_path):
    fake = subprocess.Popen(
        ["bash", "-c", "exec -a openclaw-gateway sleep 30"],
    )
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            found = [info for info in process_check.list_processes() if info.pid == fake.pid]
            if found and found[0].argv[0] == "openclaw-gateway":
                break
            time.sleep(0.02)
        inputs = inputs_for(state.state_dir, tmp_path, health_gateway_http_url="http://127.0.0.1:1")
        (result,) = process_check.check_process(inputs)
        assert result.status is Status.OK
        assert fake.pid in result.details["pids"]
    finally:
        fake.kill()
        fake.wait()


def test_process_check_skipped_for_remote_gateway(state, tmp_path):
    inputs = inputs_for(state.state_dir, tmp_path, health_gateway_http_url="http://10.1.2.3:18789")
    (result,) = process_check.check_process(inputs)
    assert result.status is Status.OK
    assert "not on this machine" in result.message


# --- disk --------------------------------------------------------------------------------------


def test_disk_groups_paths_by_filesystem_and_counts_missing_ones_on_their_parent(tmp_path):
    (tmp_path / "a").mkdir()
    usages = disk_check.measure_filesystems(
        [("state dir", tmp_path / "a"), ("workspace main", tmp_path / "not" / "yet")]
    )
    assert len(usages) == 1
    (usage,) = usages
    assert usage.holds == ("state dir", "workspace main")
    assert os.stat(usage.mount).st_dev == os.stat(tmp_path).st_dev
    assert 0 <= usage.percent_used <= 100


def test_disk_check_reports_one_result_per_filesystem(state, tmp_path):
    results = disk_check.check_disk(inputs_for(state.state_dir, tmp_path))
    assert len(results) == 1
    assert results[0].key.startswith("disk:/")
    assert "holds state dir, workspace main" in results[0].message


# --- transcript volume -------------------------------------------------------------------------


def test_volume_counts_sessions_folder_and_database_with_wal(tmp_path):
    state = make_file_era_state(tmp_path)
    (state.sessions_dir / "big.jsonl").write_bytes(b"x" * (2 * 1024 * 1024))
    database = state.agent_dir / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"d" * 1000)
    Path(f"{database}-wal").write_bytes(b"w" * 500)
    expected = sum(p.stat().st_size for p in state.sessions_dir.rglob("*") if p.is_file()) + 1500
    assert volume_check.agent_volume(state.sessions_dir, database) == expected
    inputs = inputs_for(state.state_dir, tmp_path, health_transcript_warning_mb="1")
    (result,) = volume_check.check_volume(inputs)
    assert result.status is Status.WARNING
    assert result.threshold == 1


# --- memory files ------------------------------------------------------------------------------


def test_memory_files_over_limit_listed_largest_first_archive_excluded(state, tmp_path):
    memory = state.workspace / "memory"
    (memory / "archive").mkdir(parents=True)
    (memory / "projects").mkdir()
    (memory / "2026-11-01.md").write_bytes(b"a" * 60 * KB)
    (memory / "projects" / "big.md").write_bytes(b"b" * 90 * KB)
    (memory / "small.md").write_bytes(b"c" * 10 * KB)
    (memory / "archive" / "huge.md").write_bytes(b"d" * 500 * KB)
    (state.workspace / "MEMORY.md").write_bytes(b"e" * 70 * KB)
    inputs = inputs_for(state.state_dir, tmp_path, health_memory_file_list="2")
    (result,) = memory_check.check_memory_files(inputs)
    assert result.status is Status.WARNING
    assert result.value == 3
    assert "main:memory/projects/big.md 90 KB, main:MEMORY.md 70 KB and 1 more" in result.message
    assert "archive" not in result.message


def test_memory_files_none_oversized_is_ok(state, tmp_path):
    (state.workspace / "memory").mkdir()
    (state.workspace / "memory" / "note.md").write_text("short")
    (result,) = memory_check.check_memory_files(inputs_for(state.state_dir, tmp_path))
    assert result.status is Status.OK


# --- cron --------------------------------------------------------------------------------------


def write_runs(state_dir: Path, job_id: str, lines: list[bytes | dict]) -> Path:
    runs = state_dir / "cron" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    path = runs / f"{job_id}.jsonl"
    path.write_bytes(
        b"".join(
            (line if isinstance(line, bytes) else orjson.dumps(line)) + b"\n" for line in lines
        )
    )
    os.utime(path, (T0.timestamp(), T0.timestamp()))  # written "now" on the test's clock
    return path


def run_line(minutes_ago: float, status: str, error: str | None = None, job: str = "job-1"):
    ts = int((T0 - timedelta(minutes=minutes_ago)).timestamp() * 1000)
    line = {"ts": ts, "jobId": job, "action": "finished", "status": status, "durationMs": 1200}
    if error:
        line["error"] = error
    return line


def test_cron_errors_in_window_reach_threshold_with_job_names(state, tmp_path):
    (state.state_dir / "cron").mkdir()
    (state.state_dir / "cron" / "jobs.json").write_text(
        "// cron store\n{version: 1, jobs: [{id: 'job-1', name: 'morning digest'},]}"
    )
    write_runs(
        state.state_dir,
        "job-1",
        [
            run_line(200, "error", "old failure"),
            run_line(50, "error", "model timeout"),
            b"{not json",
            {"ts": 1, "jobId": "job-1", "action": "started"},
            run_line(30, "ok"),
            run_line(20, "error", "model timeout"),
            run_line(5, "error", "rate limited\nby provider"),
        ],
    )
    (result,) = cron_check.check_cron(inputs_for(state.state_dir, tmp_path))
    assert result.status is Status.WARNING
    assert result.value == 3
    assert "morning digest x3" in result.message
    assert "last error: rate limited by provider" in result.message


def test_cron_below_threshold_and_old_files_are_ok(state, tmp_path):
    write_runs(state.state_dir, "job-2", [run_line(10, "error", "boom", job="job-2")])
    old = write_runs(state.state_dir, "job-3", [run_line(10, "error", "x", job="job-3")] * 5)
    stale = (T0 - timedelta(hours=3)).timestamp()
    os.utime(old, (stale, stale))
    (result,) = cron_check.check_cron(inputs_for(state.state_dir, tmp_path))
    assert result.status is Status.OK
    assert result.value == 1


def test_cron_store_path_follows_gateway_config(tmp_path):
    store = cron_store_path(tmp_path, {"cron": {"store": str(tmp_path / "c" / "j.json")}})
    assert store == tmp_path / "c" / "j.json"
    assert cron_store_path(tmp_path, {}) == tmp_path / "cron" / "jobs.json"


def test_cron_store_with_tilde_is_under_openclaw_home(state, tmp_path):
    openclaw_home = tmp_path / "openclaw-home"
    runs = openclaw_home / "crons" / "runs"
    runs.mkdir(parents=True)
    (runs / "job-1.jsonl").write_bytes(orjson.dumps(run_line(5, "error", "boom")) + b"\n")
    os.utime(runs / "job-1.jsonl", (T0.timestamp(), T0.timestamp()))
    config = {"cron": {"store": "~/crons/jobs.json"}}
    write_json5_config(state.config_path, config)
    env = {"OPENCLAW_HOME": str(openclaw_home), "HOME": str(tmp_path / "account")}
    inputs = inputs_for(state.state_dir, tmp_path, health_cron_error_threshold="1")
    inputs = HealthInputs(
        config=inputs.config,
        deployment_loader=lambda: discover(state.state_dir, env=env),
        state=inputs.state,
        now=T0,
        env=env,
    )

    (result,) = cron_check.check_cron(inputs)

    assert cron_store_path(tmp_path, config, env) == openclaw_home / "crons/jobs.json"
    assert result.status is Status.WARNING
    assert result.value == 1


# --- memwarden's own jobs ----------------------------------------------------------------------


def test_jobs_stale_checkpoint_is_critical_and_fresh_index_ok(state, tmp_path):
    inputs = inputs_for(state.state_dir, tmp_path)
    database = inputs.state
    start = (T0 - timedelta(hours=10)).timestamp()
    run = database.start_run("checkpoint", now=start)
    database.finish_run(run, 0, {}, now=start + 5)
    run = database.start_run("index", now=T0.timestamp() - 600)
    database.finish_run(run, 0, {}, now=T0.timestamp() - 590)
    results = by_key(jobs_check.check_jobs(inputs))
    assert results["jobs.stale:checkpoint"].status is Status.CRITICAL
    assert "last success 10.0 h ago" in results["jobs.stale:checkpoint"].message
    assert results["jobs.stale:index"].status is Status.OK
    rotate = results["jobs.stale:rotate"]  # never succeeded; memwarden first ran 10 h ago
    assert rotate.status is Status.CRITICAL
    assert "no success" in rotate.message


def test_jobs_consecutive_failed_rotate_runs_are_critical(state, tmp_path):
    inputs = inputs_for(state.state_dir, tmp_path)
    for minutes_ago in (90, 60, 30):
        stamp = (T0 - timedelta(minutes=minutes_ago)).timestamp()
        run = inputs.state.start_run("rotate", now=stamp)
        inputs.state.finish_run(run, 1, {"error": "gateway unreachable"}, now=stamp + 1)
    result = by_key(jobs_check.check_jobs(inputs))["rotate.failing"]
    assert result.status is Status.CRITICAL
    assert "rotate failed its last 3 runs (latest: gateway unreachable)" in result.message


def test_jobs_session_rotation_failing_repeatedly_from_lineage_warns(state, tmp_path):
    from memwarden.rotation.lineage import record_rotation
    from memwarden.rotation.policy import Decision
    from memwarden.rotation.report import Outcome

    inputs = inputs_for(state.state_dir, tmp_path)
    decision = Decision(
        "agent:main:main", "main", None, "rotate", "rotate", "tokens", True, None, None, None, 1
    )
    for minutes_ago in (50, 40, 30):
        record_rotation(
            inputs.state,
            decision,
            Outcome("failed", "session-changed"),
            ts=(T0 - timedelta(minutes=minutes_ago)).timestamp(),
        )
    result = by_key(jobs_check.check_jobs(inputs))["rotate.failing"]
    assert result.status is Status.WARNING
    assert "agent:main:main x3" in result.message
    assert "session-changed" in result.message


# --- context pressure --------------------------------------------------------------------------


def test_context_pressure_flags_conversations_not_automation_or_stale(tmp_path):
    state = make_file_era_state(tmp_path)
    store = orjson.loads(state.session_store.read_bytes())
    store["agent:main:main"] |= {"totalTokens": 190_000, "contextTokens": 200_000}
    store["agent:main:cron:nightly"] = store["agent:main:hot"] | {
        "totalTokens": 31_000,
        "sessionId": "44444444-2222-4333-8444-555555555555",
    }
    store["agent:main:hot"] |= {"totalTokens": 31_000, "totalTokensFresh": False}
    state.session_store.write_bytes(orjson.dumps(store))
    results = by_key(context_check.check_context(inputs_for(state.state_dir, tmp_path)))
    pressure = results["context.pressure"]
    assert pressure.status is Status.WARNING
    assert "1 conversation(s) above 90%" in pressure.message
    assert "agent:main:main 95% (190,000/200,000)" in pressure.message
    assert "cron" not in pressure.message and "hot" not in pressure.message
    sessions = {item["session"] for item in pressure.details["ratios"]}
    assert sessions == {"agent:main:main", "agent:main:fixture"}


def test_context_unreadable_store_is_its_own_warning(tmp_path):
    state = make_file_era_state(tmp_path)
    state.session_store.write_text("{broken")
    results = by_key(context_check.check_context(inputs_for(state.state_dir, tmp_path)))
    assert results["sessions.store:main"].status is Status.WARNING
    assert results["context.pressure"].status is Status.OK


def test_context_unreadable_store_is_named_by_its_own_agent(tmp_path):
    state = make_file_era_state(tmp_path)
    shutil.copytree(state.state_dir / "agents" / "main", state.state_dir / "agents" / "main-2")
    (state.state_dir / "agents" / "main-2" / "sessions" / "sessions.json").write_text("{broken")
    results = by_key(context_check.check_context(inputs_for(state.state_dir, tmp_path)))
    assert "main-2" in results["sessions.store:main-2"].message
    assert "sessions.store:main" not in results


# --- handoff deliveries ---------------------------------------------------------------------


def test_deliveries_judge_only_breaks_followed_by_a_request(state, tmp_path):
    inputs = inputs_for(state.state_dir, tmp_path)
    inputs.storage_dir = tmp_path / "memwarden"
    begin_receipts(inputs.storage_dir / deliveries_check.FOLDER, T0 - timedelta(days=1))
    reset_at = (T0 - timedelta(hours=1)).timestamp()
    inputs.state.connection.executemany(
        "INSERT INTO conversations VALUES (?, ?, '{}', ?, 'reset', ?, ?)",
        [
            ("main", "agent:main:main", reset_at, reset_at, None),  # no turn since its reset
            ("main", "agent:main:other", reset_at, reset_at, reset_at + 60),
        ],
    )

    results = by_key(deliveries_check.check_deliveries(inputs))

    assert list(results) == ["handoff.delivery:main:agent:main:other"]
    assert results["handoff.delivery:main:agent:main:other"].value == "no receipt"


# --- the runner --------------------------------------------------------------------------------


def test_run_checks_isolates_a_broken_check_and_filters_disabled(state, tmp_path):
    def broken(_inputs):
        raise RuntimeError("disk on fire")

    checks = {
        "broken.one": broken,
        "memory.oversized": memory_check.check_memory_files,
        "disk": disk_check.check_disk,
    }
    inputs = inputs_for(state.state_dir, tmp_path)
    results, problems = run_checks(inputs, checks, disabled=["disk:*"])
    keys = [result.key for result in results]
    assert keys == ["broken.one", "memory.oversized"]
    assert results[0].status is Status.WARNING
    assert "check failed: RuntimeError: disk on fire" in results[0].message
    assert problems == ["health check broken.one failed: RuntimeError: disk on fire"]
