"""The durable side of one checkpoint run, from its first step to its last.

`durable_writes` opens it: before anything, it finishes what a killed run left in the journal
(`journal.roll_forward`), then hands out the run's `Writer` (its temp files, and the temp files
of the manifests and INDEX.md it refreshes). `DurableWrites.commit_agents` commits the agents'
results (`commit`); `DurableWrites.done`, once the manifests are refreshed, flushes the
folders the run renamed files into (an `fsync` each) and clears the journal.
A dry run gets no writer: it finishes nothing and only says what a stopped run left.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memwarden.checkpoint.commit import journal
from memwarden.checkpoint.commit.batch import AgentCommit, CommitReport, commit
from memwarden.checkpoint.commit.staging import Writer
from memwarden.fs.files import flush_folder, named_temp_files
from memwarden.process.errors import describe_error

if TYPE_CHECKING:
    from memwarden.checkpoint.outcome import SessionOutcome
    from memwarden.checkpoint.run.agents import AgentResult
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext


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
        self, run: RunState, finished: Sequence[tuple[Agent, AgentResult]]
    ) -> CommitReport:
        """Commit what the finished agents did (see `commit`); return what was left out.

        An agent without a record to keep has its record dropped: its next run looks again.
        """
        if self.writer is None:
            return CommitReport()
        commits = [
            AgentCommit(
                agent.id,
                result.outcomes,
                agent.real_workspace,
                result.staged,
                record=result.record if result.record and not result.skipped_fast else None,
                forget_record=result.record is None,
                expected=expected_rows(run, agent.id, result.outcomes),
            )
            for agent, result in finished
        ]
        report = commit(
            self.context.state,
            commits,
            token=self.writer.token,
            run_id=self.context.run_id,
            memory_lock=self.context.memory_lock,
        )
        for agent_id, folders in report.placed.items():
            self.placed.setdefault(agent_id, set()).update(folders)
        return report

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


def expected_rows(
    run: RunState, agent_id: str, outcomes: Sequence[SessionOutcome]
) -> dict[str, float | None]:
    """Return, per session key the outcomes update, when its row was last written as the run
    read it (None: there was no row)."""
    expected = {}
    for outcome in outcomes:
        if outcome.update is None or outcome.session_key is None:
            continue
        stored = run.stored.get((agent_id, outcome.session_key))
        expected[outcome.session_key] = stored.updated_at if stored is not None else None
    return expected
