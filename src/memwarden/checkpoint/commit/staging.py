"""The files a run will write, staged as temp files beside their targets and put in place later.

Files go to `<workspace>/memory/` (0700, created when missing: `fs.files.memory_folder`), never
outside the workspace. A workspace that does not exist is an error for that agent: the gateway
creates workspaces, memwarden does not invent them.

A run does not replace files as it goes: each agent's handoffs and daily-log appends are
collected (`AgentFiles`), then written as temp files (`.<name>.mw-<run>-<n>.tmp`, 0600, each
fsynced by the process that wrote it) once the agent is done. `durable_run` records them in the
state DB's journal with the positions, and renames them.

Every temp file carries its run's token. A live run holds an exclusive lock on its writer file
(`<storage>/checkpoint-writers/<token>.lock`), which also lists the folders it wrote temp files
into; a run killed part way leaves that file unlocked, and the next run removes the temp files it
lists that no journal row still needs.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import orjson

from memwarden.fs.files import (
    FILE_MODE,
    check_inside,
    ensure_dir,
    read_file,
    remove_files,
    sha256_bytes,
    status_identity,
    write_temp,
)
from memwarden.process.errors import MemwardenError

WRITERS_FOLDER = "checkpoint-writers"
_RUN_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


class StagedFile(NamedTuple):
    """One file a run writes: its temp file, what it holds, and what the target was when read;
    its fields are the columns of the journal's row (`journal`), in order.

    `before_json` is the target's [inode, size, mtime in ns] when it was read, as JSON (None:
    missing); `appended` the text an append adds (None for a file replaced whole), appended
    again to the target's newer version if someone changed it before the rename.
    """

    agent_id: str
    target: str
    temp: str
    workspace: str
    size: int
    sha256: str
    before_json: str | None
    appended: str | None
    temp_inode: int | None = None

    @property
    def before(self) -> list[int] | None:
        return orjson.loads(self.before_json) if self.before_json is not None else None


class Writer:
    """The temp files of one run: their names, and the lock that says the run is alive."""

    def __init__(self, storage_dir: Path) -> None:
        self.token = "".join(secrets.choice(_RUN_NAME_CHARACTERS) for _ in range(10))
        folder = ensure_dir(storage_dir / WRITERS_FOLDER)
        self.path = folder / f"{self.token}.lock"
        self._descriptor: int | None = os.open(
            self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE
        )
        fcntl.flock(self._descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._lock = threading.Lock()
        self._folders: set[str] = set()
        self._count = 0
        self.closed = False

    def temp_path(self, target: Path) -> Path:
        """Return a new temp file name beside `target`, and list its folder in the writer file."""
        with self._lock:
            if self.closed:
                raise MemwardenError("checkpoint stopped: no more files are written")
            self._count += 1
            folder = str(target.parent)
            if folder not in self._folders and self._descriptor is not None:
                os.write(self._descriptor, folder.encode("utf-8", "surrogateescape") + b"\n")
                self._folders.add(folder)
            return target.parent / f".{target.name}.mw-{self.token}-{self._count}.tmp"

    def start_worker(self) -> None:
        """In a worker process forked by the run (`fanout`): number its temp files apart from
        the other processes' (the writer file and its lock are shared with them)."""
        with self._lock:
            self._count = os.getpid() << 32

    def close(self, *, pending: bool = False) -> None:
        """Stop handing out temp names and release the writer file. Unless the journal still
        holds renames of this run (`pending`: the next run rolls them forward, then cleans up),
        remove this run's temp files and the writer file."""
        with self._lock:
            self.closed = True
            folders = set(self._folders)
        if self._descriptor is None:
            return
        try:
            if not pending:
                # Its workers' folders too, a worker that died before sending its own included.
                with suppress(OSError):
                    folders.update(listed_folders(self._descriptor))
                remove_temp_files(self.token, sorted(folders))
                self.path.unlink(missing_ok=True)
        finally:
            os.close(self._descriptor)
            self._descriptor = None


def listed_folders(descriptor: int) -> list[str]:
    """Return the folders an open writer file lists, one a line. Raise OSError if it cannot be
    read."""
    text = os.pread(descriptor, 1 << 24, 0)
    return [line for line in text.decode("utf-8", "surrogateescape").splitlines() if line]


