"""The metrics textfile memwarden really writes, after real runs of its jobs, for the tests of what
Prometheus and Grafana read (promtool, the shipped rules and dashboards).

`build_textfile(root)` copies the 2026.9.6 capture, serves it through the gateway simulator,
and runs as child processes, the way timers run them: checkpoint, rotate (one conversation over
the threshold, so it is rotated; one mid-turn, so it is postponed), index, then health with a
metrics file, a memory file over the size limit (and over the bootstrap cap), AGENTS.md grown
since the other jobs' snapshots (made two days older, so it has a growth rate; a total cap
of 40,000 that the set reaches as it grows), and Slack and
Alertmanager both unreachable (so both have undelivered alerts). Every metric family then has
samples.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import json5

from support.bootstrap_hook import bootstrap_files, install_hook
from support.cli import run_subprocess
from support.deployments import make_sqlite_era_state, write_json5_config
from support.gateway_sim import GatewaySimulator
from support.prometheus import free_port

GATEWAY = "gw-test:18789"
OVER = {"totalTokens": 160_000, "totalTokensFresh": True, "contextTokens": 200_000}
ISOLATED_PREFIXES = ("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_", "STATE_DIRECTORY")


@dataclass(frozen=True)
class Textfile:
    path: Path
    text: str
    runs: dict[str, int]  # exit code of each job run

    @property
    def metric_names(self) -> set[str]:
        """The metric names with at least one sample."""
        return {
            line.split("{", 1)[0].split(" ", 1)[0]
            for line in self.text.splitlines()
            if line and not line.startswith("#")
        }


def build_textfile(root: Path) -> Textfile:
    """Run the jobs against a copy of the capture under `root`; return the textfile health
    wrote."""
    state = make_sqlite_era_state(root)
    # A total cap the set reaches as AGENTS.md grows (each file counts up to its own cap).
    config = json5.loads(state.config_path.read_text())
    config.setdefault("agents", {}).setdefault("defaults", {})["bootstrapTotalMaxChars"] = 40_000
    write_json5_config(state.config_path, config)
    (state.workspace / "MEMORY.md").write_text("# Memory\n\n" + "- a fact\n" * 8000)
    (state.workspace / "AGENTS.md").write_text("# Agents\n\nBe brief.\n")
    metrics = root / "textfile" / "memwarden.prom"
    metrics.parent.mkdir()
    env = {
        name: value for name, value in os.environ.items() if not name.startswith(ISOLATED_PREFIXES)
    }
    env.update(
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "home" / ".local" / "state"),
        XDG_CONFIG_HOME=str(root / "home" / ".config"),
        TZ="UTC",
        MEMWARDEN_HEALTH_GATEWAY_NAME=GATEWAY,
        MEMWARDEN_HEALTH_METRICS_FILE=str(metrics),
        MEMWARDEN_HEALTH_DISABLED_CHECKS='["gateway.process", "disk:*"]',
        MEMWARDEN_SLACK_WEBHOOK_URL=f"http://127.0.0.1:{free_port()}/services/T/B/x",
        MEMWARDEN_SLACK_TIMEOUT_SECONDS="1",
        MEMWARDEN_ALERTMANAGER_URLS=json.dumps([f"http://127.0.0.1:{free_port()}"]),
        MEMWARDEN_ALERTMANAGER_TIMEOUT_SECONDS="1",
    )
    runs = {}
    with GatewaySimulator.from_state_dir(state.state_dir) as sim:
        env.update(
            MEMWARDEN_GATEWAY_URL=sim.url,
            MEMWARDEN_GATEWAY_TOKEN=sim.token,
            MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=sim.http_url,
        )
        keys = [row["key"] for row in sim.rows]
        main = next(key for key in keys if key.endswith(":main"))
        sim.set_row(main, **OVER)
        for job in ("checkpoint", "rotate", "index"):
            runs[job] = _run(state.state_dir, env, job)
        busy = sim.set_row("agent:main:busy", **OVER, hasActiveRun=True)
        assert busy["key"] == "agent:main:busy"
        runs["rotate-postponed"] = _run(state.state_dir, env, "rotate")
        _age_history(root / "home", days=2)
        # The bootstrap hook's receipt of main's next turn (the handoff delivery metrics).
        (database,) = (root / "home").rglob("state.db")
        handler = install_hook(
            root / "hooks" / "memory-index-inject", database.parent / "deliveries"
        )
        bootstrap_files(state.workspace, main, handler)
        (state.workspace / "AGENTS.md").write_text("# Agents\n\nBe brief.\n" + "Be kind.\n" * 50)
        runs["health"] = _run(state.state_dir, env, "health")
    return Textfile(metrics, metrics.read_text(encoding="utf-8"), runs)


def _age_history(home: Path, days: int) -> None:
    """Make the snapshots taken so far `days` older, so the bootstrap files have a growth rate."""
    (database,) = home.rglob("state.db")
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE history_snapshots SET created_at = created_at - ?", (days * 86_400,)
        )
    connection.close()


def _run(state_dir: Path, env: dict[str, str], job: str) -> int:
    result = run_subprocess("-q", "--state-dir", state_dir, job, env=env, timeout=120)
    return result.exit_code
