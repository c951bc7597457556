"""The checkpoint's journal: what the next run does with what a killed run left.

Each test stages files as a run does (`AgentFiles` -> temp files), records them in the journal
as the commit does, then "kills" the run (its writer file is left unlocked, nothing cleaned up)
and lets `roll_forward` finish, with real files and a real state database.
"""

from __future__ import annotations

import os
import stat
from contextlib import nullcontext
from pathlib import Path

import pytest

from memwarden.checkpoint.commit import journal
from memwarden.checkpoint.commit.positions import load_stored
from memwarden.checkpoint.commit.staging import WRITERS_FOLDER, AgentFiles, Writer
from memwarden.process.runtime import JobContext
from memwarden.settings.config import defaults
from memwarden.store.state import StateDB
from support.fsyncs import record_fsyncs

ENTRY = "\n### 10:00 · checkpoint · `agent:main:main`\n- session `s1`: 1 request, 1 reply\n"
HEADER = "# 2026-11-25\n"


@pytest.fixture
def context(tmp_path: Path):
    """A run's context whose storage (state.db, locks, writers) is `<tmp>/storage`."""
    context = JobContext(
        config=defaults(),
        env={"STATE_DIRECTORY": str(tmp_path / "storage")},
        state_dir_override=tmp_path / "gateway",
    )
    yield context
    context.close()


@pytest.fixture
def setup(context: JobContext, tmp_path: Path):
    workspace = tmp_path / "workspace"
    (workspace / "memory").mkdir(parents=True)
    return context.state, context.storage_dir, workspace


def no_lock(agent_id: str):
    return nullcontext()


def killed(writer: Writer) -> None:
    """What SIGKILL leaves: the writer file, unlocked; the temp files; no cleanup."""
    os.close(writer._descriptor)
    writer._descriptor = None


def stage_and_record(state: StateDB, writer: Writer, files: AgentFiles):
    staged = files.stage(writer)
    with state.transaction() as connection:
        journal.record(connection, writer.token, staged)
    return staged


def temp_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.rglob(".*.tmp"))


def staged_daily_append(state, storage, workspace, before=None):
    """One checkpoint's daily-log entry staged and journaled (the daily log holding `before`
    first, when given); return the daily log, the run's writer and the staged file."""
    daily = workspace / "memory" / "2026-11-25.md"
    if before is not None:
        daily.write_text(before)
    writer = Writer(storage)
    files = AgentFiles("main", workspace)
    files.append(daily, ENTRY, HEADER)
    (staged,) = stage_and_record(state, writer, files)
    return daily, writer, staged


def test_roll_forward_intact_temp_file_is_renamed(setup):
    state, storage, workspace = setup
    daily, writer, _ = staged_daily_append(state, storage, workspace, "# notes\n")
    killed(writer)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert daily.read_text() == "# notes\n" + ENTRY
    assert report.counts == {"placed": 1}
    assert temp_files(workspace) == []
    assert journal.pending_count(state, "next") == 1  # cleared once the manifests are refreshed
    assert list((storage / WRITERS_FOLDER).iterdir()) == []


def test_roll_forward_daily_log_whose_temp_file_is_gone_gets_the_entry_from_the_journal(setup):
    state, storage, workspace = setup
    daily, writer, staged = staged_daily_append(state, storage, workspace)
    Path(staged.temp).unlink()
    killed(writer)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert daily.read_text().count("· checkpoint ·") == 1
    assert report.counts == {"appended": 1}


def test_roll_forward_after_the_rename_was_done_adds_nothing(setup):
    state, storage, workspace = setup
    daily, writer, staged = staged_daily_append(state, storage, workspace, "# notes\n")
    os.replace(staged.temp, daily)  # killed right after this rename
    killed(writer)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert daily.read_text() == "# notes\n" + ENTRY
    assert report.counts == {"done": 1}


