"""The examples in the docs are what memwarden prints: each is rebuilt for real and compared line
by line (`…` in a doc stands for any text)."""

from __future__ import annotations

import re
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memwarden.process.runtime import JobContext
from memwarden.settings import config as config_module
from support.cli import run_cli
from support.deployments import make_sqlite_era_state
from support.gateway_sim import GatewaySimulator
from support.health import HealthRunner

DOCS = Path(__file__).resolve().parents[3] / "docs"


def example(doc: str, command: str) -> list[str]:
    """The lines a doc shows after `$ <command>` in a code block."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    block = re.search(rf"```\n\$ {re.escape(command)}\n(.*?)```", text, re.S)
    assert block, f"docs/{doc} has no example of `{command}`"
    return block[1].splitlines()


def matches(shown: list[str], printed: list[str]) -> bool:
    if len(shown) != len(printed):
        return False
    patterns = [".*?".join(map(re.escape, line.split("…"))) for line in shown]
    return all(re.fullmatch(p, line) for p, line in zip(patterns, printed, strict=True))


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_operations_status_example_is_what_status_prints(capsys, tmp_path, monkeypatch):
    now = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)
    state = make_sqlite_era_state(tmp_path)
    # the jobs that ran wrote, so they claimed the storage root for their gateway
    context = JobContext(
        config=config_module.load(None), state_dir_override=state.state_dir, claims_storage=True
    )
    for job, minutes_ago in (("checkpoint", 4), ("rotate", 12), ("index", 120)):
        stamp = (now - timedelta(minutes=minutes_ago)).timestamp()
        context.state.finish_run(context.state.start_run(job, now=stamp - 1), 0, {}, now=stamp)
    context.close()
    with GatewaySimulator() as sim:  # health succeeded, then the gateway went down 3 h ago
        HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": sim.http_url}).run(
            now - timedelta(minutes=185)
        )
    down = HealthRunner(
        state.state_dir, env={"MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": closed_port_url()}
    )
    down.run(now - timedelta(hours=3))
    down.run(now - timedelta(minutes=1))

    monkeypatch.setattr(JobContext, "now", lambda self: now)
    printed = run_cli(capsys, "--state-dir", state.state_dir, "status").stdout
    # the test's gateway and HOME stand for the doc's ~/.openclaw and /home/alice
    printed = printed.replace(str(state.state_dir), "/home/alice/.openclaw")
    printed = printed.replace(str(Path.home()), "/home/alice").splitlines()

    shown = example("operations.md", "memwarden status")
    assert matches(shown, printed), "\n".join(printed)