def remove_temp_files(token: str, folders: list[str], keep: frozenset[str] = frozenset()) -> int:
    """Remove the temp files of run `token` in `folders` (regular files only, never through a
    link), except the paths in `keep`; return how many were removed."""
    pattern = re.compile(rf"^\..+\.mw-{re.escape(token)}-\d+\.tmp$")  # see `temp_path`

    def ours(entry: os.DirEntry) -> bool:
        return pattern.match(entry.name) is not None and entry.path not in keep

    return sum(len(remove_files(folder, ours)) for folder in folders)


@dataclass
class _Target:
    """A file of the agent's workspace as first read in this run, and the writes staged on it."""

    path: Path
    base: bytes | None
    before: list[int] | None


@dataclass
class AgentFiles:
    """The writes of one agent's checkpoint, in order, not yet on disk."""

    agent_id: str
    workspace: Path
    _targets: dict[Path, _Target] = field(default_factory=dict)
    _writes: list[tuple[Path, str, str]] = field(default_factory=list)
    real_workspace: Path | None = None  # real_path(workspace), when the caller has it

    def replace(self, path: Path, text: str) -> None:
        """Stage `path` replaced whole by `text`."""
        self._target(path)
        self._writes.append((path, "replace", text))

    def append(self, path: Path, entry: str, header: str) -> None:
        """Stage `entry` appended to `path`; a file missing now starts with `header`. An entry
        the file holds already (same heading, time and text) is not appended again: the read
        positions live in memwarden's state, and a lost or other state (a second storage folder,
        a restored backup) must not log the same messages twice."""
        target = self._target(path)
        if target.base is not None and entry.strip() and entry.encode("utf-8") in target.base:
            return
        if target.base is None and not any(written == path for written, _, _ in self._writes):
            self._writes.append((path, "replace", header))
        self._writes.append((path, "append", entry))

    def mark(self) -> int:
        """Return a mark to roll back to (`rollback`) if a session fails after staging."""
        return len(self._writes)

    def rollback(self, mark: int) -> None:
        del self._writes[mark:]

    def stage(self, writer: Writer) -> list[StagedFile]:
        """Write one temp file per target, each fsynced, and return them in the order their
        targets were first written. Raise OSError if one cannot be written (those already
        written are removed)."""
        contents: dict[Path, tuple[bytes, list[str] | None]] = {}
        for path, kind, text in self._writes:
            if kind == "replace":
                contents[path] = (text.encode("utf-8"), None)
                continue
            body, appended = contents.get(path) or (self._targets[path].base or b"", [])
            if body and not body.endswith(b"\n"):
                body += b"\n"
            contents[path] = (body + text.encode("utf-8"), [*(appended or []), text])
        staged: list[StagedFile] = []
        try:
            for path, (body, appended) in contents.items():
                staged.append(self._write_temp(writer, path, body, appended))
        except BaseException:
            for done in staged:
                Path(done.temp).unlink(missing_ok=True)
            raise
        return staged

    def _target(self, path: Path) -> _Target:
        target = self._targets.get(path)
        if target is None:
            real = check_inside(path, self.workspace, real_root=self.real_workspace)
            found = read_file(real)
            base, before = (found[0], status_identity(found[1])) if found else (None, None)
            target = self._targets[path] = _Target(real, base, before)
        return target

    def _write_temp(
        self, writer: Writer, path: Path, body: bytes, appended: list[str] | None
    ) -> StagedFile:
        target = self._targets[path]
        real = target.path  # checked when first read, and again before the rename
        if not real.parent.is_dir():
            ensure_dir(real.parent, root=self.workspace)
        temp = write_temp(real, body, namer=writer.temp_path)
        return StagedFile(
            agent_id=self.agent_id,
            target=str(real),
            temp=str(temp),
            workspace=str(self.workspace),
            size=len(body),
            sha256=sha256_bytes(body),
            before_json=None if target.before is None else orjson.dumps(target.before).decode(),
            appended="".join(appended) if appended is not None else None,
            temp_inode=os.lstat(temp).st_ino,
        )
