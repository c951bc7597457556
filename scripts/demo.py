"""`make demo`: build the sample deployment under .demo/ and run memwarden's jobs against it.

Everything happens under .demo/ in the repository: the gateway state dir, the workspaces,
memwarden's own state and config. The user's real ~/.openclaw is never read or written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sample_deployment

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / ".demo"
MEMWARDEN = Path(sys.executable).parent / "memwarden"


def main() -> int:
    sample = sample_deployment.build(DEMO)
    env = demo_environment(sample)
    banner("The sample deployment (two agents, both storage eras)")
    print(f"gateway state dir: {sample.state_dir}")
    run(env, "sessions", "--all")
    return 0


def demo_environment(sample: sample_deployment.SampleDeployment) -> dict[str, str]:
    """Return an environment pointing memwarden and the gateway paths into .demo/ only."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_"))
    }
    env.update(
        OPENCLAW_STATE_DIR=str(sample.state_dir),
        XDG_STATE_HOME=str(DEMO / "memwarden-state"),
        XDG_CONFIG_HOME=str(DEMO / "config"),
    )
    return env


def run(env: dict[str, str], *arguments: str) -> int:
    print(f"\n$ memwarden {' '.join(arguments)}", flush=True)
    completed = subprocess.run([str(MEMWARDEN), *arguments], env=env, check=False)
    return completed.returncode


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
