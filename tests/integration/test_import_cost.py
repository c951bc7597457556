"""Jobs that send nothing over HTTP never import httpx (or slack-sdk): they start faster."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support.deployments import make_sqlite_era_state

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
