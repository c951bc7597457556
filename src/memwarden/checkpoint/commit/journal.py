"""The journal of renames a checkpoint committed to, and how a file is put in place.

`record` adds a run's staged files to `checkpoint_journal` in the transaction that saves their
read positions; `place` renames one of them (or, for a daily log someone changed since it was
read, appends the run's entries to their version; a rename that fails removes its temp file);
`clear` deletes the run's rows once the renames are durable and the agents' bootstrap manifests
refreshed. `roll_forward` finishes what killed runs left: at the start of every checkpoint, each
row of a run that is no longer alive is placed (its temp file intact), found done (the target
already holds it), appended again from the journal's own text (a daily log whose temp file is
gone), or given up (a handoff whose temp file is gone: it stays as it was, whole, and its
session no longer owns it, so the next run rewrites it). Its rows then pass to the live run,
which refreshes those agents' manifests before it clears them; the dead run's leftover temp
files are removed.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.checkpoint.commit.positions import forget_file
from memwarden.checkpoint.commit.staging import (
    WRITERS_FOLDER,
    StagedFile,
    listed_folders,
    remove_temp_files,
)
from memwarden.fs.files import (
    atomic_append,
    check_inside,
    flush_folder,
    identity,
    read_file,
    real_path,
    replace_or_remove,
    sha256_bytes,
)
from memwarden.process.errors import MemwardenError, describe_error

if TYPE_CHECKING:
    import sqlite3

    from memwarden.store.state import StateDB

log = logging.getLogger("memwarden.checkpoint")

_INSERT = "INSERT INTO checkpoint_journal VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_SELECT = (
    "SELECT agent_id, target, temp, workspace, size, sha256, before_json, appended, temp_inode "
    "FROM checkpoint_journal WHERE token = ? AND agent_id = ? ORDER BY rowid"
)
MemoryLock = Callable[[str], AbstractContextManager[object]]


def record(connection: sqlite3.Connection, token: str, files: Sequence[StagedFile]) -> None:
    """Add the staged files of run `token` to the journal (inside the caller's transaction)."""
    connection.executemany(_INSERT, [(token, *staged) for staged in files])


def clear(state: StateDB, token: str, agent_ids: Sequence[str]) -> None:
    """Delete the journal rows of run `token` for these agents: their files are in place and
    durable, and their manifests refreshed."""
    with state.transaction() as connection:
        connection.executemany(
            "DELETE FROM checkpoint_journal WHERE token = ? AND agent_id = ?",
            [(token, agent_id) for agent_id in agent_ids],
        )


def pending(state: StateDB, token: str, agent_id: str) -> list[StagedFile]:
    """Return the journal rows of run `token` for one agent, in the order they were staged."""
    return [StagedFile(*row) for row in state.connection.execute(_SELECT, (token, agent_id))]


def place(staged: StagedFile, *, verify: bool, real_root: Path | None = None) -> str:
    """Put one staged file in place; return what happened: "placed" (renamed), "appended" (the
    run's entries appended to a newer version of a daily log), "done" (the target already holds
    it) or "lost" (a handoff whose temp file is gone or not whole: the target stays as it is).

    `verify` checks the temp file against the journal first (a killed run's); the live run
    trusts the temp file it has just written and flushed. `real_root`: the workspace's real
    path, when the caller resolved it already. Raise OSError or UnsafePathError if the target
    cannot be written.
    """
    target, temp = Path(staged.target), Path(staged.temp)
    check_inside(target, Path(staged.workspace), real_root=real_root)
    if not verify or _intact(temp, staged):
        current = identity(target, follow_symlinks=False)
        if staged.appended is None or current == staged.before or current is None:
            # A failed rename removes the temp file, or every run would leave one more: the
            # row stays, and the next run takes it for a row whose temp file is gone.
            replace_or_remove(temp, target)
            return "placed"
        # Someone (the agent) changed the daily log since this run read it: keep their version.
        temp.unlink(missing_ok=True)
        atomic_append(target, staged.appended, root=Path(staged.workspace))
        return "appended"
    temp.unlink(missing_ok=True)
    current = read_file(target, missing=OSError)
    if current is not None and _holds(current[0], current[1].st_ino, staged):
        return "done"
    if staged.appended is None:
        return "lost"
    atomic_append(target, staged.appended, root=Path(staged.workspace))
    return "appended"


def _holds(current: bytes, inode: int, staged: StagedFile) -> bool:
    """Return whether a target holds what `staged` put there: its very bytes; for a daily log
    also its inode (renamed, then changed in place) or its entries in a newer version. A
    handoff's inode alone proves nothing: a temp file that is gone frees its number for a file
    created since."""
    if sha256_bytes(current) == staged.sha256:
        return True
    if staged.appended is None:
        return False
    return inode == staged.temp_inode or staged.appended.encode("utf-8") in current


@dataclass
class RollForward:
    """What the start of a run did with what killed runs left."""

    counts: dict[str, int] = field(default_factory=dict)
    agents: list[str] = field(default_factory=list)
    removed_temp_files: int = 0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Return one line for people when anything was done, else none."""
        if not self.counts and not self.removed_temp_files:
            return []
        done = ", ".join(f"{count} {what}" for what, count in sorted(self.counts.items()))
        removed = self.removed_temp_files
        what = (done or "no file") + (f"; {removed} temp file(s) removed" if removed else "")
        return [f"journal: finished what a stopped checkpoint left ({what})"]


def roll_forward(
    state: StateDB, storage_dir: Path, memory_lock: MemoryLock, *, taken_over_by: str
) -> RollForward:
    """Finish the journal of every checkpoint run that is no longer alive, hand its rows to
    run `taken_over_by` (which clears them once the agents' manifests are refreshed: see
    `clear`), and remove its temp files; return what was done, with the agents whose files it
    finished. Never raises for one agent's problem (a line in `problems`; its rows stay for the
    next run)."""
    report = RollForward()
    query = "SELECT DISTINCT token FROM checkpoint_journal"
    # Listed after the journal was read: a run that journaled since is alive, or dead and listed.
    journal_tokens = {row[0] for row in state.connection.execute(query)}
    writers, live = _writers(storage_dir)
    try:
        for token in sorted((journal_tokens - live) | set(writers)):
            folders = writers[token][1] if token in writers else []
            left = _roll_forward_run(state, token, memory_lock, report, taken_over_by)
            report.removed_temp_files += remove_temp_files(token, folders, keep=left)
            if not left and token in writers:
                writers[token][2].unlink(missing_ok=True)
    finally:
        for descriptor, _, _ in writers.values():
            os.close(descriptor)
    return report


def pending_count(state: StateDB, token: str | None = None) -> int:
    """Return how many renames the journal holds (of run `token`, or of every run)."""
    if token is None:
        return state.connection.execute("SELECT count(*) FROM checkpoint_journal").fetchone()[0]
    query = "SELECT count(*) FROM checkpoint_journal WHERE token = ?"
    return state.connection.execute(query, (token,)).fetchone()[0]


def _roll_forward_run(
    state: StateDB, token: str, memory_lock: MemoryLock, report: RollForward, taken_over_by: str
) -> frozenset[str]:
    """Place the rows of one dead run, agent by agent; return the temp files still journaled."""
    agents = [
        row[0]
        for row in state.connection.execute(
            "SELECT DISTINCT agent_id FROM checkpoint_journal WHERE token = ? ORDER BY agent_id",
            (token,),
        )
    ]
    left: set[str] = set()
    for agent_id in agents:
        try:
            with memory_lock(agent_id):
                rows = pending(state, token, agent_id)
                for staged in rows:
                    outcome = place(staged, verify=True)
                    report.counts[outcome] = report.counts.get(outcome, 0) + 1
                    if outcome == "lost":
                        # The handoff stays as it was: the session written there no longer owns it.
                        memory = real_path(Path(staged.workspace) / "memory")
                        forget_file(state, agent_id, os.path.relpath(staged.target, memory))
                for folder in sorted({os.path.dirname(staged.target) for staged in rows}):
                    flush_folder(folder)
                with state.transaction() as connection:
                    connection.execute(
                        "UPDATE checkpoint_journal SET token = ? WHERE token = ? AND agent_id = ?",
                        (taken_over_by, token, agent_id),
                    )
            if agent_id not in report.agents:
                report.agents.append(agent_id)
        except (OSError, MemwardenError) as error:
            left.update(staged.temp for staged in pending(state, token, agent_id))
            report.problems.append(
                f"checkpoint journal of agent {agent_id}: {describe_error(error)}; "
                "tried again by the next run"
            )
    return frozenset(left)


def _writers(storage_dir: Path) -> tuple[dict[str, tuple[int, list[str], Path]], set[str]]:
    """Return, by token, the writer files no live run holds: (locked descriptor, folders, path);
    and the tokens of the others (alive, or not to be opened).

    The caller closes the descriptors; while they are open no other run cleans up after them.
    """
    try:
        entries = list(os.scandir(storage_dir / WRITERS_FOLDER))
    except OSError:
        return {}, set()
    dead, live = {}, set()
    for entry in entries:
        if not entry.name.endswith(".lock"):
            continue
        token = entry.name.removesuffix(".lock")
        live.add(token)
        if not entry.is_file(follow_symlinks=False):
            continue
        try:
            descriptor = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            continue
        live.discard(token)
        dead[token] = (descriptor, listed_folders(descriptor), Path(entry.path))
    return dead, live


def _intact(temp: Path, staged: StagedFile) -> bool:
    found = read_file(temp, missing=OSError)
    return (
        found is not None
        and len(found[0]) == staged.size
        and sha256_bytes(found[0]) == staged.sha256
    )
