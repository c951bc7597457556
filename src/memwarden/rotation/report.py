"""What a rotate run prints and returns: one line and one JSON item per session, a summary."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memwarden.process.errors import EXIT_FAILURES
from memwarden.process.runtime import JobResult
from memwarden.rotation.policy import Decision, Policy
from memwarden.settings.urls import shown_url

LABELS = {
    "rotated": "rotated",
    "failed": "FAILED",
    "postponed": "postponed",
    "skipped": "skip",
    "would_rotate": "would rotate",
}


@dataclass
class Outcome:
    """What happened to one decided session.

    `status` is one of LABELS: rotated, failed, postponed (wanted but not done this run),
    skipped (not wanted), would_rotate (dry run).
    """

    status: str
    detail: str
    new_session_id: str | None = None
    new_revision: str | None = None
    checkpoint: dict[str, Any] = field(default_factory=dict)


@dataclass
class RotationReport:
    """The sessions of one run as they are acted on; `result()` makes the JobResult."""

    url: str
    dry_run: bool
    policy: Policy
    listed: int
    items: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, decision: Decision, outcome: Outcome) -> None:
        """Add one session: its decision and what was done."""
        self.items.append(
            {**decision.to_json(), **asdict(outcome), "checkpoint": outcome.checkpoint or None}
        )
        text = decision.reason
        if outcome.detail != decision.reason:
            text = f"{decision.reason}: {outcome.detail}"
        self.lines.append(f"{LABELS[outcome.status]:<12} {decision.key}  {text}")
        if outcome.status == "failed":
            self.problems.append(f"rotate {decision.key}: {outcome.detail}")
        # What its checkpoint met besides (a stopped run's files, a manifest not refreshed).
        self.problems += outcome.checkpoint.get("warnings", [])

    def result(self) -> JobResult:
        """Return the JobResult: exit code 1 when a wanted rotation failed."""
        counts = dict.fromkeys(LABELS, 0)
        for item in self.items:
            counts[item["status"]] += 1
        prefix = "dry run: " if self.dry_run else ""
        header = f"{prefix}gateway {shown_url(self.url)}: {self.listed} session(s) listed"
        totals = ", ".join(
            f"{count} {status.replace('_', ' ')}" for status, count in counts.items() if count
        )
        policy = asdict(self.policy)
        policy.pop("automation_patterns")
        data = {
            "gateway": shown_url(self.url),
            "dry_run": self.dry_run,
            "policy": policy,
            "sessions": self.items,
            "summary": {"listed": self.listed, **counts},
        }
        return JobResult(
            job="rotate",
            data=data,
            lines=[header, *self.lines, totals or "nothing listed"],
            problems=self.problems,
            exit_code=EXIT_FAILURES if counts["failed"] else 0,
        )
