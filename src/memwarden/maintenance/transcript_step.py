"""Step 1 of maintain: compress old file-era transcripts, delete old compressed ones.

A transcript is compressed only when no session's store points at it, it does not belong to a
session's current id, and neither its modification time nor the time in its name is recent. The
compressed copy keeps the transcript's modification time, so deletion counts from the same day.

A crash leaves the original or both, never neither: the compressed copy is written to a temporary
file beside the original, read back in full (gzip checks its CRC and length), given the
original's modification time, linked into place (never over a file already there), and only
then is the original deleted. A transcript that changes meanwhile is left alone.
"""

from __future__ import annotations

import gzip
import os
import shutil
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memwarden.fs.files import FILE_MODE, check_inside, fsync_dir, link_new, remove_stale_temp_files
from memwarden.maintenance.facts import FileFacts, list_files
from memwarden.maintenance.report import StepReport
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.sessions import archive_timestamp, classify_session_file, load_sessions
from memwarden.process.errors import MemwardenError, describe_error
from memwarden.process.readable import size_text
from memwarden.process.runtime import JobContext

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


CHUNK = 1 << 20


class TranscriptChanged(MemwardenError):
    """The file changed while it was being compressed: something still writes to it."""


def gzip_in_place(path: Path) -> int:
    """Given a transcript, replace it by `<name>.gz` and return the compressed size in bytes.

    Raise TranscriptChanged if it was modified meanwhile (the original is kept), UnsafePathError
    if it or its target is a symlink, OSError if it cannot be read or written.
    """
    folder = path.parent
    check_inside(path, folder)
    target = check_inside(path.with_name(path.name + GZIP_SUFFIX), folder)
    if os.path.lexists(target):
        if not _unpacks_to(target, path):
            raise MemwardenError(compressed_name_taken(path))
        path.unlink()  # a killed run's copy (or one made by hand) holds it already
        fsync_dir(folder)
        return target.stat().st_size
    before = os.stat(path, follow_symlinks=False)
    temp = folder / f".{target.name}.{os.getpid()}.tmp"
    try:
        _write_gzip(path, temp, int(before.st_mtime))
        after = os.stat(path, follow_symlinks=False)
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise TranscriptChanged(f"{path}: changed while being compressed; left as it is")
        _verify(temp, before.st_size, path)
        os.utime(temp, ns=(before.st_atime_ns, before.st_mtime_ns))
        if not link_new(temp, target):
            raise MemwardenError(compressed_name_taken(path))
    finally:
        temp.unlink(missing_ok=True)
    path.unlink()
    fsync_dir(folder)
    return target.stat().st_size


