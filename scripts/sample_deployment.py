"""Build a sample OpenClaw deployment from the bundled real captures (tests/fixtures).

The sample has two agents on one gateway state dir: `main` in the SQLite era (the 2026.9.6
capture's agent database) and `legacy` in the file era (the 2026.7.35 capture's sessions.json and
transcripts, its keys renamed to the `legacy` agent), each with its own workspace and a memory
folder large enough for the index job. Nothing outside the given root is touched.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TOKEN = "demo-token-not-a-secret"  # noqa: S105 - the sample gateway's token, local only

CONFIG_TEMPLATE = """\
// Sample OpenClaw gateway config written by memwarden's demo (JSON5, like the real one).
{{
  gateway: {{ mode: "local", port: {port}, bind: "loopback",
             auth: {{ mode: "token", token: "{token}" }} }},
  agents: {{
    defaults: {{ compaction: {{ mode: "safeguard" }}, bootstrapMaxChars: 20000, }},
    list: [
      {{ id: "main", default: true, workspace: "{main_workspace}" }},
      {{ id: "legacy", workspace: "{legacy_workspace}" }},  // file-era agent
    ],
  }},
}}
"""

MEMORY_FILES = {
    "MEMORY.md": "# Long-term memory\n\n[FACT] The operator prefers concise answers.\n"
    "[PREFERENCE] Dates in ISO 8601.\n[DECISION] Deploys happen on Tuesdays.\n",
    "plans/migration-plan.md": "# Plan: move the blog to the new host\n\n- [ ] export posts\n"
    "- [x] pick host\n[TODO] renew the TLS certificate\n[TRADEOFF] static site vs CMS\n",
    "research/vector-stores.md": "# Research: vector stores\n\n[FACT] sqlite-vec fits our "
    "size.\n[GOTCHA] embeddings must be rebuilt when the model changes.\n",
    "procedures/backup.md": "# Procedure: backups\n\n[PATTERN] snapshot, verify, prune.\n"
    "[SOLUTION] restic with a daily timer.\n",
}


@dataclass(frozen=True)
class SampleDeployment:
    root: Path
    state_dir: Path
    config_path: Path
    workspaces: dict[str, Path]
    token: str


def build(root: Path, gateway_port: int = 18789) -> SampleDeployment:
    """Create (or recreate) the sample deployment under `root`; return where things are."""
    if root.exists():
        shutil.rmtree(root)
    state_dir = root / "openclaw"
    workspaces = {"main": root / "workspaces" / "main", "legacy": root / "workspaces" / "legacy"}
    _copy_sqlite_agent(state_dir)
    _copy_file_agent(state_dir)
    for workspace in workspaces.values():
        _write_memory(workspace / "memory")
    config_path = state_dir / "openclaw.json"
    config_path.write_text(
        CONFIG_TEMPLATE.format(
            port=gateway_port,
            token=TOKEN,
            main_workspace=workspaces["main"],
            legacy_workspace=workspaces["legacy"],
        ),
        encoding="utf-8",
    )
    config_path.chmod(0o600)
    return SampleDeployment(root, state_dir, config_path, workspaces, TOKEN)


def _copy_sqlite_agent(state_dir: Path) -> None:
    database = state_dir / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    shutil.copy2(FIXTURES / "openclaw-2026.9.6" / "openclaw-agent.sqlite", database)


def _copy_file_agent(state_dir: Path) -> None:
    source = FIXTURES / "openclaw-2026.7.35" / "agents" / "main" / "sessions"
    target = state_dir / "agents" / "legacy" / "sessions"
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.name.endswith(".trajectory.jsonl"):
            # The trajectory names the session key of its transcript: renamed like the store's.
            renamed_keys = path.read_bytes().replace(b'"agent:main:', b'"agent:legacy:')
            (target / path.name).write_bytes(renamed_keys)
        elif path.name != "sessions.json":
            shutil.copy2(path, target / path.name)
    store = orjson.loads((source / "sessions.json").read_bytes())
    renamed = {}
    for key, entry in store.items():
        entry = dict(entry)
        if "sessionFile" in entry:
            entry["sessionFile"] = Path(entry["sessionFile"]).name
        renamed[key.replace("agent:main:", "agent:legacy:", 1)] = entry
    (target / "sessions.json").write_bytes(orjson.dumps(renamed, option=orjson.OPT_INDENT_2))


def _write_memory(memory: Path) -> None:
    for relative, text in MEMORY_FILES.items():
        path = memory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for day in range(1, 29):
        notes = "".join(
            f"- 09:{minute:02d} worked on item {day}-{minute}: checked logs, wrote notes.\n"
            for minute in range(0, 60)
        )
        marker = "[DECISION] keep the nightly job.\n" if day % 7 == 0 else ""
        path = memory / f"2026-10-{day:02d}.md"
        path.write_text(f"# 2026-10-{day:02d}\n\n{notes}{marker}", encoding="utf-8")
