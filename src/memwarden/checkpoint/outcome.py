"""The settings a run works with and what it reports for each session."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from memwarden.checkpoint.limits import Limits
from memwarden.checkpoint.positions import EventRecord, PositionUpdate

OUTCOMES = ("written", "unchanged", "skipped", "failed")


@dataclass(frozen=True)
class Settings:
    """The `checkpoint.*` options, typed."""

    mode: str = "all"
    staleness: timedelta = timedelta(hours=4)
    exclude: tuple[str, ...] = ()
    min_bytes: int = 0
    min_messages: int = 1
    tail_entries: int = 60
    handoff_min: int = 6
    daily_log: bool = True
    workers: int = 4
    limits: Limits = field(default_factory=Limits)
    active_context_template: str = ""
    daily_entry_template: str = ""

    @classmethod
    def from_config(cls, section: Any) -> Settings:
        """Given `config.checkpoint`, return the Settings."""
        return cls(
            mode=section.sessions,
            staleness=timedelta(hours=section.staleness_hours),
            exclude=tuple(section.exclude_sessions),
            min_bytes=section.min_transcript_bytes,
            min_messages=section.min_messages,
            tail_entries=section.tail_entries,
            handoff_min=section.handoff_min_messages,
            daily_log=section.daily_log,
            workers=section.workers,
            limits=Limits(
                recent_messages=section.recent_messages,
                message_max_chars=section.message_max_chars,
                max_files=section.max_files,
                max_todos=section.max_todos,
                summary_max_chars=section.summary_max_chars,
                daily_log_max_chars=section.daily_log_max_chars,
            ),
            active_context_template=section.active_context_template,
            daily_entry_template=section.daily_entry_template,
        )


@dataclass
class SessionOutcome:
    """What a checkpoint did for one session (or one agent, when no session was chosen).

    `outcome` is one of written, unchanged, skipped, failed; `ok` is False only for failed.
    `files` are the paths written (or, in a dry run, that would have been); `previews` the text
    a dry run would have written, by path; `snapshot` the memory-history snapshot taken after
    the writes (None when none was), `warnings` what went wrong after the files were written.
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
    previous_session_id: str | None = None
    # The kept window is this session's own, before a reset that kept its id (2026.8+).
    previous_in_place: bool = False
    dry_run: bool = False
    previews: dict[str, str] = field(default_factory=dict)
    snapshot: str | None = None
    warnings: list[str] = field(default_factory=list)
    update: PositionUpdate | None = field(default=None, repr=False)
    events: list[EventRecord] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.outcome != "failed"

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
            "previous_in_place": self.previous_in_place,
            "snapshot": self.snapshot,
        }
        if self.warnings:
            data["warnings"] = list(self.warnings)
        if self.dry_run:
            data["dry_run"] = True
            data["previews"] = dict(self.previews)
        return data
