"""Settings that once passed `memwarden config check` and broke a job later are refused when the
config is loaded: `config check` and the job that would have broken both exit 2 with the same one
line naming the variable, the option and the fix."""

from __future__ import annotations

import os

import pytest

from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state

CASES = [
    # variable, value, the job that failed later, words of the one line
    ("MEMWARDEN_CHECKPOINT_STALENESS_HOURS", "nan", "checkpoint", ["expected a number"]),
    ("MEMWARDEN_GATEWAY_TIMEOUT_SECONDS", "NaN", "rotate", ["expected a number"]),
    (
        "MEMWARDEN_CHECKPOINT_REDACT_PATTERNS",
        '[{"name": "x", "pattern": "x*"}]',
        "checkpoint",
        ["rule 'x'", "matches an empty text"],
    ),
    ("MEMWARDEN_INSTALL_JOBS", '["checkpoint", "bogus"]', "install", ["'bogus'"]),
    ("MEMWARDEN_INSTALL_JOBS", "[]", "install", ["at least one"]),
    ("MEMWARDEN_ALERTMANAGER_LABELS", '{"alertname": "x"}', "health", ["'alertname'"]),
    ("MEMWARDEN_SLACK_WEBHOOK_URL", "notaurl", "health", ["https://"]),
    ("MEMWARDEN_ALERTMANAGER_URLS", '["ftp://x"]', "health", ["'ftp://x'"]),
    ("MEMWARDEN_SLACK_API_BASE_URL", "notaurl", "health", ["'notaurl'"]),
    ("MEMWARDEN_GATEWAY_URL", "ws://[bad", "health", ["'ws://[bad'", "Invalid IPv6 URL"]),
    (
        "MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE",
        "/nonexistent/t.j2",
        "checkpoint",
        ["no such file: /nonexistent/t.j2"],
    ),
]
JOB_ARGUMENTS = {"install": ["install", "auto", "--dry-run"], "health": ["health", "--no-alert"]}


@pytest.mark.parametrize(
    ("variable", "value", "job", "words"), CASES, ids=[f"{c[0]}={c[1]}" for c in CASES]
)
def test_config_check_and_the_job_exit_2_with_one_line(tmp_path, variable, value, job, words):
    state = make_sqlite_era_state(tmp_path)
    env = dict(os.environ) | {variable: value}
    for arguments in (["config", "check"], JOB_ARGUMENTS.get(job, [job])):
        result = run_subprocess("--state-dir", state.state_dir, *arguments, env=env)
        assert result.exit_code == 2, result.stderr
        (line,) = result.stderr.splitlines()
        assert "Traceback" not in result.stderr
        assert f"environment: {variable} (" in line
        assert all(word in line for word in words), line
        if variable == "MEMWARDEN_SLACK_WEBHOOK_URL":  # a secret
            assert value not in line


def test_a_missing_template_stops_only_the_jobs_that_render_and_health_sees_it(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    env = dict(os.environ, MEMWARDEN_INDEX_TEMPLATE=str(tmp_path / "gone.j2"))

    index = run_subprocess("--state-dir", state.state_dir, "index", env=env)
    status = run_subprocess("--state-dir", state.state_dir, "--json", "status", env=env)
    doctor = run_subprocess("--state-dir", state.state_dir, "doctor", "--skip-gateway", env=env)

    assert index.exit_code == 2 and "(index.template): no such file" in index.stderr
    assert status.exit_code == 0, status.stderr
    (job,) = [job for job in status.json()["jobs"] if job["job"] == "index"]
    assert job["outcome"] == "config error"  # recorded: health's job check sees it fail
    assert doctor.exit_code != 2, doctor.stderr
