"""Read one session for a checkpoint: take its new lines into what the conversation holds, and
find the messages the daily log has not logged yet.

A conversation read before goes on from where it was read to, in the transcript of the session
id it had then: when the key has a new id since (a file-era reset), the rest of the earlier
transcript (its reset archive) first, then the new one from its first line. A conversation read
for the first time is read from its first line when it began while memwarden watched its agent
(up to WHOLE_FIRST_READ_BYTES); one that began before memwarden watched it (a first run on a
deployment, an upgrade) from its first line too when it is small (FIRST_SIGHT_WHOLE_BYTES), its
daily log getting only its recent lines' messages as before, else from its recent lines
(`reader.FIRST_READ_ENTRIES`); on the first run after a file-era reset, with those of the
archive the reset renamed, when the gateway's trajectory says it was this key's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from memwarden.checkpoint.digest.conversation import KEPT_MESSAGE_CHARS, Conversation
from memwarden.checkpoint.digest.extract import Excerpt, kept_messages
from memwarden.checkpoint.read import reader
from memwarden.checkpoint.records import StoredSession
from memwarden.openclaw.entries import SessionHeader
from memwarden.openclaw.sessions import archive_owner, archive_session_id, reset_archives_with_times
from memwarden.openclaw.transcripts import (
    ReadPosition,
    TranscriptLocation,
    read_since,
    start_position,
    transcript_size,
)

if TYPE_CHECKING:
    from types import SimpleNamespace

    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.sessions import SessionRecord

log = logging.getLogger("memwarden.checkpoint")

# A file-era reset renames the old transcript and creates the new one within milliseconds.
ARCHIVE_MATCH_WINDOW = timedelta(seconds=10)
# A conversation that began while memwarden watched its agent is read whole the first time, up
# to this size (a bound on that one read, not a cost of every run).
WHOLE_FIRST_READ_BYTES = 20_000_000
# A conversation that began before memwarden watched its agent is read whole the first time up
# to this size, so what it held since its beginning reaches its handoff; a longer one is read
# from its recent lines, so that a first run on a deployment costs what reading a tail costs.
FIRST_SIGHT_WHOLE_BYTES = 512 * 1024


@dataclass
class DailyMessages:
    """The messages of one session id that the daily log has not logged; `partial` when there
    may be more than were read."""

    session_id: str
    messages: list[Excerpt]
    partial: bool


@dataclass
class Material:
    """What was read for one session: the conversation, taken up to the end of its current
    transcript (`read`), and the messages for the daily log."""

    conversation: Conversation
    read: reader.TranscriptRead
    daily: list[DailyMessages] = field(default_factory=list)
    entries_read: int = 0
    earlier_session_id: str | None = None  # an earlier id of the key, read in this run


def gather(
    run: RunState,
    session: SessionRecord,
    stored: StoredSession | None,
    loaded: Conversation | None,
    keep_chars: int = KEPT_MESSAGE_CHARS,
) -> Material:
    """Read the session (and the rest of its earlier id's transcript, when the key has a new
    one) into the conversation, keeping `keep_chars` of its latest messages; return the
    Material. Raise StoreError if a transcript cannot be read. The session has a transcript."""
    location: TranscriptLocation = session.transcript  # type: ignore[assignment]
    conversation = loaded if loaded is not None else Conversation()
    conversation.keep_chars = keep_chars
    daily: list[DailyMessages] = []
    entries_read = 0
    earlier = _earlier_session(run, session, location, stored, conversation)
    if earlier is not None:
        earlier_location, earlier_position = earlier
        earlier_read, messages = _read(run, conversation, earlier_location, earlier_position)
        daily.append(_daily(run, earlier_read, messages, stored))
        entries_read += earlier_read.entries_read
    # The current transcript: on from where it was read to; from its first line when the key
    # had an earlier id that was read, or when the conversation began while memwarden watched
    # its agent; else (a first run on a deployment, an upgrade) its recent lines.
    whole = None
    if conversation.session_id == session.session_id and conversation.through is not None:
        position: ReadPosition | None = ReadPosition.from_json(conversation.through)
    else:
        whole = _whole_first_read(run, session, stored, conversation, earlier is not None)
        position = start_position(location) if whole is not None else None
    read, messages = _read(run, conversation, location, position)
    if whole == "older":  # its daily log gets what a first read of its recent lines gives
        daily.append(_logged_after(run, location, None, None))
    else:
        daily.append(_daily(run, read, messages, stored))
    earlier_id = earlier[0].session_id if earlier is not None else None
    lost = _rewound_archive(run, location, stored, {session.session_id, earlier_id})
    if lost is not None:
        daily.insert(0, lost)
    conversation.session_id = session.session_id
    conversation.through = read.end.to_json()
    return Material(
        conversation,
        read,
        daily,
        entries_read + read.entries_read,
        earlier_id,
    )


def _whole_first_read(
    run: RunState,
    session: SessionRecord,
    stored: StoredSession | None,
    conversation: Conversation,
    earlier_read: bool,
) -> str | None:
    """Return "new" when every line of the session's transcript is new to the conversation (the
    key's earlier id was read: a file-era reset; or it began while memwarden watched its agent
    and is not longer than WHOLE_FIRST_READ_BYTES), "older" when it began before memwarden
    watched it and is not longer than FIRST_SIGHT_WHOLE_BYTES, else None: its recent lines."""
    if earlier_read or conversation.session_id is not None:
        return "new"
    location = session.transcript
    if stored is not None or location is None:
        return None
    watched = run.watches(session.agent_id)
    limit = WHOLE_FIRST_READ_BYTES if watched else FIRST_SIGHT_WHOLE_BYTES
    if transcript_size(location, limit) > limit:
        return None
    return "new" if watched else "older"


def too_small(settings: SimpleNamespace, material: Material) -> str | None:
    """Given the `checkpoint.*` options, return why the session is too small, or None."""
    minimum = settings.min_transcript_bytes
    if minimum:
        size = transcript_size(material.read.location, minimum)
        if size < minimum:
            return f"transcript is {size:,} bytes, under the {minimum:,}-byte minimum"
    messages = material.conversation.message_count
    if messages == 0 and settings.min_messages > 0:
        return "no user or assistant message yet: nothing to hand off"
    if messages < settings.min_messages:
        return f"{messages} message(s), under the minimum of {settings.min_messages}"
    return None


def _read(
    run: RunState,
    conversation: Conversation,
    location: TranscriptLocation,
    position: ReadPosition | None,
) -> tuple[reader.TranscriptRead, list[Excerpt]]:
    """Take the transcript's lines after `position` (None: its recent lines) into the
    conversation; return the read and the messages kept from it."""
    redact, chars = run.redactor.redact, run.settings.message_max_chars
    kept: list[Excerpt] = []
    read = None
    if position is not None:
        read = reader.read_on(
            location, position, lambda e: kept.extend(conversation.take(e, redact, chars))
        )
    if read is None:  # a first read, or the position no longer fits (the file was replaced)
        after = conversation.last_at  # what is not newer was taken in before
        read = reader.read_recent(
            location,
            lambda e: kept.extend(conversation.take(e, redact, chars, after=after)),
        )
    if read.skipped_report:
        # On stderr, not a problem of the run: the rest of the transcript was checkpointed.
        log.warning("%s", read.skipped_report)
    return read, kept


def _daily(
    run: RunState,
    read: reader.TranscriptRead,
    kept: list[Excerpt],
    stored: StoredSession | None,
) -> DailyMessages:
    """Return the messages of a read that the daily log has not logged (see `reader`)."""
    session_id = read.location.session_id
    # Never logged; unless a history rewind took the daily log back to a time, any session's.
    if stored is None or (stored.session_id != session_id and not _rewound(stored)):
        return DailyMessages(session_id, kept, partial=not read.reached_start)
    position = stored.position  # parsed from its JSON each time it is read
    if read.whole_since and position == read.start:
        return DailyMessages(session_id, kept, partial=False)
    return _logged_after(run, read.location, position, stored.last_entry_at)


def _rewound(stored: StoredSession | None) -> TypeGuard[StoredSession]:
    """A rewind leaves no read position, only the time of the last entry the log kept."""
    return stored is not None and stored.last_entry_at is not None and stored.position is None


def _logged_after(
    run: RunState,
    location: TranscriptLocation,
    position: ReadPosition | None,
    last_entry_at: float | None,
) -> DailyMessages:
    """The messages of the transcript after `position`, or (None) of its last lines newer than
    `last_entry_at`, for the daily log (see `reader.new_since`)."""
    entries, partial = reader.new_since(location, position, last_entry_at)
    return DailyMessages(location.session_id, kept_messages(entries, run.redactor.redact), partial)


def _rewound_archive(
    run: RunState,
    location: TranscriptLocation,
    stored: StoredSession | None,
    read_ids: set[str | None],
) -> DailyMessages | None:
    """After a rewind to before a file-era reset: what the log lost of the session id the
    rewind went back to, when this run did not read that transcript anyway."""
    if not _rewound(stored) or stored.session_id in read_ids:
        return None
    found = reader.previous_location(location, stored.session_id)
    return _logged_after(run, found, None, stored.last_entry_at) if found is not None else None


def _earlier_session(
    run: RunState,
    session: SessionRecord,
    location: TranscriptLocation,
    stored: StoredSession | None,
    conversation: Conversation,
) -> tuple[TranscriptLocation, ReadPosition | None] | None:
    """Return the transcript of the key's earlier session id still to read, with where to read
    it from (None: its recent lines), or None when there is none."""
    if conversation.session_id is not None:
        earlier_id, through = conversation.session_id, conversation.through
    elif stored is not None:  # read before memwarden kept conversations: its recent lines
        earlier_id, through = stored.session_id, None
    else:
        return _matching_archive(run, session, location)
    if earlier_id == session.session_id:
        return None
    found = reader.previous_location(location, earlier_id)
    if found is None:
        return None
    position = ReadPosition.from_json(through) if through is not None else None
    return found, position


def _matching_archive(
    run: RunState, session: SessionRecord, location: TranscriptLocation
) -> tuple[TranscriptLocation, None] | None:
    """First run after a file-era reset: the archive renamed when this transcript began, and
    only one the gateway's trajectory says was this same session key's (never another
    conversation's, whose reset may have happened in the same seconds)."""
    if location.kind != "file":
        return None
    first = read_since(location, start_position(location), 3).entries
    started = next((entry.timestamp for entry in first if type(entry) is SessionHeader), None)
    archives = reset_archives_with_times(location.path.parent)
    known_elsewhere = {
        stored.session_id for stored in run.stored.values() if stored.session_key != session.key
    }
    for archive in archives_near(archives, started):
        old_id = archive_session_id(archive)
        if old_id in known_elsewhere or archive_owner(archive) != session.key.lower():
            continue
        return TranscriptLocation("file", archive, old_id), None
    return None


def archives_near(
    archives: Sequence[tuple[Path, datetime | None]], started_at: datetime | None
) -> list[Path]:
    """Given reset archives with their rename times and when the current transcript started,
    return the archives renamed within ARCHIVE_MATCH_WINDOW of that start, closest first.

    Time alone does not say whose archive it is: the caller keeps only one that belonged to the
    same session key.
    """
    if started_at is None:
        return []
    near = sorted(
        (abs(renamed_at - started_at), path.name, path)
        for path, renamed_at in archives
        if renamed_at is not None and abs(renamed_at - started_at) <= ARCHIVE_MATCH_WINDOW
    )
    return [path for _, _, path in near]
