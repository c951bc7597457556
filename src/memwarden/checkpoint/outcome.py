"""What a checkpoint reports: for each session (`SessionOutcome`), and for a run (`job_result`:
a summary, a line per session, the data behind --json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memwarden.checkpoint.records import EventRecord, PositionUpdate
from memwarden.process.runtime import JobResult


@dataclass
class SessionOutcome:
    """What a checkpoint did for one session (or one agent, when no session was chosen).

    `outcome` is one of written, unchanged, skipped, failed; `ok` is False only for failed.
    `files` are the paths written (or, in a dry run, that would have been); `previews` the text
    a dry run would have written, by path; `snapshot` the memory-history snapshot taken after
    the writes (None when none was), `warnings` what went wrong after the files were written;
    `kept_in_place` the file memwarden did not write that it left at the handoff's path (the
    handoff was not written).
    """

    agent: str
    workspace: str
    outcome: str
    reason: str
    session_key: str | None = None
    session_id: str | None = None
    files: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    redactions: dict[str, int] = field(default_factory=dict)
    # The id the key had before, whose transcript's rest this run read (a file-era reset).
    previous_session_id: str | None = None
    dry_run: bool = False
    previews: dict[str, str] = field(default_factory=dict)
    snapshot: str | None = None
    warnings: list[str] = field(default_factory=list)
    kept_in_place: str | None = None
    update: PositionUpdate | None = field(default=None, repr=False)
    events: list[EventRecord] = field(default_factory=list, repr=False)

    def finish(self, outcome: str, reason: str) -> None:
        self.outcome = outcome
        self.reason = reason

    @property
    def ok(self) -> bool:
        return self.outcome != "failed"

    @property
    def warning_lines(self) -> list[str]:
        """`warnings`, then the one about the file kept at the handoff's path, if any."""
        if self.kept_in_place is None:
            return list(self.warnings)
        kept = (
            f"{self.kept_in_place}: exists and was not written by memwarden (no `> - session:` "
            "line), so this conversation's handoff was not written; move it (your notes into "
            "MEMORY.md, say), then run `memwarden checkpoint --force`"
        )
        return [*self.warnings, kept]

    @property
    def error(self) -> str | None:
        return self.reason if self.outcome == "failed" else None

    def to_json(self) -> dict[str, Any]:
        """Return the outcome as plain JSON data for `--json` and the rotate job."""
        data = {
            "agent": self.agent,
            "workspace": self.workspace,
            "session_key": self.session_key,
            "session_id": self.session_id,
            "outcome": self.outcome,
            "reason": self.reason,
            "ok": self.ok,
            "error": self.error,
            "files": list(self.files),
            "counts": dict(self.counts),
            "redactions": dict(self.redactions),
            "previous_session_id": self.previous_session_id,
            "snapshot": self.snapshot,
        }
        if warnings := self.warning_lines:
            data["warnings"] = warnings
        if self.kept_in_place is not None:
            data["kept_in_place"] = self.kept_in_place
        if self.dry_run:
            data["dry_run"] = True
            data["previews"] = dict(self.previews)
        return data


OUTCOME_ORDER = ("written", "unchanged", "skipped", "failed")


def job_result(outcomes: list[SessionOutcome], dry_run: bool) -> JobResult:
    """Given a run's outcomes, return the JobResult: summary and per-session data for --json,
    one line per session (and the files a dry run would write), a problem per failure and per
    warning."""
    counts = {name: 0 for name in OUTCOME_ORDER}
    redactions = 0
    for outcome in outcomes:
        counts[outcome.outcome] += 1
        redactions += sum(outcome.redactions.values())
    agents = len({outcome.agent for outcome in outcomes})
    summary = {"agents": agents, "sessions": len(outcomes), **counts, "redactions": redactions}
    if dry_run:
        summary["dry_run"] = True
    data = {"summary": summary, "agents": [outcome.to_json() for outcome in outcomes]}
    result = JobResult("checkpoint", data=data)
    prefix = "checkpoint (dry run)" if dry_run else "checkpoint"
    totals = ", ".join(f"{counts[name]} {name}" for name in OUTCOME_ORDER)
    masked = f"; {redactions} secret(s) masked" if redactions else ""
    result.lines.append(f"{prefix}: {agents} agent(s), {totals}{masked}")
    for outcome in outcomes:
        result.lines.append(_line(outcome))
        for path, text in outcome.previews.items():
            result.lines.append(f"    --- {path} (would be written) ---")
            result.lines.extend(f"    {line}" for line in text.rstrip("\n").split("\n"))
        if outcome.outcome == "failed":
            result.problems.append(f"checkpoint of agent {outcome.agent} failed: {outcome.reason}")
        result.problems.extend(outcome.warning_lines)
    if result.problems:  # a failure's, or a warning's
        result.exit_code = 1
    return result


def _line(outcome: SessionOutcome) -> str:
    key = outcome.session_key or "-"
    details = []
    if outcome.counts:
        details.append(f"{outcome.counts.get('messages', 0)} messages")
        if "new_messages" in outcome.counts:
            details.append(f"{outcome.counts['new_messages']} new")
    if outcome.previous_session_id and outcome.outcome == "written":
        details.append(f"and the rest of previous session {outcome.previous_session_id}")
    masked = sum(outcome.redactions.values())
    if masked:
        details.append(f"{masked} masked")
    suffix = f" ({', '.join(details)})" if details and outcome.outcome != "unchanged" else ""
    return f"  {outcome.agent}  {key}  {outcome.outcome}: {outcome.reason}{suffix}"
