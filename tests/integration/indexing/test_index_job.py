"""`memwarden index` on real memory folders: counts, caching, thresholds, budget, safety."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import json5
import orjson
import pytest

from memwarden.indexing.markers import MARKERS
from memwarden.indexing.refresh import index_agents
from memwarden.process.runtime import JobContext
from memwarden.settings import config
from support.cli import run_cli, run_subprocess
from support.deployments import make_sqlite_era_state, write_json5_config

FILLER = "Notes on the work, kept for later. " * 40 + "\n"

# path under memory/ → content; the expected marker totals are written out by hand below (the
# handoffs' and session summaries' markers are not counted: INDEX.md goes to every session).
MEMORY = {
    "ACTIVE_CONTEXT.md": "# Active context\n\n"
    "> - session: `agent:main:main` (id `x`)\n\n"
    "Shipping the index. [TODO] docs [TODO] bench\n",
    "sessions/main.telegram.direct.42.md": "# Conversation Handoff\n\n"
    "> - session: `agent:main:telegram:direct:42` (id `y`)\n\n"
    "Talking with peer 42. [PREFERENCE] tea [TODO] call back\n",
    "2026-11-19-session-main.telegram.direct.42.md": "# Session summary — "
    "agent:main:telegram:direct:42\n\n[DECISION] peer 42 wants weekly calls\n",
    "MEMORY.md": "# Long-term memory\n\n- [PREFERENCE] short answers\n- [FACT] prod is eu-west\n",
    "2026-11-20.md": "# 2026-11-20\n\n[DECISION] SQLite [DECISION] WAL [GOTCHA] fsync\n" + FILLER,
    "2026-11-21.md": "# 2026-11-21\n\nWrite `[TODO]` to flag work.\n```\n[FACT] example\n```\n"
    + FILLER,
    "plans/launch-plan.md": "# Launch plan\n\n[SOLUTION] canary [PATTERN] blue/green\n" + FILLER,
    "research/deep/vector-dbs.md": "Vector DBs compared. [TRADEOFF] recall vs cost\n" + FILLER,
    "notes/empty.md": "",
    "archive/2025-01-01.md": "[DECISION] archived, not counted\n" + FILLER,
    ".drafts/secret.md": "[DECISION] hidden, not counted\n",
    "INDEX.notes.md": "# Index notes\n\n[FACT] counted\n",
}
TOTALS = {
    "DECISION": 2,
    "GOTCHA": 1,
    "SOLUTION": 1,
    "PATTERN": 1,
    "TRADEOFF": 1,
    "FACT": 2,
    "PREFERENCE": 1,
    "TODO": 0,
}
POOL_FILES = 8  # MEMORY minus the handoffs, archive/ and the hidden folder, plus the latin-1 file
PEER = "sessions/main.telegram.direct.42.md"


def write_memory(workspace: Path, files: dict[str, str] = MEMORY) -> Path:
    memory = workspace / "memory"
    for name, text in files.items():
        path = memory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (memory / "latin1-notes.md").write_bytes("# Caf\xe9 notes\n\nd\xe9j\xe0 vu\n".encode("latin-1"))
    return memory


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "1")
    copy = make_sqlite_era_state(tmp_path)
    write_memory(copy.workspace)
    return copy


def index(capsys, state, *arguments: str):
    return run_cli(capsys, "--state-dir", state.state_dir, "index", *arguments)


def test_index_generated_folder_counts_every_marker_per_occurrence(capsys, state):
    result = index(capsys, state, "--json")

    assert result.exit_code == 0, result.stderr
    (outcome,) = result.json()["workspaces"]
    assert outcome["status"] == "written"
    assert outcome["markers"] == TOTALS
    assert outcome["files"] == POOL_FILES
    text = (state.workspace / "memory" / "INDEX.md").read_text(encoding="utf-8")
    totals = " · ".join(f"[{name}] {TOTALS[name]}" for name in MARKERS)
    assert f"Markers: {totals}\n" in text
    assert f"· {POOL_FILES} files ·" in text


def test_index_rows_have_titles_sizes_markers_and_categories(capsys, state):
    index(capsys, state)

    text = (state.workspace / "memory" / "INDEX.md").read_text(encoding="utf-8")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if "| " in line}
    assert "| Launch plan |" in rows["plans/launch-plan.md"]
    assert "SOL 1 · PAT 1" in rows["plans/launch-plan.md"]
    assert "| vector-dbs |" in rows["research/deep/vector-dbs.md"]  # no heading: the name
    assert "| empty | 0 B | 0 |" in rows["notes/empty.md"]
    assert "| Caf\ufffd notes |" in rows["latin1-notes.md"]
    assert "| DEC 2 · GOT 1 |" in rows["2026-11-20.md"]
    assert "| 2026-11-21 |" in rows["2026-11-21.md"]  # markers only in code: none
    assert "archive/" not in text and ".drafts" not in text and "| INDEX.md" not in text
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert [heading.split(" — ")[0] for heading in headings] == [
        "## How to use this index",
        "## Core state",
        "## Daily logs",
        "## Plans and procedures",
        "## Research",
        "## Other",
    ]


def test_index_writes_the_bootstrap_manifest_for_the_hook(capsys, state):
    index(capsys, state)

    memory = state.workspace / "memory"
    manifest = orjson.loads((memory / ".memwarden-bootstrap.json").read_bytes())
    index_chars = len((memory / "INDEX.md").read_text().rstrip())
    assert manifest == {
        "version": 3,
        "generator": "memwarden",
        "agents": ["main"],
        "maxChars": 20_000,
        "totalMaxChars": 60_000,
        "groupChats": False,
        "files": [
            {
                "name": "memory/ACTIVE_CONTEXT.md",
                "path": "memory/ACTIVE_CONTEXT.md",
                "session": "agent:main:main",
            },
            {
                "name": f"memory/{PEER}",
                "path": f"memory/{PEER}",
                "session": "agent:main:telegram:direct:42",
            },
            {"name": "memory/INDEX.md", "path": "memory/INDEX.md", "chars": index_chars},
        ],
    }


def test_index_never_lists_nor_counts_a_conversations_handoff(capsys, state):
    """INDEX.md goes to every session, another peer's too: the names of a conversation's
    handoff and session summaries hold its peer."""
    result = index(capsys, state, "--json")

    text = (state.workspace / "memory" / "INDEX.md").read_text(encoding="utf-8")
    assert "| sessions/" not in text and "| ACTIVE_CONTEXT.md |" not in text
    assert "direct.42" not in text and "direct:42" not in text
    assert "Conversation Handoff" not in text and "Session summary" not in text
    (outcome,) = result.json()["workspaces"]
    assert outcome["markers"] == TOTALS  # the handoffs' [TODO] and [PREFERENCE] are not counted
    assert [item["path"] for item in outcome["handoffs"]] == [
        "memory/ACTIVE_CONTEXT.md",
        f"memory/{PEER}",
    ]
    assert "only that conversation's session gets it at its start" in text
    assert "no handoff is listed here" in text
    assert "is loaded with this index at every session start" not in text


def test_index_active_context_without_provenance_is_for_no_session_and_warns(capsys, state):
    active = state.workspace / "memory" / "ACTIVE_CONTEXT.md"
    active.write_text("# Active context\n\nwritten by a template without provenance\n")

    result = index(capsys, state, "--json")

    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert [file["path"] for file in manifest["files"]] == [f"memory/{PEER}", "memory/INDEX.md"]
    handoffs = result.json()["workspaces"][0]["handoffs"]
    assert [item["session"] for item in handoffs] == ["agent:main:telegram:direct:42"]
    assert f"{active}: names no session" in result.stderr


def test_index_active_context_left_by_an_earlier_memwarden_for_a_peer_is_injected_nowhere(
    capsys, state
):
    active = state.workspace / "memory" / "ACTIVE_CONTEXT.md"
    active.write_text("# Active context\n\n> - session: `agent:main:telegram:direct:7`\n")

    result = index(capsys, state)

    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert "memory/ACTIVE_CONTEXT.md" not in [file["path"] for file in manifest["files"]]
    assert "holds session `agent:main:telegram:direct:7`, whose handoff is another file" in (
        result.stderr
    )


def test_index_files_are_private_and_written_whole(capsys, state):
    index(capsys, state)

    memory = state.workspace / "memory"
    for name in ("INDEX.md", ".memwarden-bootstrap.json"):
        assert (memory / name).stat().st_mode & 0o077 == 0
    assert not [path for path in memory.iterdir() if path.name.endswith(".tmp")]


def context_at(state, moment: datetime) -> JobContext:
    environment = dict(os.environ)
    return JobContext(
        config=config.load(None, env=environment),
        env=environment,
        state_dir_override=state.state_dir,
        clock=lambda: moment,
    )


def test_index_unchanged_folder_later_keeps_the_file_as_it_was(state):
    moment = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    first = context_at(state, moment)
    (outcome,) = index_agents(first, first.deployment.agents)
    index_path = state.workspace / "memory" / "INDEX.md"
    before = (index_path.read_bytes(), index_path.stat().st_mtime_ns, index_path.stat().st_ino)

    later = context_at(state, moment + timedelta(hours=6))
    (again,) = index_agents(later, later.deployment.agents)

    assert (outcome["status"], again["status"]) == ("written", "unchanged")
    after = (index_path.read_bytes(), index_path.stat().st_mtime_ns, index_path.stat().st_ino)
    assert after == before
    assert b'generated="2026-11-22 06:00 UTC"' in after[0]


def test_index_changed_file_rewrites_with_the_new_facts(state):
    moment = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
    context = context_at(state, moment)
    index_agents(context, context.deployment.agents)
    extra = state.workspace / "memory" / "plans" / "launch-plan.md"
    extra.write_text(extra.read_text() + "\n[GOTCHA] DNS TTLs\n")

    (outcome,) = index_agents(context, context.deployment.agents)

    assert outcome["status"] == "written"
    assert outcome["markers"]["GOTCHA"] == TOTALS["GOTCHA"] + 1


def test_index_cached_facts_reused_while_size_mtime_inode_unchanged(state):
    context = context_at(state, datetime(2026, 11, 22, 6, 0, tzinfo=UTC))
    index_agents(context, context.deployment.agents)
    path = state.workspace / "memory" / "MEMORY.md"
    status = path.stat()
    original = path.read_bytes()
    # Same size, same mtime, same inode: the index trusts its cache and does not read it again.
    with path.open("r+b") as handle:
        handle.write(original.replace(b"[FACT]", b"[TODO]"))
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))

    (outcome,) = index_agents(context, context.deployment.agents)

    assert outcome["status"] == "unchanged"
    assert outcome["markers"]["FACT"] == TOTALS["FACT"]
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1))
    (touched,) = index_agents(context, context.deployment.agents)
    assert touched["markers"]["FACT"] == TOTALS["FACT"] - 1


def test_index_below_threshold_no_index_but_the_handoffs_stay_in_the_manifest(
    capsys, state, monkeypatch
):
    index(capsys, state)
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "500")

    result = index(capsys, state)

    assert result.exit_code == 0
    assert (
        "under the threshold: no index; bootstrap manifest written (2 conversation handoffs)"
        in result.stdout
    )
    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert [file["path"] for file in manifest["files"]] == [
        "memory/ACTIVE_CONTEXT.md",
        f"memory/{PEER}",
    ]
    (outcome,) = index(capsys, state, "--json").json()["workspaces"]
    assert (outcome["status"], outcome["manifest"]) == ("below_threshold", "unchanged")


def test_index_below_threshold_without_handoffs_removes_the_manifest(capsys, state, monkeypatch):
    index(capsys, state)
    (state.workspace / "memory" / "ACTIVE_CONTEXT.md").unlink()
    (state.workspace / "memory" / PEER).unlink()
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "500")

    result = index(capsys, state)

    assert "no index; bootstrap manifest removed (nothing to inject)" in result.stdout
    assert not (state.workspace / "memory" / ".memwarden-bootstrap.json").exists()
    (outcome,) = index(capsys, state, "--json").json()["workspaces"]
    assert (outcome["status"], outcome["manifest"]) == ("below_threshold", "none")


def test_index_force_ignores_the_threshold(capsys, state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_THRESHOLD_KB", "500")

    result = index(capsys, state, "--force")

    assert result.exit_code == 0
    assert "memory/INDEX.md written" in result.stdout
    assert (state.workspace / "memory" / "INDEX.md").is_file()


def test_index_dry_run_writes_nothing_and_says_what_it_would_do(capsys, state):
    result = index(capsys, state, "--dry-run")

    assert result.exit_code == 0
    assert "would write memory/INDEX.md" in result.stdout
    assert not (state.workspace / "memory" / "INDEX.md").exists()
    assert not (state.workspace / "memory" / ".memwarden-bootstrap.json").exists()


def test_index_foreign_index_file_is_kept_and_other_workspaces_still_indexed(
    capsys, state, tmp_path
):
    own = state.workspace / "memory" / "INDEX.md"
    own.write_text("# My hand-written index\n")
    second = tmp_path / "workspace-ops"
    write_memory(second)
    config_value = json5.loads(state.config_path.read_text())
    config_value["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(second)},
    ]
    write_json5_config(state.config_path, config_value)

    result = index(capsys, state, "--json")

    assert result.exit_code == 1
    outcomes = {item["agents"][0]: item for item in result.json()["workspaces"]}
    assert outcomes["main"]["status"] == "failed"
    assert "was not written by memwarden; rename it" in outcomes["main"]["error"]
    assert outcomes["ops"]["status"] == "written"
    assert own.read_text() == "# My hand-written index\n"
    assert "index main: failed:" in result.stderr
    # The conversations' handoffs are still injected, without the index.
    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert [file["path"] for file in manifest["files"]] == [
        "memory/ACTIVE_CONTEXT.md",
        f"memory/{PEER}",
    ]


def test_index_agents_sharing_a_workspace_index_it_once(capsys, state):
    config_value = json5.loads(state.config_path.read_text())
    config_value["agents"]["list"] = [{"id": "main", "default": True}, {"id": "twin"}]
    config_value["agents"]["defaults"]["workspace"] = str(state.workspace)
    config_value["agents"]["list"][1]["workspace"] = str(state.workspace) + "/"
    write_json5_config(state.config_path, config_value)

    result = index(capsys, state, "--json")

    (outcome,) = result.json()["workspaces"]
    assert outcome["agents"] == ["main", "twin"]
    # One of them alone (a checkpoint that wrote only twin's files): the workspace's manifest
    # still names both, as the hook needs to map each one's handoffs.
    alone = index(capsys, state, "--json", "--agent", "twin", "--force")
    (outcome,) = alone.json()["workspaces"]
    assert outcome["agents"] == ["main", "twin"]
    manifest = orjson.loads((state.workspace / "memory" / ".memwarden-bootstrap.json").read_bytes())
    assert manifest["agents"] == ["main", "twin"]


def set_bootstrap_caps(state, per_file: int, total: int = 60_000) -> None:
    config_value = json5.loads(state.config_path.read_text())
    config_value["agents"]["defaults"]["bootstrapMaxChars"] = per_file
    config_value["agents"]["defaults"]["bootstrapTotalMaxChars"] = total
    write_json5_config(state.config_path, config_value)


def test_index_over_the_gateway_cap_is_condensed_and_says_so(capsys, state):
    daily = {f"2026-10-{day:02d}.md": f"# Day {day}\n[FACT] {day}\n" for day in range(1, 31)}
    write_memory(state.workspace, daily)
    set_bootstrap_caps(state, 3_000)

    result = index(capsys, state, "--json")

    (outcome,) = result.json()["workspaces"]
    assert outcome["fits"] is True and outcome["chars"] <= 3_000 and outcome["cap"] == 3_000
    assert outcome["condensed"][0] == "Daily logs: summarised in one line"
    text = (state.workspace / "memory" / "INDEX.md").read_text()
    assert "> Condensed to fit the bootstrap cap of 3,000 characters" in text
    assert len(text.rstrip()) == outcome["chars"]
    assert "(condensed: Daily logs: summarised in one line" in index(capsys, state).stdout


def test_index_handoff_over_the_cap_is_reported(capsys, state):
    (state.workspace / "memory" / PEER).write_text(MEMORY[PEER] + "x" * 5_000)
    set_bootstrap_caps(state, 4_500, total=6_000)

    result = index(capsys, state)

    assert result.exit_code == 0
    assert f"{PEER}: 5,135 characters" in result.stderr
    assert "characters, over the 4,500-character bootstrap cap" in result.stderr
    assert "over the 6,000-character total bootstrap cap" in result.stderr


def test_index_max_chars_option_lowers_the_cap(capsys, state, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_INDEX_MAX_CHARS", "2500")

    (outcome,) = index(capsys, state, "--json").json()["workspaces"]

    assert outcome["cap"] == 2_500 and outcome["chars"] <= 2_500


def test_index_symlinked_file_and_folder_are_not_followed(capsys, state, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.md").write_text("[DECISION] outside the workspace\n")
    memory = state.workspace / "memory"
    (memory / "linked-folder").symlink_to(outside)
    (memory / "linked.md").symlink_to(outside / "leak.md")

    (outcome,) = index(capsys, state, "--json").json()["workspaces"]

    assert outcome["files"] == POOL_FILES
    assert outcome["markers"]["DECISION"] == TOTALS["DECISION"]


def test_index_workspace_option_indexes_that_folder(capsys, state, tmp_path):
    other = tmp_path / "elsewhere"
    write_memory(other)

    result = index(capsys, state, "--workspace", str(other), "--json")

    (outcome,) = result.json()["workspaces"]
    assert (outcome["workspace"], outcome["agents"], outcome["status"]) == (
        str(other),
        [],
        "written",
    )
    assert not (state.workspace / "memory" / "INDEX.md").exists()


@pytest.mark.parametrize("folder", ["home", "/", "/etc"])
def test_index_workspace_refuses_the_home_the_root_and_system_folders(
    capsys, state, isolated_env, folder
):
    target = isolated_env if folder == "home" else Path(folder)
    had_memory = (target / "memory").exists()

    result = index(capsys, state, "--workspace", str(target), "--force")

    assert result.exit_code == 2
    assert f"--workspace {target} is " in result.stderr
    assert "memwarden will not create memory/ there" in result.stderr
    assert (target / "memory").exists() == had_memory


def test_index_workspace_that_does_not_exist_is_a_usage_error(capsys, state, tmp_path):
    result = index(capsys, state, "--workspace", str(tmp_path / "typo"))

    assert result.exit_code == 2
    assert f"--workspace {tmp_path / 'typo'}: no such folder" in result.stderr
    assert not (tmp_path / "typo").exists()


def test_index_records_an_event_for_each_written_index(capsys, state):
    index(capsys, state)

    result = run_cli(capsys, "--state-dir", state.state_dir, "index", "--json")

    assert result.json()["summary"] == {"workspaces": 1, "unchanged": 1}
    from memwarden.store.state import StateDB

    database = StateDB(Path(os.environ["XDG_STATE_HOME"]) / "memwarden" / "state.db")
    events = database.events(types=["index.written"])
    assert [event["agent_id"] for event in events] == ["main"]
    assert events[0]["data"]["files"] == POOL_FILES


def test_index_broken_custom_template_fails_that_workspace_with_one_line(
    capsys, state, tmp_path, monkeypatch
):
    template = tmp_path / "my-index.md.j2"
    template.write_text("{{ totals.files }} files {{ no_such_value }}\n")
    monkeypatch.setenv("MEMWARDEN_INDEX_TEMPLATE", str(template))

    result = index(capsys, state)

    assert result.exit_code == 1
    (line,) = [line for line in result.stderr.splitlines() if "failed" in line]
    assert f"{template}: the INDEX.md template does not render" in line
    assert "no_such_value" in line
    assert not (state.workspace / "memory" / "INDEX.md").exists()


def test_index_custom_template_renders_with_the_marker_added(capsys, state, tmp_path, monkeypatch):
    template = tmp_path / "my-index.md.j2"
    template.write_text(
        "# {{ totals.files }} files\n{% for view in views %}- {{ view.name }}\n{% endfor %}"
    )
    monkeypatch.setenv("MEMWARDEN_INDEX_TEMPLATE", str(template))

    assert index(capsys, state).exit_code == 0

    lines = (state.workspace / "memory" / "INDEX.md").read_text().splitlines()
    assert lines[0].startswith('<!-- memwarden:index generated="')
    assert lines[1:] == [
        f"# {POOL_FILES} files",
        "- Core state",
        "- Daily logs",
        "- Plans and procedures",
        "- Research",
        "- Other",
    ]


def test_index_agents_returns_one_outcome_per_workspace(state):
    context = context_at(state, datetime(2026, 11, 22, 6, 0, tzinfo=UTC))

    dry = index_agents(context, context.deployment.agents, dry_run=True)
    done = index_agents(context, context.deployment.agents)

    assert [item["status"] for item in dry] == ["would_write"]
    assert [item["status"] for item in done] == ["written"]
    assert done[0]["workspace"] == str(state.workspace)
    assert done[0]["manifest"] == "written"


# What the reference script generate-memory-index.sh writes (its header, then its tables).
REFERENCE_INDEX = (
    "# Memory Index\n"
    "> **Generated**: 2026-11-20 09:00 UTC | **Files**: 3 | **Size**: 12KB | **~Tokens**: 3072\n"
    "> **Observations**: 2🟤 decisions | 1🔴 gotchas | 0🟡 solutions | 0🔵 patterns | 0⚪ todos\n"
    "\n## How to Use This Index\n- **Always load**: ACTIVE_CONTEXT.md (current working state)\n"
    "\n### 🔑 Core State (always load ACTIVE_CONTEXT)\n\n"
    "| File | Title | Size | Tokens | Observations | Modified |\n"
    "|------|-------|------|--------|-------------|----------|\n"
    "| ACTIVE_CONTEXT.md | Active context | 1KB | ~250 | — | 2026-11-20 |\n"
)


def test_index_takes_over_the_reference_scripts_index_after_keeping_it_in_history(
    capsys, state, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")  # taken over all the same
    index_path = state.workspace / "memory" / "INDEX.md"
    index_path.write_text(REFERENCE_INDEX, encoding="utf-8")

    result = index(capsys, state, "--json")

    assert result.exit_code == 0, result.stderr
    (outcome,) = result.json()["workspaces"]
    assert outcome["status"] == "written"
    assert outcome["migrated"].startswith("kept in agent main's memory history: snapshot ")
    assert index_path.read_text().startswith("<!-- memwarden:index")
    snapshot_id = outcome["migrated"].rsplit(" ", 1)[1]
    listed = run_cli(capsys, "--state-dir", state.state_dir, "--json", "history", "list")
    (snapshot,) = [item for item in listed.json()["snapshots"] if item["id"] == snapshot_id]
    assert snapshot["trigger"] == "pre-migrate"
    rewound = run_subprocess(  # the operator's way back, in a process of its own
        "--state-dir", state.state_dir, "history", "rewind", snapshot_id, "--path", "INDEX.md"
    )
    assert rewound.exit_code == 0, rewound.stderr
    assert index_path.read_text(encoding="utf-8") == REFERENCE_INDEX
    # Rewound to the script's file, which the rewind's own snapshot holds: taken over again.
    line = index(capsys, state).stdout
    assert (
        "took over the INDEX.md of generate-memory-index.sh (already in agent main's latest "
        "memory-history snapshot)"
    ) in line


def test_index_dry_run_over_the_reference_index_changes_nothing_and_says_so(capsys, state):
    index_path = state.workspace / "memory" / "INDEX.md"
    index_path.write_text(REFERENCE_INDEX, encoding="utf-8")

    result = index(capsys, state, "--dry-run")

    assert result.exit_code == 0, result.stderr
    assert "would write memory/INDEX.md" in result.stdout
    assert "would keep it in agent main's memory history first" in result.stdout
    assert index_path.read_text(encoding="utf-8") == REFERENCE_INDEX


def test_index_reference_index_of_a_workspace_no_agent_uses_is_left_alone(capsys, state, tmp_path):
    other = tmp_path / "elsewhere"
    write_memory(other)
    (other / "memory" / "INDEX.md").write_text(REFERENCE_INDEX, encoding="utf-8")

    result = index(capsys, state, "--workspace", str(other))

    assert result.exit_code == 1
    assert "written by generate-memory-index.sh, but no agent uses this workspace" in result.stderr
    assert (other / "memory" / "INDEX.md").read_text(encoding="utf-8") == REFERENCE_INDEX


@pytest.mark.parametrize(
    "text",
    [
        "# Memory Index\n\nMy own notes, not generated.\n",
        "> **Generated**: 2026-11-20\n# Memory Index\n",
        "# Memory Index (mine)\n> **Generated**: by hand\n",
    ],
)
def test_index_other_foreign_index_files_are_still_refused(capsys, state, text):
    index_path = state.workspace / "memory" / "INDEX.md"
    index_path.write_text(text, encoding="utf-8")

    result = index(capsys, state)

    assert result.exit_code == 1
    assert "exists and was not written by memwarden; rename it" in result.stderr
    assert index_path.read_text(encoding="utf-8") == text


def test_index_shared_by_every_session_holds_no_conversations_words(capsys, state, fixture_clock):
    """INDEX.md goes to every session, another peer's too: the daily logs memwarden writes from
    conversations show in it by name and neutral title only, a conversation's own handoff and
    session summaries not at all."""
    cli = ("--state-dir", state.state_dir)
    assert run_cli(capsys, *cli, "checkpoint").exit_code == 0
    summarized = run_cli(
        capsys,
        *cli,
        "summarize",
        "--session-key",
        "agent:main:main",
        "--session-id",
        "b5974d71-c717-4e69-b2ad-af312d36f9f1",
        "--event-time",
        "2026-11-22T05:27:00Z",
    )
    assert summarized.exit_code == 0, summarized.stderr
    assert index(capsys, state).exit_code == 0

    text = (state.workspace / "memory" / "INDEX.md").read_text(encoding="utf-8")
    summaries = state.workspace / "memory" / "sessions" / "summaries"
    assert (summaries / "2026-11-22-session-main.main.md").is_file()
    assert "2026-11-22-session-" not in text and "Session summary" not in text
    assert "main.agentrpc" not in text and "Conversation Handoff" not in text
    for words in ("hello from the cli test", "second message after reset", "via agent rpc"):
        assert words not in text.lower()
