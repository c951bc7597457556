"""Which file-era transcripts to gzip, and which gzipped ones to delete.

A transcript is compressed only when no session's store points at it, it does not belong to a
session's current id, and neither its modification time nor the time in its name is recent. The
compressed copy keeps the transcript's modification time, so deletion counts from the same day.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memwarden.maintenance.facts import FileFacts
from memwarden.openclaw.sessions import archive_timestamp, classify_session_file

DAY = 86400.0
GZIP_SUFFIX = ".gz"
# Kinds of session-folder files that are transcripts (or a session's side files) worth keeping.
TRANSCRIPT_KINDS = frozenset(
    {"live", "reset_archive", "deleted_archive", "trajectory", "checkpoint"}
)
# Of those, the kinds a running session may still append to.
LIVE_KINDS = frozenset({"live", "trajectory", "checkpoint"})


@dataclass(frozen=True)
class RetentionAction:
    """Compress or delete one file of a sessions folder, and why."""

    action: Literal["compress", "delete"]
    name: str
    size: int
    age_days: float


def plan_transcript_retention(
    files: list[FileFacts],
    current_names: set[str],
    current_ids: set[str],
    now: float,
    compress_after_days: int,
    delete_after_days: int,
) -> list[RetentionAction]:
    """Given a sessions folder's files and what the store points at, return what to do.

    `current_names` are the file names of the sessions' transcripts, `current_ids` their session
    ids. A file is compressed when it is a transcript kind, not `.zst`/`.gz`, not current, and
    older than `compress_after_days`; a `.gz` transcript is deleted when older than
    `delete_after_days` (0: never).
    """
    actions = []
    for fact in files:
        age_days = (now - _last_change(fact)) / DAY
        if fact.name.endswith(GZIP_SUFFIX):
            plain = fact.name.removesuffix(GZIP_SUFFIX)
            if (
                delete_after_days > 0
                and classify_session_file(plain) in TRANSCRIPT_KINDS
                and age_days >= delete_after_days
            ):
                actions.append(RetentionAction("delete", fact.name, fact.size, age_days))
            continue
        if fact.name.endswith(".zst") or age_days < compress_after_days:
            continue
        if _is_current(fact.name, current_names, current_ids):
            continue
        if classify_session_file(fact.name) in TRANSCRIPT_KINDS:
            actions.append(RetentionAction("compress", fact.name, fact.size, age_days))
    return actions


def _is_current(name: str, current_names: set[str], current_ids: set[str]) -> bool:
    if name in current_names:
        return True
    if classify_session_file(name) not in LIVE_KINDS:
        return False
    return any(name.startswith(session_id) for session_id in current_ids)


def _last_change(fact: FileFacts) -> float:
    """The later of the file's mtime and the time in its archive name (when it was archived)."""
    stamp = archive_timestamp(fact.name.removesuffix(GZIP_SUFFIX))
    return max(fact.mtime, stamp.timestamp()) if stamp else fact.mtime
