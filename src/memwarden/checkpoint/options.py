"""The `checkpoint.*` options, typed: what a run does, and how much of a digest the files show."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Caps on what ACTIVE_CONTEXT.md and a daily-log entry show."""

    recent_messages: int = 5
    message_max_chars: int = 600
    max_files: int = 20
    max_todos: int = 10
    summary_max_chars: int = 3000
    daily_log_max_chars: int = 300


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
    workers: int = 0
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
