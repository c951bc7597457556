"""The compaction watch, run by the checkpoint job: every new compaction of every conversation
assessed, its lost items kept, and recorded once.

For each conversation (automation sessions are left out) whose transcript has something new
since the watch last read it (consumer `compactions`), the new lines are searched for compaction
entries; the first time a conversation is seen, its last FIRST_SIGHT_ENTRIES entries are (a
recent stretch, not the whole transcript). When there is one, the whole transcript is read to
find each compaction's span, and older compactions found there are recorded too. Compactions
already in the ledger are skipped; each new one is assessed, its lost items appended to the
day's log (under the agent's memory lock), then recorded.
The read position moves on only when every compaction of the conversation was settled, so one
that failed is tried again by the next run. A file-era reset renames the transcript away: the
reset archive of the conversation's previous session is read on from the stored position too,
and the stored session stays the previous one until every compaction of its archive is settled.
Compactions whose daily log a rewind restored or removed (ledger.forget_kept) have their lost
items written there again, from the ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any, NamedTuple

from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.compactions import ledger
from memwarden.openclaw import sqlite_ro
from memwarden.process import stopping
from memwarden.process.errors import describe_error
from memwarden.process.readable import utc_minute
from memwarden.process.runtime import Problem

if TYPE_CHECKING:
    from memwarden.checkpoint.digest.redact import Redactor
    from memwarden.compactions.assessment import Assessment, CompactedSpan
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.sessions import SessionRecord
    from memwarden.openclaw.transcripts import ReadPosition, TranscriptLocation
    from memwarden.process.runtime import JobContext, JobResult

log = logging.getLogger("memwarden.compactions")
FIRST_SIGHT_ENTRIES = 200
# Every compaction line holds its type, `"type":"compaction"`, as the gateway writes it.
COMPACTION_LINE = b'"compaction"'
SECTION_TEMPLATE = "compactions/lost_items.md.j2"


class Kept(NamedTuple):
    """Where a compaction's lost items went: the file (relative to the workspace), and whether
    this run wrote them (False: the file already held them, or a dry run)."""

    file: str
    written: bool
    already: bool = False


@dataclass
class Found:
    """One new compaction: where, its assessment, where its lost items are, or why it failed."""

    agent_id: str
    session_key: str
    session_id: str
    assessment: Assessment | None
    kept: Kept | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "agent": self.agent_id,
            "session": self.session_key,
            "session_id": self.session_id,
        }
        if self.assessment is not None:
            found |= self.assessment.to_json()
        if self.kept is not None:
            found |= {"kept_file": self.kept.file, "written": self.kept.written}
        if self.error is not None:
            found["error"] = self.error
        return found

    def line(self, dry_run: bool) -> str:
        """Return the line people read about it."""
        where = f"agent {self.agent_id} {self.session_key}"
        assessment = self.assessment
        if assessment is None or self.error is not None:
            return f"compaction watch: {where}: {self.error}"
        if not assessment.lossy:
            return f"compaction of {where} at {_when(assessment)}: nothing lost"
        text = f"compaction of {where} at {_when(assessment)} {assessment.describe_loss()}"
        kept = self.kept
        if kept is not None and kept.already:
            text += f"; already in {kept.file}"
        elif kept is not None:
            text += f"; {'would append' if dry_run else 'appended'} to {kept.file}"
        return text

    def again_line(self, dry_run: bool) -> str:
        """Return the line about lost items kept again after a rewind of their daily log."""
        where = f"agent {self.agent_id} {self.session_key}"
        lost, file = len(self.assessment.lost), self.kept.file  # type: ignore[union-attr]
        text = f"compaction of {where} at {_when(self.assessment)}: {lost} lost item(s)"
        if self.kept.already:  # type: ignore[union-attr]
            return f"{text} already in {file} (rewound)"
        verb = "would be written" if dry_run else "written"
        return f"{text} {verb} again to {file} (rewound)"


@dataclass
class WatchReport:
    """What the watch found in one run."""

    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    sessions: int = 0
    # Compactions recorded before whose lost items were kept again (their daily log rewound).
    again: list[Found] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        settled = [found for found in self.found if found.error is None]
        return {
            "sessions": self.sessions,
            "new": len(settled),
            "lossy": sum(1 for found in settled if found.assessment.lossy),  # type: ignore[union-attr]
            "compactions": [found.to_json() for found in self.found],
            "kept_again": [found.to_json() for found in self.again],
        }


@dataclass
class _Watcher:
    """What every conversation of one run shares."""

    context: JobContext
    redactor: Redactor
    zone: tzinfo | None
    now: datetime
    dry_run: bool
    report: WatchReport
    only_session: str | None  # `checkpoint --session`: its key, the one conversation watched
    # By agent, the compactions to keep again after a rewind (one query a run, not an agent).
    rewound: Mapping[str, list[ledger.Recorded]]

    def keep(self, agent: Agent, assessment: Assessment, session_key: str) -> Kept:
        """Append the lost items of a lossy compaction to its day's log, unless the file already
        holds its section, under the agent's memory lock unless in a dry run; return where they
        are. Raise UnsafePathError if the workspace is missing or memory/ leads out of it,
        OSError if the file cannot be written.

        The day's log (`memory/YYYY-MM-DD.md`, the compaction's local day) is what the gateway
        indexes and loads on a bare `/new`; handoffs are rewritten whole by every checkpoint, so
        they would not keep it. The section's heading names the compaction, read for before
        appending: a run killed between the write and the ledger's commit never writes it twice.
        """
        # lazy: only a compaction that lost items is kept
        from memwarden.checkpoint.render.values import daily_header
        from memwarden.fs.files import atomic_append, memory_folder, read_text_if_exists
        from memwarden.fs.templating import render

        workspace = agent.workspace
        with nullcontext() if self.dry_run else self.context.memory_lock(agent.id):
            folder = memory_folder(workspace, create=not self.dry_run)
            moment = (assessment.compacted_at or self.now).astimezone(self.zone)
            path = folder / f"{moment.date().isoformat()}.md"
            name = f"memory/{path.name}"
            mark = f"dropped by compaction `{assessment.entry_id}`"
            current = read_text_if_exists(path)
            if current is not None and mark in current:
                return Kept(name, written=False, already=True)
            if self.dry_run:
                return Kept(name, written=False)
            section = render(
                SECTION_TEMPLATE,
                None,
                time=f"{moment:%H:%M}",
                moment=f"{moment:%Y-%m-%d %H:%M %Z}".rstrip(),
                mark=mark,
                session=session_key,
                messages=assessment.span_messages,
                summary_chars=assessment.summary_chars,
                lost=[item.label() for item in assessment.lost],
            )
            header = "" if current is not None else daily_header(agent.id, path.stem)
            atomic_append(path, section, root=workspace, header=header)
            return Kept(name, written=True)


def watch_compactions(
    context: JobContext,
    agents: Sequence[Agent],
    *,
    session_key: str | None = None,
    dry_run: bool = False,
    sessions: Mapping[str, Sequence[SessionRecord]] | None = None,
    report: WatchReport | None = None,
    rewound: Mapping[str, list[ledger.Recorded]] | None = None,
) -> WatchReport:
    """Given the job's context and the agents it checkpointed (and, for `checkpoint --session`,
    the one session), find, assess, keep and record their new compactions. Never raises for one
    agent, session or compaction: each failure is a problem line of the report.

    `sessions`: the conversations of each agent as the checkpoint just read them from its store
    (automation sessions left out); an agent not in it has its store read here. `report`: the
    report to add to (a run that watches its agents in batches), else a new one; `rewound`,
    `ledger.to_keep_again` as that run read it once."""
    if report is None:
        report = WatchReport()
    if not agents:  # every agent settled by checkpoint's fast skip: nothing new anywhere
        return report

    section = context.config.checkpoint
    watcher = _Watcher(
        context,
        build_redactor(section.redact_patterns, enabled=section.redact),
        context.zone,
        context.now(),
        dry_run,
        report,
        session_key,
        ledger.to_keep_again(context.state) if rewound is None else rewound,
    )
    for agent in agents:
        stopping.check()
        try:
            known = sessions.get(agent.id) if sessions is not None else None
            _watch_agent(watcher, agent, known)
        except Exception as error:  # noqa: BLE001 - one broken agent never stops the others
            stopping.check()
            report.problems.append(
                f"compaction watch of agent {agent.id} failed: {describe_error(error)}"
            )
        finally:
            sqlite_ro.close(agent.sqlite_path)
    return report


def watch_into(result: JobResult, report: WatchReport, *, dry_run: bool) -> None:
    """Add what the watch found (`watch_compactions`) to the checkpoint's result: `compactions`
    in --json, a line each for people, a warning line per lossy compaction (so a quiet timer's
    log names it) and a problem per failure (exit 1)."""
    result.data["compactions"] = report.to_json()
    result.lines += [f"  {found.again_line(dry_run)}" for found in report.again]
    for found in report.found:
        line = found.line(dry_run)
        result.lines.append(f"  {line}")
        if found.error is None and found.assessment is not None and found.assessment.lossy:
            result.problems.append(Problem(line, logging.WARNING))
    if report.problems:
        result.problems.extend(report.problems)
        result.exit_code = max(result.exit_code, 1)


def _watch_agent(watcher: _Watcher, agent: Agent, known: Sequence[SessionRecord] | None) -> None:
    # lazy: only an agent with new lines is watched
    from memwarden.openclaw.sessions import load_sessions
    from memwarden.openclaw.transcripts import all_read_to_end

    if known is None:
        known = load_sessions(agent, [], automation=False)
    only = watcher.only_session
    sessions = [
        session
        for session in known
        if session.transcript is not None and (only is None or session.key.lower() == only.lower())
    ]
    if agent.id in watcher.rewound:
        _keep_again(watcher, agent)
    watcher.report.sessions += len(sessions)
    stored = watcher.context.state.agent_positions(ledger.CONSUMER, agent.id)
    # Most conversations of a big store are quiet: a stat of the file settles each, or a query
    # of the database (asked together, a thousand to a read transaction).
    positioned = [
        session
        for session in sessions
        if (row := stored.get(session.key)) is not None and row[0] == session.session_id
    ]
    answers = all_read_to_end(
        [(session.transcript, stored[session.key][1]) for session in positioned]
    )
    quiet = {session.key for session, answer in zip(positioned, answers, strict=True) if answer}
    for session in sessions:
        if session.key in quiet:
            continue
        try:
            _watch_session(watcher, agent, session, stored.get(session.key))
        except Exception as error:  # noqa: BLE001 - one broken session never stops the others
            stopping.check()
            watcher.report.problems.append(
                f"compaction watch of agent {agent.id} {session.key} failed: "
                f"{describe_error(error)}"
            )


def _watch_session(
    watcher: _Watcher,
    agent: Agent,
    session: SessionRecord,
    stored: tuple[str, Any] | None,
) -> None:
    """Watch one conversation from `stored`, its stored session id and read position (None:
    first sight)."""
    # lazy: only an agent with new lines is watched
    from memwarden.openclaw.sessions import reset_archives
    from memwarden.openclaw.transcripts import ReadPosition, TranscriptLocation

    current = session.transcript
    assert current is not None  # noqa: S101 - checked by the caller
    position = None
    if stored is not None:
        stored_id, stored_position = stored
        with suppress(ValueError):
            position = ReadPosition.from_json(stored_position)
        archives_settled = True
        if stored_id != session.session_id and position is not None:
            archives = reset_archives(agent.sessions_dir, stored_id) if agent.era == "file" else []
            for archive in archives:
                location = TranscriptLocation("file", archive, stored_id)
                _, settled = _watch_transcript(watcher, agent, session.key, location, position)
                archives_settled = archives_settled and settled
            position = None
        if not archives_settled:
            # Keep the previous session's id and position: the next run reads its archive again.
            _watch_transcript(watcher, agent, session.key, current, None)
            return
    end, _ = _watch_transcript(watcher, agent, session.key, current, position)
    if end is not None and not watcher.dry_run:
        watcher.context.state.set_position(
            ledger.CONSUMER, agent.id, session.key, session.session_id, end.to_json()
        )


def _watch_transcript(
    watcher: _Watcher,
    agent: Agent,
    session_key: str,
    location: TranscriptLocation,
    position: ReadPosition | None,
) -> tuple[ReadPosition | None, bool]:
    """Settle the new compactions of one transcript; return the position to store (None: keep
    the old one, something failed or nothing was read) and whether every one was settled."""
    # lazy: only an agent with new lines is watched
    from memwarden.openclaw.entries import Compaction
    from memwarden.openclaw.transcripts import has_new_data, read_since, read_tail, start_position

    # Only the lines that may be a compaction are parsed (most are messages, never used here);
    # when there is one, the whole transcript is read and parsed for its spans.
    if position is not None:
        if not has_new_data(location, position):
            return None, True
        read = read_since(location, position, only_lines_with=COMPACTION_LINE)
    else:  # first sight: a recent stretch, not the whole transcript
        read = read_tail(location, FIRST_SIGHT_ENTRIES, only_lines_with=COMPACTION_LINE)
    if not any(type(entry) is Compaction for entry in read.entries):
        return read.end, True
    # lazy: only a transcript with a new compaction is assessed
    from memwarden.compactions.assessment import compacted_spans

    whole = read_since(location, start_position(location))
    spans = compacted_spans(whole.entries)
    state = watcher.context.state
    done = ledger.known(state, agent.id, location.session_id)
    settled = True
    for index, span in enumerate(spans):
        entry_id = span.compaction.id or f"compaction-{index}"
        if entry_id in done:
            continue
        found = _settle(watcher, agent, session_key, location.session_id, span, entry_id)
        watcher.report.found.append(found)
        if found.error is not None:
            settled = False
            watcher.report.problems.append(found.line(watcher.dry_run))
    return (whole.end if settled else None), settled


def _settle(
    watcher: _Watcher,
    agent: Agent,
    session_key: str,
    session_id: str,
    span: CompactedSpan,
    entry_id: str,
) -> Found:
    """Assess one new compaction, keep its lost items and record it; never raises."""
    # lazy: only a new compaction is assessed
    from memwarden.compactions.assessment import assess

    found = Found(agent.id, session_key, session_id, None)
    try:
        found.assessment = assessment = assess(span, watcher.redactor.redact, entry_id)
        if assessment.lost:
            found.kept = watcher.keep(agent, assessment, session_key)
        if not watcher.dry_run:
            ledger.record(
                watcher.context.state,
                agent.id,
                session_key,
                session_id,
                assessment,
                kept_file=found.kept.file if found.kept else None,
                run_id=watcher.context.run_id,
            )
    except Exception as error:
        stopping.check()
        found.error = f"compaction {entry_id}: {describe_error(error)}"
        log.debug("compaction watch: %s %s failed", agent.id, session_key, exc_info=True)
    return found


def _keep_again(watcher: _Watcher, agent: Agent) -> None:
    """Write again the lost items of the agent's compactions whose daily log was rewound, from
    the ledger (the transcript is not read again: an assessment holds the lost items alone),
    and record where they are."""
    only = watcher.only_session
    for row in watcher.rewound[agent.id]:
        if only is not None and row.session_key.lower() != only.lower():
            continue
        assessment = recorded_assessment(row)
        found = Found(agent.id, row.session_key, row.session_id, assessment)
        try:
            found.kept = watcher.keep(agent, assessment, row.session_key)
            if not watcher.dry_run:
                ledger.mark_kept(watcher.context.state, row, found.kept.file)
        except Exception as error:  # noqa: BLE001 - one compaction never stops the others
            stopping.check()
            watcher.report.problems.append(
                f"compaction watch: agent {agent.id} {row.session_key}: compaction "
                f"{row.entry_id}: its lost items could not be written again to "
                f"{row.kept_file}: {describe_error(error)}"
            )
            continue
        watcher.report.again.append(found)


def recorded_assessment(row: ledger.Recorded) -> Assessment:
    """Return the assessment of a recorded compaction as the ledger keeps it (its lost items,
    not the others)."""
    # lazy: only the compactions of a rewound agent are read back
    from memwarden.compactions.assessment import Assessment

    moment = row.compacted_at
    return Assessment(
        entry_id=row.entry_id,
        compacted_at=None if moment is None else datetime.fromtimestamp(moment, UTC),
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        summary_chars=row.summary_chars,
        span_messages=row.span_messages,
        items=row.lost,
        lost=row.lost,
        severity=row.severity,
    )


def _when(assessment: Assessment) -> str:
    moment = assessment.compacted_at
    return utc_minute(moment) if moment else "an unknown time"
