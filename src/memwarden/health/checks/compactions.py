"""Lossy compactions: what the checkpoint job's compaction watch recorded in its ledger.

Each compaction recorded within `health.compaction_window_hours` (by the time of the compaction)
that lost items is a warning, critical when its summary was empty or near-empty for a large span
(see memwarden.compactions.assessment), naming the session and the first lost items with their
count and the daily log that now holds them. It resolves when it leaves the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from memwarden.compactions.assessment import lost_text
from memwarden.compactions.ledger import Recorded, recorded
from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, critical, ok, warning
from memwarden.process.readable import utc_minute

KEY = "compaction.lossy"


def check_compactions(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return a result per lossy compaction of the window
    (`compaction.lossy:<agent>:<session>:<compaction>`), else `compaction.lossy` ok."""
    hours = inputs.health.compaction_window_hours
    since = (inputs.now - timedelta(hours=hours)).timestamp()
    return grade_compactions(recorded(inputs.state, since=since), hours)


def grade_compactions(rows: Sequence[Recorded], hours: int) -> list[CheckResult]:
    """Given the compactions recorded in the window, oldest first, return the results."""
    lossy = [row for row in rows if row.severity != "ok"]
    if not lossy:
        return [ok(KEY, f"no lossy compaction in the last {hours} h", len(rows))]
    return [_result(row) for row in lossy]


def _result(row: Recorded) -> CheckResult:
    when = utc_minute(row.time)
    where = f"agent {row.agent_id}: the compaction of {row.session_key} at {when}"
    if row.severity == "critical":
        text = (
            f"{where} left a near-empty summary ({row.summary_chars} characters) of "
            f"{row.span_messages} message(s)"
        )
        if row.lost:
            text += f" and lost {lost_text(row.lost)}"
    else:
        text = f"{where} lost {lost_text(row.lost)}"
    if row.kept and row.kept_file:
        text += f" (kept in {row.kept_file})"
    grade = critical if row.severity == "critical" else warning
    return grade(
        f"{KEY}:{row.agent_id}:{row.session_key}:{row.entry_id}",
        text,
        len(row.lost),
        agent=row.agent_id,
        session=row.session_key,
        session_id=row.session_id,
        compaction=row.entry_id,
        summary_chars=row.summary_chars,
        lost=[item.label() for item in row.lost],
        kept_file=row.kept_file,
    )
