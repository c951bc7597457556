"""The `checkpoint.*` options, typed: what a run does, and how much of a digest the files show."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, NamedTuple


class Limits(NamedTuple):
    """Caps on what a handoff and a daily-log entry show, named as their `checkpoint.*` options;
    `handoff_max_chars` 0 is what the gateway's bootstrap caps leave a handoff."""

    message_max_chars: int = 600
    summary_max_chars: int = 3000
    daily_log_max_chars: int = 300
    handoff_max_chars: int = 0


class Settings(NamedTuple):
    """The `checkpoint.*` options, typed."""

    mode: str = "all"
    staleness: timedelta = timedelta(hours=4)
    exclude: tuple[str, ...] = ()
    min_bytes: int = 0
    min_messages: int = 1
    daily_log: bool = True
    workers: int = 0
    limits: Limits = Limits()
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
            daily_log=section.daily_log,
            workers=section.workers,
            limits=Limits(*(getattr(section, name) for name in Limits._fields)),
            active_context_template=section.active_context_template,
            daily_entry_template=section.daily_entry_template,
        )
