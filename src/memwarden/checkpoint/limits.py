"""How much of a digest goes into the files (from the `checkpoint.*` options)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Caps on what ACTIVE_CONTEXT.md and a daily-log entry show."""

    recent_messages: int = 5
    message_max_chars: int = 600
    max_files: int = 20
    max_todos: int = 10
    summary_max_chars: int = 3000
    daily_log_max_chars: int = 300
