"""`make demo`: build a sample deployment under .demo/ and run every memwarden job once on it:
checkpoint, index, rotate, health and maintain, then history, events and status. After the
rotation, the gateway hooks are installed in the sample and the real bootstrap hook (Node) shows
what the rotated conversation's next prompt receives.

The sample has two agents (the SQLite era and the file era, from the bundled real captures) and
a local gateway simulator stands in for the OpenClaw gateway, so no gateway needs to be installed.
Everything happens under .demo/: the gateway state dir, the workspaces, memwarden's own state,
config and HOME. The user's real ~/.openclaw is never read or written.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))

import sample_deployment  # noqa: E402 - beside this script

from support.bootstrap_hook import NODE, bootstrap_files  # noqa: E402 - runs the real hook
from support.gateway_sim import GatewaySimulator  # noqa: E402 - the tests' gateway simulator

DEMO = Path(os.environ.get("DEMO_DIR") or REPO / ".demo").resolve()
MEMWARDEN = Path(sys.executable).parent / "memwarden"


def main() -> int:
    sample = sample_deployment.build(DEMO)
    with GatewaySimulator.from_state_dir(sample.state_dir, token=sample.token) as gateway:
        env = demo_environment(sample, gateway.url)
        tour(sample, env, gateway)
    explore = write_explore_script(sample)
    print(f"\nEverything above lives in {DEMO} (remove it with `make clean`).")
    print(
        "To go on exploring the demo without touching your own memwarden state, load its\n"
        f"environment into your shell: `. {os.path.relpath(explore)}`"
        "\nthen e.g. `memwarden history list` (the simulated gateway has stopped: rotate and\n"
        "the gateway checks will say so)."
    )
    return 0


def write_explore_script(sample: sample_deployment.SampleDeployment) -> Path:
    """Write .demo/env.sh: the variables that point memwarden at the demo, and its PATH."""
    script = DEMO / "env.sh"
    lines = [
        "# Source this file to run memwarden against the demo (make demo wrote it).",
        f"export OPENCLAW_STATE_DIR={shlex.quote(str(sample.state_dir))}",
        f"export XDG_STATE_HOME={shlex.quote(str(DEMO / 'memwarden-state'))}",
        f"export XDG_CONFIG_HOME={shlex.quote(str(DEMO / 'config'))}",
        "export MEMWARDEN_HEALTH_PROCESS_CHECK=false",
        f'export PATH={shlex.quote(str(MEMWARDEN.parent))}:"$PATH"',
    ]
    script.write_text("\n".join(lines) + "\n")
    return script


def tour(sample: sample_deployment.SampleDeployment, env: dict[str, str], gateway) -> None:
    main_memory = sample.workspaces["main"] / "memory"
    banner("1. What memwarden discovers: two agents, both storage eras")
    run(env, "sessions", "--all")

    banner("2. Checkpoint (layer 2): a handoff per conversation and the daily log, no LLM")
    print(
        "(the captures are older than checkpoint.staleness_hours (4 h): of their conversations "
        "only the main sessions, always checkpointed, are written now)"
    )
    run(env, "checkpoint")
    show(main_memory / "ACTIVE_CONTEXT.md")
    show(newest_daily_log(main_memory))

    banner("3. Index (layer 3): a compact INDEX.md; the hook's manifest of who gets what")
    run(env, "index")
    show(main_memory / "INDEX.md", lines=28)
    show(main_memory / ".memwarden-bootstrap.json")

    banner("4. Rotate (layer 1): reset sessions over the threshold, after a checkpoint")
    print("(the sample's sessions are small, so the demo lowers the threshold to 1,000 tokens)")
    run(env, "rotate", "--threshold", "1000")
    resets = [call["key"] for call in gateway.calls("sessions.reset")]
    print(f"the gateway received sessions.reset for: {', '.join(resets) or 'nothing'}")
    print("each rotated conversation has its own handoff; main's ACTIVE_CONTEXT.md is untouched:")
    show(main_memory / "sessions" / "main.agentrpc.md")
    next_prompt(sample, env, "agent:main:agentrpc")

    banner("5. Health (layer 4): the checks an operator is alerted on")
    print("(no gateway process runs here: the process check is off for the demo)")
    run(env, "health", "--no-alert")

    banner("6. History: every change to memory/ is a snapshot you can diff and rewind")
    run(env, "history", "list")

    banner("7. Maintain (daily): retention, log rotation, a backup of the gateway config")
    run(env, "maintain")

    banner("8. The timeline, and the status of each job")
    run(env, "events", "--since", "1h")
    run(env, "status")


def next_prompt(sample: sample_deployment.SampleDeployment, env: dict[str, str], key: str) -> None:
    """Install the gateway hooks in the sample, then run the real bootstrap hook (Node) for the
    rotated conversation's next turn, as the gateway would, and show what it added."""
    banner("4b. The next prompt: the bootstrap hook injects the conversation's own handoff")
    if NODE is None:
        print("(node is not on PATH: the hook is JavaScript, this step is skipped)")
        return
    run(env, "install", "hooks")
    handler = sample.state_dir / "hooks" / "memory-index-inject" / "handler.js"
    added = bootstrap_files(sample.workspaces["main"], key, handler)[1:]
    print(f"\nthe gateway's bootstrap of {key} now carries, after its own files:")
    for file in added:
        first = next((line for line in file["content"].splitlines() if line.strip()), "")
        print(f"  {file['name']}: {first[:70]}")
    print("(the hook left a receipt of that delivery: `memwarden status` shows it below)")


def demo_environment(sample: sample_deployment.SampleDeployment, url: str) -> dict[str, str]:
    """Return an environment that points memwarden and every gateway path into .demo/ only."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_"))
    }
    env.update(
        HOME=str(DEMO / "home"),
        OPENCLAW_STATE_DIR=str(sample.state_dir),
        XDG_STATE_HOME=str(DEMO / "memwarden-state"),
        XDG_CONFIG_HOME=str(DEMO / "config"),
        MEMWARDEN_GATEWAY_URL=url,
        MEMWARDEN_HEALTH_PROCESS_CHECK="false",
    )
    return env


def run(env: dict[str, str], *arguments: str) -> int:
    print(f"\n$ memwarden {' '.join(arguments)}", flush=True)
    completed = subprocess.run([str(MEMWARDEN), *arguments], env=env, check=False)
    if completed.returncode not in (0, 1):
        print(f"(exit {completed.returncode})")
    return completed.returncode


def show(path: Path, lines: int | None = None) -> None:
    print(f"\n--- {path.relative_to(DEMO.parent)} ---")
    if not path.exists():
        print("(not written)")
        return
    text = path.read_text(encoding="utf-8").splitlines()
    print("\n".join(text[:lines] if lines else text))
    if lines and len(text) > lines:
        print(f"... ({len(text) - lines} more lines)")


def newest_daily_log(memory: Path) -> Path:
    """Return the daily log memwarden appended to last (today's, in the configured zone)."""
    logs = sorted(
        memory.glob("20[0-9][0-9]-[0-9][0-9]-[0-9][0-9].md"), key=lambda p: p.stat().st_mtime
    )
    return logs[-1] if logs else memory / "(no daily log)"


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 76 - len(title)), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
