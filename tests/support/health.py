"""Run the health job in-process with a settable clock, against a state dir copy and local servers.

    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url})
    result = runner.run(at=T0)                      # one `memwarden health` run at T0
    result = runner.run(at=T0 + timedelta(minutes=31), dry_run=True)

Each run gets a fresh JobContext (as a timer would start a fresh process) and is recorded in the
state DB as the CLI records it. Checks that depend on the machine (the gateway process, disk
usage) are disabled unless the test asks for them.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from memwarden.jobs import health
from memwarden.process.runtime import JobContext, JobResult
from memwarden.settings import config as config_module

MACHINE_DEPENDENT_CHECKS = '["gateway.process", "disk:*"]'
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class HealthRunner:
    def __init__(self, state_dir: Path, env: dict[str, str] | None = None) -> None:
        self.state_dir = state_dir
        self.env = dict(os.environ)
        self.env.setdefault("MEMWARDEN_HEALTH_DISABLED_CHECKS", MACHINE_DEPENDENT_CHECKS)
        self.env.setdefault("MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS", "2")
        self.env.update(env or {})

    def context(self, at: datetime = T0) -> JobContext:
        settings = config_module.load(None, env=self.env)
        return JobContext(
            config=settings, env=self.env, state_dir_override=self.state_dir, clock=lambda: at
        )

    def run(self, at: datetime = T0, dry_run: bool = False, no_alert: bool = False) -> JobResult:
        context = self.context(at)
        options = argparse.Namespace(dry_run=dry_run, no_alert=no_alert)
        try:
            context.run_id = context.state.start_run("health", dry_run, now=at.timestamp())
            result = health.run(context, options)
            summary = result.data.get("summary", {})
            context.state.finish_run(context.run_id, result.exit_code, summary, now=at.timestamp())
            return result
        finally:
            context.close()
