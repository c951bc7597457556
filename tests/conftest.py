"""Shared fixtures: every test runs with a private HOME and no gateway variables of the machine."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ISOLATED_PREFIXES = ("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_", "STATE_DIRECTORY")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Point HOME and the XDG folders at a temp dir so no test touches the real ~/.openclaw."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(ISOLATED_PREFIXES) and not name.startswith("MEMWARDEN_E2E_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("TZ", "UTC")
    return home


# The captures in tests/fixtures (copied from ../shared/fixtures as they are) were taken on
# 2026-11-22 between 05:26 and 05:40 UTC, and support.transcripts starts at 05:00. A test whose
# outcome depends on how recent a session is pins memwarden's clock here, so it gives the same
# answer whenever it runs.
FIXTURE_CLOCK = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)


@pytest.fixture
def fixture_clock(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """Pin every job's clock (`JobContext.now`) to FIXTURE_CLOCK; return it."""
    from memwarden.process.runtime import JobContext

    monkeypatch.setattr(JobContext, "now", lambda self: FIXTURE_CLOCK)
    return FIXTURE_CLOCK
