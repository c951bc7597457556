"""Safe writes into folders the operator owns.

Every file memwarden writes is written whole or not at all (temp file in the same folder, fsync,
rename, fsync of the folder), with 0600 files in 0700 folders, and never through a symlink or to a
path that leaves the folder it belongs to (an agent's workspace, memwarden's state dir).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from itertools import chain, takewhile
from pathlib import Path
from typing import Any, TypeVar

import orjson

from memwarden.process.errors import (
    MemwardenError,
    NotRegularFileError,
    UnsafePathError,
    UsageError,
)

FILE_MODE = 0o600
DIR_MODE = 0o700
APPEND_ATTEMPTS = 5
# The temp files memwarden's writers leave behind when a run is killed mid-write:
# `.<name>.<8 characters>.tmp` (atomic_write, atomic_append: tempfile.mkstemp) and
# `.<name>.<pid>.tmp` (the transcript compression of maintain, state backups, and memwarden
# versions before mkstemp).
# `.<name>.mw-<run>-<n>.tmp` are a checkpoint run's (checkpoint.commit.staging): removed by the next
# run once that one is dead, however young.
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.(?:[a-z0-9_]{8}|\d+|mw-[a-z0-9]+-\d+)\.tmp$")
# A write takes milliseconds (a large transcript's compression, seconds): a temp file an hour
# old belongs to no live writer.
STALE_TEMP_SECONDS = 3600
T = TypeVar("T")
_UNSAFE_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff]")
# Opening a FIFO to read does not wait for a writer; a terminal does not become the process's.
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
READ_BYTES = 1 << 16
# Linux opens a path without reading it (O_PATH) and names an open file in /proc.
_O_PATH = getattr(os, "O_PATH", 0) if sys.platform.startswith("linux") else 0


def real_path(path: str | os.PathLike[str]) -> str:
    """Return os.path.realpath(path).

    On Linux the kernel resolves it: the path is opened (O_PATH: nothing is read) and its open
    file named back by /proc, two system calls where os.path.realpath makes one lstat per part
    in Python. A path that cannot be opened (missing, a dangling link, a loop), or a system
    without /proc, takes os.path.realpath, which resolves what it can.
    """
    if _O_PATH:
        try:
            descriptor = os.open(path, _O_PATH | os.O_CLOEXEC)
        except OSError:
            return os.path.realpath(path)
        try:
            named = os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError:
            named = ""
        finally:
            os.close(descriptor)
        if named.startswith("/") and not named.endswith(" (deleted)"):
            return named
    return os.path.realpath(path)


def check_inside(path: Path, root: Path, *, real_root: Path | None = None) -> Path:
    """Given a target path and the folder it must stay in, return the target's real path.

    Raise UnsafePathError if the target itself is a symlink or any existing folder on the way
    resolves outside `root` (a symlink out of the workspace, `..` tricks). A caller checking
    many paths under one root may pass `real_root` (`real_path(root)`, resolved once).
    """
    if real_root is None:
        real_root = Path(real_path(root))
    absolute = _refuse_symlink(path if path.is_absolute() else real_root / path)
    real_parent = _real_folder(absolute.parent, root, real_root)
    if real_parent != real_root and real_root not in real_parent.parents:
        raise UnsafePathError(f"{absolute}: resolves outside {real_root}; refusing to write there")
    return real_parent / absolute.name


def _real_folder(folder: Path, root: Path, real_root: Path) -> Path:
    """Return os.path.realpath(folder), knowing `root` resolves to `real_root`: a folder written
    below `root` (or `real_root`) is resolved from there, one lstat per part, instead of every
    part from `/` again. A link, `..` or a missing part on the way: the full realpath."""
    for base in (root, real_root):
        try:
            parts = folder.relative_to(base).parts
        except ValueError:
            continue
        current = str(real_root)
        for part in parts:
            current = os.path.join(current, part)
            try:
                if part == ".." or not stat.S_ISDIR(os.lstat(current).st_mode):
                    break
            except OSError:
                break
        else:
            return Path(current)
        break
    return Path(real_path(folder))


def ensure_dir(path: Path, root: Path | None = None) -> Path:
    """Create `path` and its missing parents, each with mode 0700; return it.

    Folders that already exist keep their mode. With `root`, raise UnsafePathError if `path`
    resolves outside it.
    """
    if root is not None:
        check_inside(path / ".probe", root)
    # mkdir(parents=True) would give the parents the umask's mode, not 0700.
    for folder in missing_ancestors(path):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
    return path


def memory_folder(workspace: Path, *, create: bool) -> Path:
    """Return `<workspace>/memory`, created (0700) when `create` and missing.

    Raise UnsafePathError if the workspace does not exist, or `memory` is a link to a folder
    that is not inside it: outside it, or the workspace itself (every workspace file would be
    taken as one of memory/'s, and a rewind would remove those its snapshot lacks).
    """
    if not workspace.is_dir():
        raise UnsafePathError(
            f"{workspace}: the agent's workspace does not exist; check the agent's `workspace` "
            "in openclaw.json"
        )
    folder = workspace / "memory"
    if folder.is_symlink():
        real, real_workspace = Path(real_path(folder)), Path(real_path(workspace))
        if real == real_workspace:
            raise UnsafePathError(
                f"{folder}: a link to the workspace itself; make memory/ a folder (or a link to "
                "a folder inside the workspace)"
            )
        if real_workspace not in real.parents:
            raise UnsafePathError(
                f"{folder}: resolves to {real}, outside the workspace; memwarden does not "
                "follow links out of the workspace: make memory/ a folder inside it"
            )
    elif create and not folder.is_dir():
        ensure_dir(folder, root=workspace)
    return folder


def missing_ancestors(path: Path) -> list[Path]:
    """Given a folder, return it and its parents that do not exist yet, outermost first."""
    missing = takewhile(lambda folder: not folder.exists(), chain([path], path.parents))
    return list(missing)[::-1]


def atomic_write(
    path: Path,
    data: bytes | str,
    root: Path | None = None,
    *,
    real_root: Path | None = None,
) -> None:
    """Replace `path` with `data` atomically: temp file in the same folder, fsync, rename, fsync.

    With `root`, the target must stay inside it (see check_inside, and its `real_root`). The
    file ends up 0600.
    """
    target = (
        check_inside(path, root, real_root=real_root) if root is not None else _refuse_symlink(path)
    )
    payload = data.encode("utf-8") if isinstance(data, str) else data
    ensure_dir(target.parent)
    temp = write_temp(target, payload)
    replace_or_remove(temp, target)
    fsync_dir(target.parent)


def atomic_append(path: Path, text: str, root: Path, header: str = "") -> None:
    """Append `text` to `path` so that a crash leaves either the old or the new file, whole.

    The target must stay inside `root` (see check_inside). A missing file is created starting
    with `header`. The file is rewritten whole (the files
    appended to, daily logs, are small); if someone else (the agent itself) changes it while
    memwarden writes, memwarden starts over from their version instead of replacing it. Raise
    MemwardenError if it keeps changing.
    """
    target = check_inside(path, root)
    ensure_dir(target.parent)
    for _attempt in range(APPEND_ATTEMPTS):
        found = read_file(target)
        before = status_identity(found[1]) if found is not None else None  # of the bytes read
        current = found[0] if found is not None else header.encode("utf-8")
        if current and not current.endswith(b"\n"):
            current += b"\n"
        temp = write_temp(target, current + text.encode("utf-8"))
        if identity(target) != before:
            temp.unlink(missing_ok=True)
            continue
        replace_or_remove(temp, target)
        fsync_dir(target.parent)
        return
    raise MemwardenError(f"{target}: kept changing while memwarden appended to it; run again")


def write_new(path: Path, payload: bytes) -> bool:
    """Write `payload` to `path` (0600) only where no file is: written whole beside it, then
    linked into place, since a link never replaces a file (of another process, in the same
    instant) and a process killed part way leaves no half-written file. Return False, writing
    nothing, when `path` exists."""
    return link_new(write_temp(path, payload), path)


def link_new(temp: Path, path: Path) -> bool:
    """Put the written, flushed file `temp` at `path` only where no file is, by a link (which
    never replaces one), and remove the name `temp`. Return False, placing nothing, when `path`
    exists."""
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def replace_or_remove(temp: Path, target: Path) -> None:
    """Rename `temp` over `target`; if that fails (an immutable target, a folder in the way),
    remove `temp`, so that a run failing again and again leaves no temp files behind, and raise
    the OSError naming the target, not the temp file."""
    try:
        os.replace(temp, target)
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise type(error)(error.errno, error.strerror, str(target)) from None


# While a checkpoint runs, its temp files are named for the run (see `named_temp_files`).
_temp_namer: Callable[[Path], Path] | None = None


@contextmanager
def named_temp_files(namer: Callable[[Path], Path]) -> Iterator[None]:
    """Within the block, name every temp file of `atomic_write` / `atomic_append` with
    `namer(target)`: a checkpoint run's names, which the next run removes after a kill."""
    global _temp_namer
    previous, _temp_namer = _temp_namer, namer
    try:
        yield
    finally:
        _temp_namer = previous


def write_temp(
    target: Path,
    payload: bytes,
    namer: Callable[[Path], Path] | None = None,
    mode: int | None = None,
) -> Path:
    """Write `payload` to a new 0600 temp file (or given `mode`) beside `target`, whose folder
    must exist, fsynced; return its path. The name is `namer(target)`'s (else that of
    `named_temp_files`), else tempfile.mkstemp's. Raise OSError if it cannot be written (no
    temp file is left)."""
    # A fresh name each time (O_EXCL): two writers of one file, in threads or processes,
    # never share a temp file, and a stale one left by a crash is never reused with its mode.
    namer = namer or _temp_namer
    if namer is not None:
        temp = namer(target)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        descriptor = os.open(temp, flags, FILE_MODE)
    else:
        descriptor, name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        temp = Path(name)
    try:
        view = memoryview(payload)
        while view:  # os.write may take only part of it
            view = view[os.write(descriptor, view) :]
        if mode is not None:
            os.fchmod(descriptor, mode)
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        temp.unlink(missing_ok=True)
        raise
    os.close(descriptor)
    return temp


def identity(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> list[int] | None:
    """Return [inode, size, mtime in ns] of `path`, or None when it does not exist."""
    try:
        return status_identity(os.stat(path, follow_symlinks=follow_symlinks))
    except FileNotFoundError:
        return None


def status_identity(status: os.stat_result) -> list[int]:
    """Return [inode, size, mtime in ns] of a file's status: what a rewrite of it changes."""
    return [status.st_ino, status.st_size, status.st_mtime_ns]


def read_regular_file(path: Path) -> bytes:
    """Return the bytes of a file the operator names (a config, the secrets file), refusing
    before reading what is not a regular file: a FIFO would block the run for ever, a device
    may never end. Raise FileNotFoundError, NotRegularFileError or another OSError."""
    _refuse_not_regular(path, os.stat(path))
    with os.fdopen(os.open(path, READ_FLAGS), "rb") as handle:
        _refuse_not_regular(path, os.fstat(handle.fileno()))  # replaced since the stat
        return handle.read()


def _refuse_not_regular(path: str | os.PathLike[str], status: os.stat_result) -> None:
    mode = status.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise NotRegularFileError(errno.EISDIR, "it is a folder, not a file", str(path))
    if stat.S_ISFIFO(mode):
        what = "a named pipe (FIFO)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what = "a device"
    elif stat.S_ISSOCK(mode):
        what = "a socket"
    else:
        what = "something other than a file"
    raise NotRegularFileError(errno.EINVAL, f"it is {what}, not a regular file", str(path))


def read_text_if_exists(path: Path) -> str | None:
    """Return the text of `path`, or None when it does not exist (see read_file)."""
    found = read_file(path)
    return found[0].decode("utf-8", errors="replace") if found is not None else None


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Return the bytes of the regular file `path` (see read_file). Raise FileNotFoundError if
    it does not exist."""
    found = read_file(path)
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    return found[0]


def read_file(
    path: str | os.PathLike[str], missing: type[OSError] = FileNotFoundError
) -> tuple[bytes, os.stat_result] | None:
    """Return the bytes of the regular file `path` and its status as read, or None when it
    cannot be opened for a reason of the type `missing`. Raise UnsafePathError
    if it is a symlink (never followed), NotRegularFileError if it is not a regular file (never
    waiting on a FIFO)."""
    try:
        descriptor = os.open(path, READ_FLAGS | os.O_NOFOLLOW)
    except missing:
        return None
    except OSError as error:
        if os.path.islink(path):
            message = f"{path}: is a symlink; memwarden does not read through links"
            raise UnsafePathError(message) from error
        raise
    try:
        status = os.fstat(descriptor)
        _refuse_not_regular(path, status)
        # Read to the end (0 bytes), in one read of the size fstat gave when it still holds.
        chunks = [os.read(descriptor, status.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(descriptor, READ_BYTES))
        return chunks[0] if len(chunks) == 2 else b"".join(chunks), status
    finally:
        os.close(descriptor)


def load_record_file(path: Path, build: Callable[[Any], T], what: str, fix: str) -> T | None:
    """Given a JSON record memwarden wrote (an install's), return `build(its data)`, or None if
    there is none. Raise UsageError naming the file, what it is and `fix` if it cannot be read.
    """
    text = read_text_if_exists(path)
    if text is None:
        return None
    try:
        return build(orjson.loads(text))
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        raise UsageError(f"{path}: unreadable {what} ({error}); {fix}") from error


def write_record_file(path: Path, record: Any, root: Path) -> None:
    """Write a dataclass record to `path` inside `root` atomically (0600), as indented JSON with
    sorted keys: what `load_record_file` reads."""
    data = orjson.dumps(asdict(record), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    atomic_write(path, data + b"\n", root=root)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str | None:
    """Return the SHA-256 of the file's bytes, or None when it does not exist."""
    try:
        return sha256_bytes(path.read_bytes())
    except FileNotFoundError:
        return None


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a rename) to disk; a no-op where folders cannot be opened or
    flushed."""
    with contextlib.suppress(OSError):
        flush_folder(path)


def flush_folder(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a rename) to disk. Raise OSError naming it if that fails."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    except OSError as error:
        raise type(error)(error.errno, error.strerror, os.fspath(path)) from None
    finally:
        os.close(descriptor)


def _refuse_symlink(path: Path) -> Path:
    if path.is_symlink():
        raise UnsafePathError(f"{path}: is a symlink; memwarden does not write through links")
    return path


def remove_stale_temp_files(
    folder: Path, of: Callable[[str], bool] = lambda target: True, *, dry_run: bool = False
) -> list[str]:
    """Given a folder, delete the temp files memwarden's writers left there (named as
    `TEMP_NAME` says, for a target name `of` accepts) that are more than an hour old; return
    their names (see remove_files; with `dry_run`, delete none and return what it would)."""
    cutoff = time.time() - STALE_TEMP_SECONDS

    def stale(entry: os.DirEntry) -> bool:
        match = TEMP_NAME.match(entry.name)
        return (
            match is not None
            and of(match["target"])
            and entry.stat(follow_symlinks=False).st_mtime < cutoff
        )

    return remove_files(folder, stale, dry_run=dry_run)


def remove_files(
    folder: str | os.PathLike[str], wanted: Callable[[os.DirEntry], bool], *, dry_run: bool = False
) -> list[str]:
    """Given a folder, delete the regular files in it that `wanted` accepts; return their names
    (with `dry_run`, delete none and return the names it would delete). Never through a link:
    a folder that is a symlink, or cannot be listed, is left alone. Raise nothing: a file that
    cannot be deleted stays."""
    if os.path.islink(folder):
        return []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    removed = []
    for entry in entries:
        try:
            if wanted(entry) and entry.is_file(follow_symlinks=False):
                if not dry_run:
                    os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed


def display_path(path: str) -> str:
    """Given a path as the OS gave it, return it as text: bytes that are not UTF-8 (which
    Python carries as lone surrogates) and control characters (a newline would break a
    Markdown table) become `\\xNN` escapes; other text is returned as it is."""
    return _UNSAFE_CHARACTERS.sub(_escape, path)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
