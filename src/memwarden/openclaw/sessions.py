"""The gateway's session stores, both eras, as one typed, read-only view.

File era (≤ 2026.7.x, Clawdbot): `<agent>/sessions/sessions.json`, an object keyed by session
key, with one `<sessionId>.jsonl` transcript per session (or the entry's `sessionFile`).
SQLite era (≥ 2026.8): table `session_nodes` in `<agent>/agent/openclaw-agent.sqlite`, with the
transcript as rows of `transcript_events`. Only what memwarden's jobs need is kept: never the
whole entry (its `skillsSnapshot` and `systemPromptReport` run to tens of kilobytes).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping
from datetime import datetime
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal, NamedTuple

import orjson

from memwarden.openclaw import sqlite_ro
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.fields import describe, epoch_ms, moment
from memwarden.openclaw.fields import integer as _integer
from memwarden.openclaw.fields import text as _text
from memwarden.openclaw.keys import SessionKind, classify, names_automation
from memwarden.openclaw.transcripts import TranscriptLocation
from memwarden.process.errors import StoreError, describe_os_error

log = logging.getLogger("memwarden.openclaw")

SessionFileKind = Literal[
    "live", "reset_archive", "deleted_archive", "trajectory", "checkpoint", "backup", "other"
]

_SKIPPED = "the session is skipped (fix or remove it while the gateway is stopped)"
_BY_KEY = attrgetter("key")
_BY_UPDATE = attrgetter("updated_at")
_SESSION_COLUMNS = ("session_key", "current_session_id", "entry_json")
_OPTIONAL_COLUMNS = ("status", "updated_at", "last_interaction_at")
# config/sessions/artifacts.ts (2026.7.35, 2026.9.6): `<name>.<reason>.<ISO stamp, ":" as "-">`,
# since 2026.9 optionally `.<32 hex>` and `.zst` (zstd-compressed archive, removed before).
_ARCHIVE = re.compile(
    r"^.+\.(?P<reason>reset|deleted|bak)\."
    r"(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z)(?:\.[0-9a-f]{32})?$",
    re.DOTALL,
)
_ARCHIVE_KINDS: dict[str, SessionFileKind] = {
    "reset": "reset_archive",
    "deleted": "deleted_archive",
    "bak": "backup",
}
_TRAJECTORY_FIRST_LINE = 64 * 1024
_STORE_BACKUP = re.compile(r"^sessions\.json\.bak\.\d+$")
_MIGRATION_BACKUP = re.compile(
    r"(?:\.migrated(?:\.\d+)?|\.jsonl\.pre-doctor-[a-z-]+-repair-[0-9TZ:.-]+\.bak)$"
)
_CHECKPOINT = re.compile(
    r"^.+\.checkpoint\.[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    r"\.jsonl$",
    re.IGNORECASE,
)


class SessionRecord(NamedTuple):
    """One session of one agent, as its store describes it.

    Token counts are those of the gateway: `total_tokens` is the context size of the last model
    call (None when unknown), `total_tokens_fresh` False when that count is stale (None when the
    store does not say), `context_tokens` the model's context window when the entry knows it.
    Times are Unix milliseconds.
    """

    agent_id: str
    key: str
    session_id: str
    kind: SessionKind
    updated_at: int | None
    status: str | None
    total_tokens: int | None
    total_tokens_fresh: bool | None
    context_tokens: int | None
    model: str | None
    transcript: TranscriptLocation | None
    last_interaction_at: int | None

    @property
    def updated(self) -> datetime | None:
        """The last update as an aware UTC datetime, or None when the store has none."""
        return moment(self.updated_at)

    @property
    def context_ratio(self) -> float | None:
        """`total_tokens / context_tokens`, or None when either is unknown."""
        if self.total_tokens is None or not self.context_tokens:
            return None
        return self.total_tokens / self.context_tokens


_LOGGED: set[str] = set()


def load_sessions(
    agent: Agent,
    problems: list[str] | None = None,
    *,
    automation: bool = True,
    transcripts: bool = True,
) -> list[SessionRecord]:
    """Given an agent, return its sessions, most recently updated first.

    With `automation` False, automation sessions (cron, sub-agents, …: see keys) are left out
    before anything else is done for them: in a store of 100k entries most are cron runs.
    With `transcripts` False, file-era records carry no transcript (none is looked for: a
    caller that only reads the store's counts skips listing a folder of 100k files).
    An entry that cannot be read (not an object, no text `sessionId`) is skipped, an odd field
    (`updatedAt` that is not a time) reads as unknown; each such problem is one line naming the
    file, the entry and the field, appended to `problems`, or logged as a warning without it.
    Raise StoreError (one line naming the file) if its sessions.json is corrupt, unreadable or
    missing beside transcripts, or its database cannot be read (after a brief retry while
    locked).
    """
    found: list[str] = []
    if agent.era == "sqlite":
        records = load_sqlite_store(agent.id, agent.sqlite_path, found, automation=automation)
    elif agent.era == "file":
        records = load_file_store(
            agent.id, agent.sessions_dir, found, automation=automation, transcripts=transcripts
        )
    else:
        _refuse_orphan_transcripts(agent.sessions_dir)
        records = []
    if problems is None:
        for problem in found:
            if problem not in _LOGGED:  # steps of one run that read a store again say it once
                _LOGGED.add(problem)
                log.warning("%s", problem)
    else:
        problems.extend(found)
    return sort_newest_first(records)


def sort_newest_first(records: list[SessionRecord]) -> list[SessionRecord]:
    """Given records, return them by `updated_at` descending (unknown last, then by key)."""
    # Stable sorts with C-level keys: a store of 100k entries sorts in milliseconds.
    dated = sorted((record for record in records if record.updated_at is not None), key=_BY_KEY)
    dated.sort(key=_BY_UPDATE, reverse=True)  # reverse keeps equal updates in key order
    undated = sorted((record for record in records if record.updated_at is None), key=_BY_KEY)
    return dated + undated


# --- file era ---------------------------------------------------------------------------------


def load_file_store(
    agent_id: str,
    sessions_dir: Path,
    problems: list[str] | None = None,
    *,
    automation: bool = True,
    transcripts: bool = True,
) -> list[SessionRecord]:
    """Given an agent id and its sessions folder, return the records of its sessions.json
    (without their transcripts unless `transcripts`).

    A missing sessions.json means no sessions. Raise StoreError if it cannot be read, is not
    JSON, or is not an object. Entries that cannot be read are skipped, with a line each in
    `problems` (see load_sessions).
    """
    store_path = sessions_dir / "sessions.json"
    try:
        raw = store_path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise StoreError(describe_os_error(error, "cannot read the session store")) from error
    try:
        store = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise StoreError(
            f"{store_path}: the session store is not valid JSON "
            f"(line {error.lineno}, column {error.colno})"
        ) from error
    if not isinstance(store, dict):
        raise StoreError(f"{store_path}: the session store is not a JSON object")
    noted = problems if problems is not None else []
    listing = _Listing(sessions_dir) if transcripts else None
    return [
        record
        for key, entry in store.items()
        if (automation or not names_automation(key))
        and (record := _file_record(agent_id, sessions_dir, listing, key, entry, noted)) is not None
    ]


def _file_record(
    agent_id: str,
    sessions_dir: Path,
    listing: _Listing | None,
    key: str,
    entry: object,
    problems: list[str],
) -> SessionRecord | None:
    """The record of one store entry; `listing` holds the sessions folder's files (None: the
    transcript is not looked for)."""
    if not isinstance(entry, dict):
        where = _entry_name(sessions_dir, key)
        problems.append(f"{where} is {describe(entry)}, not an object; {_SKIPPED}")
        return None
    session_id = _text(entry.get("sessionId"))
    if session_id is None:
        odd = describe(entry.get("sessionId"))
        where = _entry_name(sessions_dir, key)
        problems.append(f"{where}: sessionId is {odd}, not text; {_SKIPPED}")
        return None
    transcript = None
    if listing is not None:
        path = resolve_transcript_file(sessions_dir, session_id, entry.get("sessionFile"), listing)
        transcript = TranscriptLocation("file", path, session_id) if path else None
    record = _record(agent_id, key, session_id, transcript, entry, {})
    if record.updated_at is None and entry.get("updatedAt") is not None:
        where = _entry_name(sessions_dir, key)
        problems.append(_odd_time(where, "updatedAt", entry["updatedAt"]))
    return record


def _entry_name(sessions_dir: Path, key: str) -> str:
    return f'{sessions_dir / "sessions.json"}: entry "{key}"'


def _odd_time(where: str, name: str, value: object) -> str:
    return (
        f"{where}: {name} is {describe(value)}, not a time in milliseconds; memwarden takes "
        "the session's age as unknown"
    )


def _refuse_orphan_transcripts(sessions_dir: Path) -> None:
    """Raise StoreError when a sessions folder holds live transcripts but no sessions.json."""
    try:
        live = sum(
            classify_session_file(entry.name) == "live" for entry in os.scandir(sessions_dir)
        )
    except OSError:
        return
    if live:
        raise StoreError(
            f"{sessions_dir / 'sessions.json'}: missing, though the folder holds {live} "
            "transcript(s): memwarden cannot tell which session each belongs to; restore it "
            "from a sessions.json.bak.* copy there (with the gateway stopped)"
        )


class _Listing:
    """The files of a sessions folder, listed once, and which other spellings of its path name
    the same folder: the `sessionFile` the gateway wrote may reach it through a symlink or an
    alias of the state dir (macOS's /var is /private/var); a store's entries share that one
    parent, stat'ed once instead of each of their transcripts."""

    def __init__(self, folder: Path) -> None:
        self.names = _files_in(folder)
        self._folder = str(folder)
        self._aliases: dict[str, Path | None] = {self._folder: folder}

    def alias(self, path: str) -> Path | None:
        """Return `path` as a Path when it names the folder (None when it does not)."""
        if path not in self._aliases:
            try:
                same = os.path.samefile(path, self._folder)
            except (OSError, ValueError):
                same = False
            self._aliases[path] = Path(path) if same else None
        return self._aliases[path]


def resolve_transcript_file(
    sessions_dir: Path,
    session_id: str,
    session_file: object = None,
    listing: _Listing | None = None,
) -> Path | None:
    """Given a sessions folder, a session id and the entry's `sessionFile`, return the transcript.

    The entry's `sessionFile` (absolute, or relative to the sessions folder) wins over
    `<sessionId>.jsonl`. An absolute `sessionFile` that does not exist (the state dir was
    moved) is looked for by its name in the sessions folder. Return None if no candidate is a
    file (a session that has not written its transcript yet). `listing`, when given, holds the
    files of the sessions folder, so candidates in it are looked up there instead of asking
    the file system (a store of 100k entries would otherwise cost 100k `stat` calls).
    """
    folder = str(sessions_dir)
    for candidate in _transcript_candidates(folder, session_id, session_file):
        if listing is not None:
            parent, _, name = candidate.rpartition("/")
            listed = listing.alias(parent)
            if listed is not None:
                if name in listing.names:
                    return listed / name
                continue
        if os.path.isfile(candidate):
            return Path(candidate)
    return None


_RESET_NAMES: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {}


def _reset_names(folder: Path) -> tuple[str, ...]:
    """The names in `folder` that may be reset archives. A run asks once per session: the
    listing is kept while the folder's modification time and inode stay the same (a reset
    renames a transcript, which changes them), so a folder of 100k transcripts is listed once,
    not once per session."""
    try:
        info = os.stat(folder)
    except OSError:
        return ()
    stamp = (info.st_mtime_ns, info.st_ino)
    cached = _RESET_NAMES.get(str(folder))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    names = tuple(name for name in _files_in(folder) if ".reset." in name)
    _RESET_NAMES[str(folder)] = (stamp, names)
    return names


def _files_in(folder: Path) -> frozenset[str]:
    """Return the names of the files in `folder` (links to files included); empty if missing."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(entry.name for entry in entries if _is_file(entry))
    except OSError:
        return frozenset()


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _transcript_candidates(folder: str, session_id: str, session_file: object) -> Iterator[str]:
    """Yield the paths (as strings: this runs once per store entry) where the transcript may be,
    in order of preference; the caller usually stops at the first."""
    written = _text(session_file)
    if written is not None:
        if written.startswith("/"):
            yield written
            yield os.path.join(folder, os.path.basename(written.rstrip("/")))
        elif ".." not in written.split("/"):
            yield os.path.join(folder, written)
    if "/" not in session_id and session_id not in {".", ".."}:
        yield os.path.join(folder, f"{session_id}.jsonl")


# --- SQLite era -------------------------------------------------------------------------------


def load_sqlite_store(
    agent_id: str,
    database: Path,
    problems: list[str] | None = None,
    *,
    automation: bool = True,
) -> list[SessionRecord]:
    """Given an agent id and its database, return the records of its `session_nodes` table.

    Raise StoreError naming the database if it is not a file, stays locked, cannot be opened
    read-only, or has no `session_nodes` table. Rows that cannot be read are skipped, with a
    line each in `problems` (see load_sessions).
    """
    if database.is_dir():
        raise StoreError(
            f"{database}: a folder is where the gateway's agent database should be; the "
            "agent's sessions cannot be read"
        )
    rows = sqlite_ro.read_with_retry(database, _read_session_rows)
    if rows is None:
        raise StoreError(f"{database}: no session_nodes table (not a gateway agent database?)")
    noted = problems if problems is not None else []
    return [
        record
        for row in rows
        if (automation or not names_automation(str(row["session_key"])))
        and (record := _sqlite_record(agent_id, database, row, noted)) is not None
    ]


def _read_session_rows(connection: sqlite3.Connection) -> list[dict[str, Any]] | None:
    present = {row[1] for row in connection.execute("PRAGMA table_info(session_nodes)")}
    if not set(_SESSION_COLUMNS) <= present:
        return None
    columns = [*_SESSION_COLUMNS, *(name for name in _OPTIONAL_COLUMNS if name in present)]
    cursor = connection.execute(f"SELECT {', '.join(columns)} FROM session_nodes")  # noqa: S608
    return [dict(zip(columns, row, strict=True)) for row in cursor]


def _sqlite_record(
    agent_id: str, database: Path, row: Mapping[str, Any], problems: list[str]
) -> SessionRecord | None:
    key, session_id = _text(row["session_key"]), _text(row["current_session_id"])
    if key is None or session_id is None:
        column = "session_key" if key is None else "current_session_id"
        where = (
            f'{database}: session_nodes row "{key}"' if key else f"{database}: session_nodes row"
        )
        problems.append(f"{where}: {column} is {describe(row[column])}, not text; {_SKIPPED}")
        return None
    transcript = TranscriptLocation("sqlite", database, session_id)
    record = _record(agent_id, key, session_id, transcript, _entry(row), row)
    if record.updated_at is None and row.get("updated_at") is not None:
        where = f'{database}: session_nodes row "{key}"'
        problems.append(_odd_time(where, "updated_at", row["updated_at"]))
    return record


def _entry(row: Mapping[str, Any]) -> dict[str, Any]:
    try:
        entry = orjson.loads(row["entry_json"] or b"{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return entry if isinstance(entry, dict) else {}


# --- shared -----------------------------------------------------------------------------------


def _record(
    agent_id: str,
    key: str,
    session_id: str,
    transcript: TranscriptLocation | None,
    entry: Mapping[str, Any],
    columns: Mapping[str, Any],
) -> SessionRecord:
    """Build a record from the entry's fields; SQLite columns, when given, win over the entry."""
    field = entry.get
    return SessionRecord(
        agent_id=agent_id,
        key=key,
        session_id=session_id,
        kind=classify(key).kind,
        updated_at=_first_time(columns.get("updated_at"), field("updatedAt")),
        status=_text(columns.get("status")) or _text(field("status")),
        total_tokens=_integer(field("totalTokens")),
        total_tokens_fresh=_boolean(field("totalTokensFresh")),
        context_tokens=_integer(field("contextTokens")),
        model=_text(field("model")),
        transcript=transcript,
        last_interaction_at=_first_time(
            columns.get("last_interaction_at"), field("lastInteractionAt")
        ),
    )


def _first_time(first: object, second: object) -> int | None:
    number = epoch_ms(first)
    return number if number is not None else epoch_ms(second)


def _boolean(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


# --- files in a file-era sessions folder ------------------------------------------------------


def classify_session_file(name: str) -> SessionFileKind:
    """Given a file name in a sessions folder, return what it is.

    `live`: a transcript (`<sessionId>.jsonl`, `<sessionId>-topic-<id>.jsonl`);
    `reset_archive` / `deleted_archive`: `<transcript>.reset.<ts>` / `.deleted.<ts>` (optionally
    `.<hash>` and `.zst`); `trajectory`: `*.trajectory.jsonl`, `*.trajectory-path.json`;
    `checkpoint`: `*.checkpoint.<uuid>.jsonl`; `backup`: `sessions.json.bak.<n>`,
    `*.bak.<ts>` and migration copies; `other`: sessions.json itself, temp and lock files.
    """
    plain = name.removesuffix(".zst")
    if _STORE_BACKUP.match(plain) or _MIGRATION_BACKUP.search(plain):
        return "backup"
    archive = _ARCHIVE.match(plain)
    if archive:
        return _ARCHIVE_KINDS[archive["reason"]]
    if plain.endswith((".trajectory.jsonl", ".trajectory-path.json")):
        return "trajectory"
    if _CHECKPOINT.match(plain):
        return "checkpoint"
    if plain.endswith(".jsonl") and plain == name:
        return "live"
    return "other"


def archive_timestamp(name: str) -> datetime | None:
    """Given an archive file name (`….jsonl.reset.2026-11-22T05-35-07.925Z`), return its time.

    Return None if the name carries no reset, deleted or bak timestamp.
    """
    archive = _ARCHIVE.match(name.removesuffix(".zst"))
    if archive is None:
        return None
    date_part, _, time_part = archive["stamp"].partition("T")
    try:
        return datetime.fromisoformat(f"{date_part}T{time_part.replace('-', ':')}")
    except ValueError:
        return None


def reset_archives(sessions_dir: Path, session_id: str | None = None) -> list[Path]:
    """Given a sessions folder and a session id, return its reset archives, newest first.

    These are the transcripts a file-era reset renamed away (`<sessionId>.jsonl.reset.<ts>`,
    also for `<sessionId>-topic-<id>.jsonl`). Without a session id, return every reset archive
    of the folder. A missing folder has none.
    """
    found = [
        (stamp, name)
        for name in _reset_names(sessions_dir)
        if (session_id is None or (name.startswith(session_id) and _belongs_to(name, session_id)))
        and classify_session_file(name) == "reset_archive"
        and (stamp := archive_timestamp(name)) is not None
    ]
    found.sort(reverse=True)
    return [sessions_dir / name for _, name in found]


def reset_archives_with_times(sessions_dir: Path) -> list[tuple[Path, datetime | None]]:
    """Return every reset archive of a sessions folder with the time it was renamed."""
    return [(path, archive_timestamp(path.name)) for path in reset_archives(sessions_dir)]


def archive_session_id(archive: Path) -> str:
    """Given a reset archive's path, return the session id its name starts with."""
    name = archive.name[: archive.name.rfind(".reset.")].removesuffix(".jsonl")
    return name.split("-topic-", 1)[0]


def archive_owner(archive: Path) -> str | None:
    """Given a reset archive's path, return the session key (lower-cased) the first line of its
    trajectory names, or None when the gateway left no trajectory for it, its first line is
    longer than 64 KB or names no key.

    Gateways of the file era (2026.7.x) write `<sessionId>.trajectory.jsonl` beside a
    transcript that had turns; every line carries the run's `sessionKey` (the first is
    `session.started`). A reset renames the transcript but leaves the trajectory: the gateway's
    own record of which conversation the archive held. `memwarden maintain` may have
    gzip-compressed it (`….trajectory.jsonl.gz`).
    """
    plain = archive.with_name(f"{archive_session_id(archive)}.trajectory.jsonl")
    try:
        if plain.is_file():
            with plain.open("rb") as handle:
                first = handle.readline(_TRAJECTORY_FIRST_LINE)
        else:
            import gzip  # an archive `maintain` compressed: rare

            with gzip.open(plain.with_name(plain.name + ".gz"), "rb") as handle:
                first = handle.readline(_TRAJECTORY_FIRST_LINE)
        line = orjson.loads(first)
    except (OSError, EOFError, orjson.JSONDecodeError):
        return None
    key = line.get("sessionKey") if isinstance(line, dict) else None
    return key.strip().lower() if isinstance(key, str) and key.strip() else None


def _belongs_to(name: str, session_id: str) -> bool:
    transcript = name[: name.rfind(".reset.")]
    return transcript == f"{session_id}.jsonl" or transcript.startswith(f"{session_id}-topic-")
