"""Jobs that send nothing over HTTP never import httpx (or slack-sdk): they start faster."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.deployments import make_file_era_state, make_sqlite_era_state

PROGRAM = """
import sys
from memwarden.cli import main
code = main(sys.argv[1:])
loaded = sorted(name for name in ("httpx", "slack_sdk", "websockets") if name in sys.modules)
print("LOADED", ",".join(loaded))
"""


@pytest.mark.parametrize(
    "arguments",
    [
        ("checkpoint",),
        ("checkpoint", "--dry-run"),
        ("index",),
        ("sessions",),
        ("status",),
        ("maintain", "--dry-run"),
        ("history", "list"),
        ("doctor", "--skip-gateway"),
    ],
    ids=" ".join,
)
def test_jobs_that_send_nothing_do_not_import_the_network_clients(tmp_path, arguments):
    state = make_sqlite_era_state(tmp_path)
    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM, "-q", "--state-dir", str(state.state_dir), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    loaded = [line for line in completed.stdout.splitlines() if line.startswith("LOADED")]
    assert loaded == ["LOADED "], completed.stdout + completed.stderr


MODULES = """
import sys
from memwarden.cli import main
code = main(sys.argv[2:])
names = sys.argv[1].split(",")
print("LOADED", code, ",".join(name for name in names if name in sys.modules))
"""
# What a checkpoint must not load unless its run uses it.
RUN_MODULES = ("jinja2", "memwarden.indexing.catalog", "memwarden.indexing.refresh")
LIBRARIES = ("backports.zstd", "compression.zstd", "tomllib", "pickle", "gzip")


def loaded_by_checkpoint(state_dir, names) -> list[str]:
    """Run a checkpoint of `state_dir` in a process of its own; require exit 0 and return which
    of `names` it loaded."""
    program = [sys.executable, "-c", MODULES, ",".join(names)]
    completed = subprocess.run(
        [*program, "-q", "--state-dir", str(state_dir), "checkpoint"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = next(line for line in completed.stdout.splitlines() if line.startswith("LOADED"))
    code, _, loaded = line.removeprefix("LOADED ").partition(" ")
    assert code == "0", completed.stdout + completed.stderr
    return [name for name in loaded.split(",") if name]


def test_checkpoint_imports_only_what_its_run_uses(tmp_path, monkeypatch):
    # The capture's memory folder is far under index.threshold_kb: the bootstrap manifest is
    # refreshed, INDEX.md is not built, so the catalog is never imported; the handoff and the
    # daily log are the bundled templates, written without jinja2.
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    state = make_sqlite_era_state(tmp_path)

    first = loaded_by_checkpoint(state.state_dir, RUN_MODULES)
    again = loaded_by_checkpoint(state.state_dir, RUN_MODULES)

    assert first == ["memwarden.indexing.refresh"]
    # Nothing new: no manifest refreshed.
    assert again == []


def test_a_store_that_changed_with_nothing_new_does_not_load_the_pipeline(tmp_path, monkeypatch):
    # The session store is written again (a cron run's bookkeeping) but no transcript has a new
    # line: the fast skip cannot settle the agent, each session is settled by its position.
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")
    state = make_file_era_state(tmp_path)
    pipeline = ["memwarden.checkpoint.run.pipeline"]
    assert loaded_by_checkpoint(state.state_dir, pipeline) == pipeline
    store = next(state.state_dir.glob("agents/*/sessions/sessions.json"))
    later = store.stat().st_mtime + 60
    os.utime(store, (later, later))

    assert loaded_by_checkpoint(state.state_dir, pipeline) == []


def test_a_file_era_checkpoint_without_config_loads_no_library_it_does_not_use(tmp_path):
    # No zstd (file-era transcripts are plain), no TOML parser (no config file), no pickle (one
    # agent: no worker process), no gzip (no compressed reset archive).
    state = make_file_era_state(tmp_path)
    assert loaded_by_checkpoint(state.state_dir, LIBRARIES) == []


def test_health_without_the_rpc_check_does_not_load_websockets(tmp_path):
    # The HTTP probes need the gateway's address only (openclaw.endpoint), not its client.
    state = make_sqlite_era_state(tmp_path)
    program = [sys.executable, "-c", MODULES, "websockets,httpx"]
    completed = subprocess.run(
        [*program, "-q", "--state-dir", str(state.state_dir), "health", "--dry-run", "--no-alert"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=dict(os.environ, MEMWARDEN_HEALTH_PROCESS_CHECK="false"),
    )
    line = next(line for line in completed.stdout.splitlines() if line.startswith("LOADED"))
    assert line.split(" ")[2] == "httpx", completed.stdout + completed.stderr