def test_roll_forward_daily_log_replaced_by_a_fifo_is_a_problem_not_a_wait(setup):
    state, storage, workspace = setup
    daily, writer, _ = staged_daily_append(state, storage, workspace, "# notes\n")
    daily.unlink()
    os.mkfifo(daily)  # reading it would wait for a writer, for ever
    killed(writer)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    (problem,) = report.problems
    assert problem.startswith(
        f"checkpoint journal of agent main: {daily}: it is a named pipe (FIFO), not a regular file"
    )
    assert stat.S_ISFIFO(os.lstat(daily).st_mode)
    assert journal.pending_count(state) == 1  # tried again by the next run


def test_roll_forward_daily_log_the_agent_changed_meanwhile_keeps_its_text(setup):
    state, storage, workspace = setup
    daily, writer, _ = staged_daily_append(state, storage, workspace, "# notes\n")
    daily.write_text("# notes\n- the agent wrote this\n")
    killed(writer)

    journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert daily.read_text() == "# notes\n- the agent wrote this\n" + ENTRY
    assert temp_files(workspace) == []


def staged_handoff(state, storage, workspace):
    """Stage a new main handoff over the one a recorded position owns; return the path, the
    writer and the staged file."""
    handoff = workspace / "memory" / "ACTIVE_CONTEXT.md"
    handoff.write_text("old handoff\n")
    state.set_position(
        "checkpoint", "main", "agent:main:main", "s1", {"offset": 1}, data={"file": handoff.name}
    )
    writer = Writer(storage)
    files = AgentFiles("main", workspace)
    files.replace(handoff, "new handoff\n")
    (staged,) = stage_and_record(state, writer, files)
    return handoff, writer, staged


def test_roll_forward_handoff_whose_temp_file_is_gone_stays_whole_and_loses_its_owner(setup):
    state, storage, workspace = setup
    handoff, writer, staged = staged_handoff(state, storage, workspace)
    Path(staged.temp).unlink()
    killed(writer)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert handoff.read_text() == "old handoff\n"
    assert report.counts == {"lost": 1}
    assert "file" not in load_stored(state)[("main", "agent:main:main")].data


def test_a_rename_that_fails_removes_its_temp_file_and_the_next_run_rewrites_the_handoff(setup):
    state, storage, workspace = setup
    handoff, writer, staged = staged_handoff(state, storage, workspace)
    handoff.unlink()
    (handoff / "in the way").mkdir(parents=True)  # a rename over it fails, as over chattr +i

    with pytest.raises(OSError) as raised:
        journal.place(staged, verify=False)

    assert raised.value.filename == str(handoff)
    assert temp_files(workspace) == []
    writer.close(pending=True)
    assert journal.pending_count(state) == 1
    (handoff / "in the way").rmdir()
    handoff.rmdir()
    handoff.write_text("old handoff\n")
    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")
    assert handoff.read_text() == "old handoff\n"
    assert report.counts == {"lost": 1}
    assert "file" not in load_stored(state)[("main", "agent:main:main")].data  # rewritten next


def test_roll_forward_handoff_whose_temp_inode_was_reused_is_lost_not_done(setup):
    # A temp file that is gone frees its inode; a file created since may get the same number.
    state, storage, workspace = setup
    handoff, writer, staged = staged_handoff(state, storage, workspace)
    Path(staged.temp).unlink()
    killed(writer)
    state.connection.execute(
        "UPDATE checkpoint_journal SET temp_inode = ?", (handoff.stat().st_ino,)
    )
    state.connection.commit()

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert handoff.read_text() == "old handoff\n"
    assert report.counts == {"lost": 1}


def test_roll_forward_leaves_a_live_run_alone(setup):
    state, storage, workspace = setup
    daily, writer, _ = staged_daily_append(state, storage, workspace)

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert report.counts == {}
    assert not daily.exists()
    assert len(temp_files(workspace)) == 1
    assert journal.pending_count(state) == 1
    writer.close(pending=True)


def test_roll_forward_removes_the_temp_files_of_a_run_killed_before_its_commit(setup):
    state, storage, workspace = setup
    writer = Writer(storage)
    files = AgentFiles("main", workspace)
    files.append(workspace / "memory" / "2026-11-25.md", ENTRY, HEADER)
    files.replace(workspace / "memory" / "sessions" / "peer.md", "handoff\n")
    files.stage(writer)
    killed(writer)
    assert len(temp_files(workspace)) == 2

    report = journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert report.removed_temp_files == 2
    assert temp_files(workspace) == []
    assert list((storage / WRITERS_FOLDER).iterdir()) == []


