"""The durable side of one checkpoint run, from its first step to its last.

`durable_writes` opens it: before anything, it finishes what a killed run left in the journal
(`journal.roll_forward`), then hands out the run's `Writer` (its temp files, and the temp files
of the manifests and INDEX.md it refreshes). A dry run gets no writer: it finishes nothing and
only says what a stopped run left.

`DurableWrites.commit_agents` commits a batch of agents' results:

1. The temp files are durable already: each was fsynced by the process that wrote it
   (`staging`).
2. One state transaction at `synchronous = FULL` records the positions, events and agent records
   with the journal of pending renames. An agent one of whose sessions another checkpoint has
   committed since this run read it (`checkpoint --session` beside the scheduled run) is left
   out whole: its temp files are removed and its outcome says so.
3. The renames, agent by agent under the agent's memory lock. The journal rows stay until the
   run's end, when the folders renamed into are flushed and the manifests refreshed
   (`DurableWrites.done`), so a kill or a power cut before it makes the next run place those
   files again (or find them in place) and refresh their manifests.

A kill anywhere leaves either nothing committed (the temp files are removed by the next run) or
a journal the next run rolls forward (`journal.roll_forward`): no entry is lost or logged twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.checkpoint.commit import journal, positions
from memwarden.checkpoint.commit.staging import Writer
from memwarden.fs.files import flush_folder, named_temp_files
from memwarden.process.errors import MemwardenError, describe_error

if TYPE_CHECKING:
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.records import StoredSession
    from memwarden.checkpoint.run.agents import AgentResult
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext

CONFLICT_REASON = "another checkpoint committed this session first; the next run goes on from there"
Finished = Sequence[tuple["Agent", "AgentResult"]]


@dataclass
class CommitReport:
    """The agents left out (another run committed one of their sessions first) and the problems
    (files that could not be put in place now: the next run does it from the journal)."""

    conflicts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class DurableWrites:
    """The run's temp-file writer (None in a dry run), the agents whose files the start of the
    run finished for a killed one (their manifests are refreshed too), and the agents whose
    files this run put in place, with the folders renamed into."""

    context: JobContext
    writer: Writer | None
    rolled_forward: list[str]
    placed: dict[str, set[str]] = field(default_factory=dict)

    def commit_agents(
        self, stored: Mapping[tuple[str, str], StoredSession], finished: Finished
    ) -> CommitReport:
        """Commit what the finished agents did, as the module says, given the rows the run read
        (`stored`); return what was left out. An agent without a record to keep has its record
        dropped: its next run looks again."""
        report = CommitReport()
        # An agent settled by the fast skip read and staged nothing, and its record stays.
        finished = [(agent, result) for agent, result in finished if not result.skipped_fast]
        if self.writer is None or not finished:
            return report
        committed = self._record(stored, finished, report)
        for agent, result in finished:
            if agent.id in report.conflicts:
                for staged in result.staged:
                    Path(staged.temp).unlink(missing_ok=True)
                _mark_conflict(result.outcomes)
        for agent, result in sorted(committed, key=lambda item: item[0].id):
            if not result.staged:
                continue
            try:
                with self.context.memory_lock(agent.id):
                    # An agent's files are all in its workspace.
                    for staged in result.staged:
                        journal.place(staged, verify=False, real_root=Path(agent.real_workspace))
            except (OSError, MemwardenError) as error:
                report.problems.append(
                    f"checkpoint of agent {agent.id}: {describe_error(error)}; its files are "
                    "put in place by the next run"
                )
                continue
            folders = {os.path.dirname(staged.target) for staged in result.staged}
            self.placed.setdefault(agent.id, set()).update(folders)
        return report

    def _record(
        self,
        stored: Mapping[tuple[str, str], StoredSession],
        finished: Finished,
        report: CommitReport,
    ) -> Finished:
        """Record positions, events, records and the journal in one transaction at synchronous =
        FULL; return the agents recorded (the others are conflicts, in `report`)."""
        state = self.context.state
        committed = []
        state.connection.execute("PRAGMA synchronous = FULL")
        try:
            with state.transaction():
                for agent, result in finished:
                    outcomes = result.outcomes
                    updates = [outcome.update for outcome in outcomes if outcome.update is not None]
                    if positions.written_since(state, stored, updates):
                        report.conflicts.append(agent.id)
                        continue
                    positions.write(
                        state,
                        updates,
                        [event for outcome in outcomes for event in outcome.events],
                        run_id=self.context.run_id,
                        agents=[result.record] if result.record is not None else [],
                        forget_agents=[agent.id] if result.record is None else [],
                    )
                    journal.record(state.connection, self.writer.token, result.staged)
                    committed.append((agent, result))
        finally:
            state.connection.execute("PRAGMA synchronous = NORMAL")
        return committed

    def done(self) -> list[str]:
        """The files are in place and the manifests refreshed (each flushed as it was written):
        flush the folders the files were renamed into, then clear the journal rows of the agents
        whose renames are durable. Return a problem per agent whose folder could not be flushed:
        its rows stay, and the next run finishes its files again."""
        if self.writer is None:
            return []
        durable, problems = list(self.rolled_forward), []
        for agent_id, folders in self.placed.items():
            try:
                for folder in sorted(folders):
                    flush_folder(folder)
            except OSError as error:
                problems.append(
                    f"checkpoint of agent {agent_id}: {describe_error(error)}; its files are put "
                    "in place again by the next run"
                )
                continue
            durable.append(agent_id)
        journal.clear(self.context.state, self.writer.token, durable)
        return problems


@contextmanager
def durable_writes(
    context: JobContext, dry_run: bool, lines: list[str], problems: list[str]
) -> Iterator[DurableWrites]:
    """Before anything, finish what a killed checkpoint left in the journal (its lines and
    problems are added to `lines` and `problems`); then yield the run's DurableWrites. The
    writer is released at the end, its temp files kept while the journal still needs them."""
    if dry_run:
        pending = journal.pending_count(context.state)
        if pending:
            lines.append(
                f"journal: {pending} rename(s) left by a stopped checkpoint; the next run "
                "completes them"
            )
        yield DurableWrites(context, None, [])
        return
    writer = Writer(context.storage_dir)
    try:
        rolled = journal.roll_forward(
            context.state, context.storage_dir, context.memory_lock, taken_over_by=writer.token
        )
        lines += rolled.lines()
        problems += rolled.problems
        # Manifests and INDEX.md too: their temp files carry the run's name, so the next run
        # removes them if this one is killed while writing them.
        with named_temp_files(writer.temp_path):
            yield DurableWrites(context, writer, rolled.agents)
    finally:
        writer.close(pending=journal.pending_count(context.state, writer.token) > 0)


def _mark_conflict(outcomes: list[SessionOutcome]) -> None:
    for outcome in outcomes:
        if outcome.update is None and not outcome.files:
            continue
        outcome.finish("skipped", CONFLICT_REASON)
        outcome.files = []
        outcome.update = None
        outcome.events = []
