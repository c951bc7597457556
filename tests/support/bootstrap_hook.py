"""Run the real memory-index-inject hook (Node) on an `agent:bootstrap` event, as the gateway
does: from a copy installed with a `memwarden.json` naming memwarden's receipts folder, or from
the source folder (then no receipt)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "hooks" / "memory-index-inject"
NODE = shutil.which("node")

INJECT = """
const [handlerPath, workspace, sessionKey, filesJson, cfgJson] = process.argv.slice(1);
const { default: handler } = await import(handlerPath);
const event = {
  type: "agent", action: "bootstrap", sessionKey, timestamp: new Date(),
  context: { workspaceDir: workspace, sessionKey, agentId: "main",
             bootstrapFiles: JSON.parse(filesJson), cfg: JSON.parse(cfgJson) },
  messages: [],
};
await handler(event);
process.stdout.write(JSON.stringify(event.context.bootstrapFiles));
"""


def install_hook(folder: Path, deliveries: Path) -> Path:
    """Copy the hook into `folder` with a memwarden.json naming `deliveries`; return its handler."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("HOOK.md", "handler.js"):
        shutil.copyfile(SOURCE / name, folder / name)
    settings = {"executable": "/usr/bin/true", "deliveries": str(deliveries)}
    (folder / "memwarden.json").write_text(json.dumps(settings))
    return folder / "handler.js"


def bootstrap_files(
    workspace: Path,
    session_key: str,
    handler: Path | None = None,
    *,
    files: list[dict] | None = None,
    cfg: dict | None = None,
) -> list[dict]:
    """Run the hook on an agent:bootstrap event of `session_key` whose bootstrap files are
    `files` (default: a short AGENTS.md); return the bootstrap files after it."""
    if files is None:
        files = [
            {
                "name": "AGENTS.md",
                "path": f"{workspace}/AGENTS.md",
                "content": "agents",
                "missing": False,
            }
        ]
    completed = subprocess.run(
        [
            NODE or "node",
            "--input-type=module",
            "-e",
            INJECT,
            str(handler or SOURCE / "handler.js"),
            str(workspace),
            session_key,
            json.dumps(files),
            json.dumps(cfg or {}),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)