def _write_gzip(source: Path, temp: Path, mtime: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(temp, flags, FILE_MODE)
    with os.fdopen(descriptor, "wb") as raw:
        reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        with (
            os.fdopen(reader, "rb") as original,
            gzip.GzipFile(filename=source.name, mode="wb", fileobj=raw, mtime=mtime) as packed,
        ):
            shutil.copyfileobj(original, packed, CHUNK)
        raw.flush()
        os.fsync(raw.fileno())


def _name_held_by_another(path: Path) -> bool:
    """Return whether `<name>.gz` is there and is not a copy of the transcript."""
    packed = path.with_name(path.name + GZIP_SUFFIX)
    return os.path.lexists(packed) and not _unpacks_to(packed, path)


def _unpacks_to(packed: Path, plain: Path) -> bool:
    """Return whether the gzip file `packed` unpacks to the bytes of `plain` (False when it is
    not a regular gzip file, or cannot be read)."""
    if not packed.is_file() or packed.is_symlink():
        return False
    try:
        with gzip.open(packed, "rb") as unpacked, plain.open("rb") as original:
            while True:
                chunk = unpacked.read(CHUNK)
                if chunk != original.read(CHUNK):
                    return False
                if not chunk:
                    return True
    except (OSError, EOFError, zlib.error):
        return False


def compressed_name_taken(path: Path) -> str:
    """Why a transcript is not compressed: a file already holds the name of its copy."""
    return (
        f"{path.name}{GZIP_SUFFIX}: a file of that name is already there, and memwarden never "
        f"replaces one: compare the two and move one away; {path.name} is left as it is"
    )


def _verify(temp: Path, expected_size: int, source: Path) -> None:
    total = 0
    with gzip.open(temp, "rb") as packed:
        while chunk := packed.read(CHUNK):
            total += len(chunk)
    if total != expected_size:
        raise TranscriptChanged(f"{source}: compressed copy does not match; left as it is")


def transcripts_step(context: JobContext, agents: list[Agent], dry_run: bool) -> StepReport:
    """Apply transcript retention to each file-era agent; one agent's failure spares the others."""
    report = StepReport("transcripts")
    maintain = context.config.maintain
    totals = {"compressed": 0, "deleted": 0, "bytes_saved": 0}
    per_agent = []
    for agent in agents:
        if agent.era != "file":
            continue
        # The `.<transcript>.gz.<pid>.tmp` files a maintain run killed while compressing left.
        leftovers = remove_stale_temp_files(
            agent.sessions_dir, of=lambda target: target.endswith(GZIP_SUFFIX), dry_run=dry_run
        )
        if leftovers:
            verb = "would remove" if dry_run else "removed"
            report.lines.append(
                f"  {agent.id}: {verb} {len(leftovers)} temp file(s) a killed run left: "
                + ", ".join(leftovers)
            )
        try:
            sessions = load_sessions(agent)
            files = list_files(agent.sessions_dir)
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {agent.id}: transcripts left as they are: {describe_error(error)}")
            continue
        current = [
            s.transcript.path for s in sessions if s.transcript and s.transcript.kind == "file"
        ]
        actions = plan_transcript_retention(
            files,
            # By name wherever it lives: a store may spell the sessions folder another way.
            current_names={path.name for path in current},
            current_ids={session.session_id for session in sessions},
            now=context.now().timestamp(),
            compress_after_days=maintain.compress_transcripts_after_days,
            delete_after_days=maintain.delete_compressed_after_days,
        )
        done = _apply(report, agent, actions, dry_run, maintain.delete_compressed_after_days)
        per_agent.append({"agent": agent.id, **done})
        for key in totals:
            totals[key] += done[key]
        if (done["compressed"] or done["deleted"]) and not dry_run:
            context.state.record_event(
                "transcripts.retention",
                job="maintain",
                run_id=context.run_id,
                agent_id=agent.id,
                data=done,
            )
    if dry_run:
        report.lines.append(
            f"transcripts: would compress {totals['compressed']} and delete {totals['deleted']} "
            f"(deleting frees {size_text(totals['bytes_saved'])})"
        )
    else:
        report.lines.append(
            f"transcripts: {totals['compressed']} compressed, {totals['deleted']} deleted, "
            f"saved {size_text(totals['bytes_saved'])}"
        )
    report.data = {**totals, "agents": per_agent}
    return report


def _apply(
    report: StepReport,
    agent: Agent,
    actions: list[RetentionAction],
    dry_run: bool,
    delete_after_days: int,
) -> dict[str, int]:
    done = {"compressed": 0, "deleted": 0, "bytes_saved": 0}
    for action in actions:
        path = agent.sessions_dir / action.name
        compress = action.action == "compress"
        age = f"{action.age_days:.0f} days old"
        if compress and 0 < delete_after_days <= action.age_days:
            age += f"; past {delete_after_days} days, so a later run deletes it"
        try:
            if dry_run and compress and _name_held_by_another(path):
                raise MemwardenError(compressed_name_taken(path))
            if dry_run:
                saved = 0 if compress else action.size
            elif compress:
                saved = action.size - gzip_in_place(path)
            else:
                path.unlink()
                saved = action.size
        except TranscriptChanged as error:
            report.lines.append(f"  {agent.id}: skipped {action.name}: {error.message}")
            continue
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {agent.id}: {action.name}: {describe_error(error)}")
            continue
        past = "compressed" if compress else "deleted"
        done[past] += 1
        done["bytes_saved"] += saved
        if dry_run:
            shown = f"would {action.action} {action.name} ({size_text(action.size)}, {age})"
        else:
            shown = f"{past} {action.name} ({age}, saved {size_text(saved)})"
        report.lines.append(f"  {agent.id}: {shown}")
    return done
