"""Read what a checkpoint of one session needs: the tail of its transcript, what is new since
the last run, and, while the live window is thin after a reset, the window before it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memwarden.checkpoint import handoff, reader
from memwarden.checkpoint.extract import WindowDigest, digest_window
from memwarden.checkpoint.options import Settings
from memwarden.checkpoint.records import StoredSession
from memwarden.checkpoint.render import PreviousWindow
from memwarden.openclaw.entries import split_windows
from memwarden.openclaw.transcripts import TranscriptLocation

if TYPE_CHECKING:
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.sessions import SessionRecord

log = logging.getLogger("memwarden.checkpoint")


@dataclass
class Material:
    """What was read and extracted for one session."""

    read: reader.TranscriptRead
    current: WindowDigest
    previous: PreviousWindow | None
    previous_bytes: int
    old_new_entries: list[Any]
    old_partial: bool
    previous_entries_read: int = 0
    old_session_id: str | None = None


def gather(
    run: RunState,
    session: SessionRecord,
    location: TranscriptLocation,
    stored: StoredSession | None,
    same: StoredSession | None,
) -> Material:
    """Read the session (and its previous window when needed) and extract the digests."""
    settings = run.settings
    read, current = _read_enough(run, location, same)
    _report_skipped_lines(read)
    old_read, old_id, old_reset_at = _read_old_session(run, session, location, stored, same)
    _report_skipped_lines(old_read)
    material = Material(read, current, None, 0, [], False)
    if old_read is not None:
        material.old_new_entries = old_read.new_entries
        material.old_partial = old_read.new_partial
        material.old_session_id = old_id
    if not handoff.needs_handoff(len(current.messages), settings.handoff_min):
        return material
    in_place = _earlier_in_place(run, read)
    if in_place is not None:
        digest = digest_window(
            in_place.entries, settings.limits.max_files, redact=run.redactor.redact
        )
        material.previous = PreviousWindow(
            digest, session.session_id, in_place.reset_at, in_place=True
        )
        return material
    if old_read is None and stored is None:
        old_read, old_id, old_reset_at = _read_matching_archive(run, session, read)
        _report_skipped_lines(old_read)
        if old_read is not None:
            # Never checkpointed before: the archive's messages were never logged either.
            material.old_new_entries = old_read.new_entries
            material.old_partial = old_read.new_partial
            material.old_session_id = old_id
    if old_read is not None and old_id is not None:
        old_window = old_read.window or _handoff_window(old_read)
        digest = digest_window(old_window, settings.limits.max_files, redact=run.redactor.redact)
        if digest.messages:
            material.previous = PreviousWindow(digest, old_id, old_reset_at)
            material.previous_bytes = old_read.bytes_seen
            material.previous_entries_read = old_read.entries_read
    return material


def _report_skipped_lines(read: reader.TranscriptRead | None) -> None:
    """Warn, on stderr, of the lines of a transcript skipped since the last run (stderr, not a
    problem of the run: the rest of the transcript was read and checkpointed)."""
    if read is not None and read.skipped_report:
        log.warning("%s", read.skipped_report)


def _read_enough(
    run: RunState, location: TranscriptLocation, same: StoredSession | None
) -> tuple[reader.TranscriptRead, WindowDigest]:
    """Read the tail; when its window holds fewer requests than ACTIVE_CONTEXT.md lists and
    goes on before the tail, read four times as far back, once (long tool loops)."""
    settings = run.settings
    position, last_at = (same.position, same.last_entry_at) if same else (None, None)
    read = reader.read_session(location, position, last_at, settings.tail_entries)
    current = digest_window(read.window, settings.limits.max_files, redact=run.redactor.redact)
    short = len(current.requests) < settings.limits.recent_messages
    if short and not read.reached_start and not read.before_window:
        read = reader.read_session(location, position, last_at, settings.tail_entries * 4)
        current = digest_window(read.window, settings.limits.max_files, redact=run.redactor.redact)
    return read, current


def _handoff_window(read: reader.TranscriptRead) -> list[Any]:
    """Return the last window with messages of an earlier session's transcript."""
    earlier = handoff.earlier_window(read.before_window)
    return earlier.entries if earlier else []


def _earlier_in_place(run: RunState, read: reader.TranscriptRead) -> handoff.EarlierWindow | None:
    """Return the window before an in-place reset; when the tail holds no earlier window with
    messages and does not reach the transcript's start, read four times further back, once."""
    earlier = handoff.earlier_window(read.before_window) if read.before_window else None
    if earlier is not None or read.reached_start:
        return earlier
    entries, _ = reader.read_more(read.location, run.settings.tail_entries * 4)
    before, _ = split_windows(entries)
    return handoff.earlier_window(before) if before else None


def _read_old_session(
    run: RunState,
    session: SessionRecord,
    location: TranscriptLocation,
    stored: StoredSession | None,
    same: StoredSession | None,
) -> tuple[reader.TranscriptRead | None, str | None, datetime | None]:
    """Read the session this key had before a new id, when the state DB knows it."""
    if stored is not None and same is None:
        old_id, position, last_at = stored.session_id, stored.position, stored.last_entry_at
    elif same is not None and isinstance(same.data.get("previous_session_id"), str):
        old_id, position, last_at = same.data["previous_session_id"], None, None
        if old_id == session.session_id:
            return None, None, None
    else:
        return None, None, None
    found = reader.previous_location(location, old_id)
    if found is None:
        return None, None, None
    location, reset_at = found
    old_read = reader.read_session(location, position, last_at, run.settings.tail_entries)
    if position is None and same is not None:  # read before: nothing in it is new
        old_read.new_entries, old_read.new_partial = [], False
        old_read.skipped_report = None
    return old_read, old_id, reset_at


def _read_matching_archive(
    run: RunState, session: SessionRecord, read: reader.TranscriptRead
) -> tuple[reader.TranscriptRead | None, str | None, datetime | None]:
    """First run after a file-era reset: find the archive renamed when this transcript began,
    and only one the gateway's trajectory says was this same session key's (never another
    conversation's, whose reset may have happened in the same seconds)."""
    if read.location.kind != "file" or not read.reached_start:
        return None, None, None
    started = handoff.header_time(read.before_window + read.window)
    archives = reader.reset_archives_with_times(read.location.path.parent)
    times = dict(archives)
    known_elsewhere = {
        stored.session_id for stored in run.stored.values() if stored.session_key != session.key
    }
    for archive in handoff.archives_near(archives, started):
        old_id = reader.archive_session_id(archive)
        if old_id in known_elsewhere or reader.archive_owner(archive) != session.key.lower():
            continue
        location = TranscriptLocation("file", archive, old_id)
        old_read = reader.read_session(location, None, None, run.settings.tail_entries)
        return old_read, old_id, times.get(archive)
    return None, None, None


def too_small(settings: Settings, material: Material) -> str | None:
    """Return why the session is too small to checkpoint, or None."""
    minimum = settings.min_bytes
    size = reader.transcript_bytes(material.read, minimum) + material.previous_bytes
    if size < minimum:
        return f"transcript is {size:,} bytes, under the {minimum:,}-byte minimum"
    messages = len(material.current.messages)
    if material.previous is not None:
        messages += len(material.previous.digest.messages)
    if messages == 0 and settings.min_messages > 0:
        return "no user or assistant message yet: nothing to hand off"
    if messages < settings.min_messages:
        return f"{messages} message(s), under the minimum of {settings.min_messages}"
    return None
