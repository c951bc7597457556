"""Fixtures of the memory-history tests: a SQLite-era deployment, a context, its agent."""

from __future__ import annotations

import os

import pytest

from memwarden.process.runtime import JobContext
from memwarden.settings.config import defaults
from support.deployments import make_sqlite_era_state


@pytest.fixture
def gateway(tmp_path):
    return make_sqlite_era_state(tmp_path)


@pytest.fixture
def context(gateway):
    context = JobContext(
        config=defaults(), env=dict(os.environ), state_dir_override=gateway.state_dir
    )
    yield context
    context.close()


@pytest.fixture
def agent(context):
    return context.deployment.default_agent()
