"""What a checkpoint run tells: a summary, a line per session, the data behind --json."""

from __future__ import annotations

from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.process.runtime import JobResult

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
    result = JobResult(
        "checkpoint",
        data={"summary": summary, "agents": [outcome.to_json() for outcome in outcomes]},
        exit_code=1 if counts["failed"] else 0,
    )
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
        result.problems.extend(outcome.warnings)
    if result.problems:
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