def test_writer_close_keeps_temp_files_the_journal_still_needs(setup):
    state, storage, workspace = setup
    writer = Writer(storage)
    files = AgentFiles("main", workspace)
    files.append(workspace / "memory" / "2026-11-25.md", ENTRY, HEADER)
    stage_and_record(state, writer, files)

    writer.close(pending=True)
    assert len(temp_files(workspace)) == 1
    journal.roll_forward(state, storage, no_lock, taken_over_by="next")

    assert (workspace / "memory" / "2026-11-25.md").read_text() == HEADER + ENTRY


def test_agent_files_rollback_drops_what_a_failed_session_staged(setup):
    _, storage, workspace = setup
    daily = workspace / "memory" / "2026-11-25.md"
    files = AgentFiles("main", workspace)
    files.append(daily, ENTRY, HEADER)
    mark = files.mark()
    files.append(daily, ENTRY.replace("s1", "s2"), HEADER)
    files.rollback(mark)
    writer = Writer(storage)

    (staged,) = files.stage(writer)

    assert Path(staged.temp).read_text() == HEADER + ENTRY
    writer.close()
    assert temp_files(workspace) == []


def commit_one(context, workspace, stored):
    """Commit one agent's daily-log entry as a run that read the rows `stored` does; return the
    report, the session's outcome and the folders renamed into, by agent."""
    from memwarden.checkpoint.commit.durable_run import DurableWrites
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.records import PositionUpdate
    from memwarden.checkpoint.run.agents import AgentResult
    from memwarden.openclaw.agents import Agent

    state, storage = context.state, context.storage_dir
    writer = Writer(storage)
    files = AgentFiles("main", workspace)
    files.append(workspace / "memory" / "2026-11-25.md", ENTRY, HEADER)
    outcome = SessionOutcome("main", str(workspace), "written", "wrote", "agent:main:main", "s1")
    outcome.files = [str(workspace / "memory" / "2026-11-25.md")]
    outcome.update = PositionUpdate("main", "agent:main:main", "s1", {"offset": 2}, None, {})
    agent = Agent("main", workspace, storage / "agent", True, "file")
    writes = DurableWrites(context, writer, [])
    result = AgentResult([outcome], staged=files.stage(writer))
    report = writes.commit_agents(stored, [(agent, result)])
    writer.close(pending=journal.pending_count(state, writer.token) > 0)
    return report, outcome, writes.placed


def test_commit_of_a_session_another_run_committed_since_it_was_read_is_left_out(setup, context):
    state, _, workspace = setup
    state.set_position("checkpoint", "main", "agent:main:main", "s1", {"offset": 1})
    read = load_stored(state)
    state.set_position("checkpoint", "main", "agent:main:main", "s1", {"offset": 2})  # the other

    report, outcome, _ = commit_one(context, workspace, read)

    assert report.conflicts == ["main"]
    assert (outcome.outcome, outcome.update) == ("skipped", None)
    assert not (workspace / "memory" / "2026-11-25.md").exists()
    assert temp_files(workspace) == []


def test_commit_of_a_session_unchanged_since_it_was_read_puts_its_files_in_place(
    setup, context, monkeypatch
):
    state, _, workspace = setup
    state.set_position("checkpoint", "main", "agent:main:main", "s1", {"offset": 1})
    read = load_stored(state)
    fsynced = record_fsyncs(monkeypatch)

    report, _, placed = commit_one(context, workspace, read)

    assert report.conflicts == []
    assert (workspace / "memory" / "2026-11-25.md").read_text() == HEADER + ENTRY
    assert placed == {"main": {os.path.realpath(workspace / "memory")}}
    # The temp file fsynced as it was written; its folder is the run's end's (the durability
    # tests): the journal keeps the rename until then.
    (temp,) = fsynced
    assert Path(temp).name.startswith(".2026-11-25.md.mw-")
    assert load_stored(state)[("main", "agent:main:main")].position.offset == 2
