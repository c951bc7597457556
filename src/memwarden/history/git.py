"""memwarden's own bare git repository: blobs and trees in, blobs and trees out.

git runs with an environment built from nothing: `GIT_DIR` at the store, no system or global
config, no template but one holding the store's config (so no hooks), no prompts, a fixed
identity. There is no work tree: files go in through `git fast-import` and come out through
`git cat-file`, so git never looks at, walks or writes the agent's workspace, nor any repository
the operator keeps there.

Every snapshot is a parentless commit. The snapshots written together (one `git fast-import` for
a whole run, whatever the number of agents) are kept reachable by one *batch* commit whose
parents they are, on `refs/batches/<id>`: one reference written per run, not one per snapshot.
Retention rewrites the batch commits to hold only the snapshots it keeps, then lets `git gc`
delete the rest.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, NamedTuple

from memwarden.fs.files import ensure_dir
from memwarden.history.model import HistoryError

__all__ = ["BatchImport", "GitStore", "HistoryError", "SnapshotCommit", "TreeFile", "blob_sha"]

SNAPSHOT_REFS = "refs/snapshots/"  # one per snapshot: the stores of memory/ alone (legacy)
BATCH_REFS = "refs/batches/"
# Parents of one batch commit, at most (retention's batches keep many snapshots).
BATCH_PARENTS = 500
FILE_MODE = "100644"
GIT_TIMEOUT_SECONDS = 300
IDENTITY = "memwarden"
IDENTITY_EMAIL = "memwarden@localhost"
# The store's config: no hooks, no symlinks, durable objects and refs, no automatic gc; a
# run's objects stay one pack (one fsync) instead of a loose file each, written fast: zlib's
# quickest level, and no delta search (see FAST_IMPORT); retention finds the deltas.
STORE_CONFIG = """[core]
\thooksPath = /dev/null
\tsymlinks = false
\tfsync = objects,reference
[gc]
\tauto = 0
[fastimport]
\tunpackLimit = 1
[pack]
\tcompression = 1
"""
# Deltas are left to retention (`repack_by_group`): fast-import would only try each file
# against the file written just before it in the stream, another agent's, for nothing.
FAST_IMPORT = ["fast-import", "--quiet", "--date-format=raw", "--depth=0"]
# fast-import sets up and frees zlib's buffers (a few hundred KB) for every object; glibc would
# hand that memory back to the system each time and fault it in again, zeroed, for the next:
# 40 % of its time. Keeping up to 8 MB of freed memory in the process avoids it (glibc only;
# other C libraries ignore the variable).
FAST_IMPORT_ENV = {"MALLOC_TRIM_THRESHOLD_": str(8 << 20)}
PIPE_BYTES = 1 << 20


def blob_sha(data: bytes) -> str:
    """Given file content, return the id git gives it as a blob (SHA-1 of header and bytes)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


class TreeFile(NamedTuple):
    """One file of a snapshot to commit: its path, and either its bytes or an existing blob id."""

    path: str
    sha: str
    data: bytes | None = None


class SnapshotCommit(NamedTuple):
    """One snapshot to commit: its files, message and Unix time."""

    files: Sequence[TreeFile]
    message: str
    when: int


STREAM_START = b"feature done\n"


def snapshot_part(ref: str, mark: int, snapshot: SnapshotCommit) -> bytes:
    """Return the stream of one snapshot: a parentless commit, mark `mark`, of its files (with
    `data` inline, the others by blob id)."""
    parts = _commit_header(ref, mark, snapshot.message, snapshot.when)
    for file in snapshot.files:
        path = quote_path(file.path)
        if file.data is None:
            parts.append(b"M %s %s %s\n" % (FILE_MODE.encode(), file.sha.encode(), path))
        else:
            size = len(file.data)
            parts.append(b"M %s inline %s\ndata %d\n" % (FILE_MODE.encode(), path, size))
            parts += [file.data, b"\n"]
    parts.append(b"\n")
    return b"".join(parts)


class BatchImport:
    """One `git fast-import` for a run's snapshots, fed one snapshot at a time as they are
    planned, so that git hashes and compresses an agent's files while the next is read.

    Commit ids come back in a marks file at the end (nothing is read from git while it runs,
    so neither side ever waits on a full pipe).
    """

    def __init__(self, store: GitStore, ref: str) -> None:
        self.store = store
        self.ref = ref
        self.count = 0
        self._marks = store.git_dir / f"memwarden-marks-{os.getpid()}-{id(self):x}"
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._pending = STREAM_START  # written with the first snapshot
        try:
            arguments = [*FAST_IMPORT, f"--export-marks={self._marks}"]
            self._process = store.start(arguments, self._errors, FAST_IMPORT_ENV)
        except BaseException:
            self._errors.close()
            raise

    def add(self, snapshot: SnapshotCommit) -> None:
        self.count += 1
        self._write(snapshot_part(self.ref, self.count, snapshot))

    def finish(self, message: str, when: int) -> list[str]:
        """End the stream with the batch commit; return the snapshots' commit ids, in order.
        Raise HistoryError if git failed."""
        parents = [f":{mark}" for mark in range(1, self.count + 1)]
        # The batch commit ends the stream, then `done`: a cut stream commits nothing.
        self._write(batch_stream({self.ref: parents}, message, when, self.count + 1))
        # Blocking waits, with a watchdog: Popen.wait(timeout) polls, up to 50 ms late.
        watchdog = threading.Timer(GIT_TIMEOUT_SECONDS, self._process.kill)
        watchdog.start()
        try:
            with contextlib.suppress(BrokenPipeError):  # git stopped reading: its code says why
                self._process.stdin.close()  # type: ignore[union-attr]
            code = self._process.wait()
        finally:
            watchdog.cancel()
        if code == -signal.SIGKILL:
            raise HistoryError(f"{self.store.git_dir}: git fast-import timed out or was killed")
        if code != 0:
            raise self._failure(code)
        marks = dict(line.split() for line in self._marks.read_text("ascii").splitlines())
        commits = [marks.get(f":{mark}", "") for mark in range(1, self.count + 1)]
        if any(len(commit) != 40 for commit in commits):
            raise HistoryError(f"{self.store.git_dir}: git fast-import returned no commit ids")
        return commits

    def close(self) -> None:
        """Stop git if it still runs (a run that failed half-way commits nothing)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        with contextlib.suppress(OSError):  # what is left of the stream goes nowhere
            self._process.stdin.close()  # type: ignore[union-attr]
        self._errors.close()
        self._marks.unlink(missing_ok=True)

    def _write(self, data: bytes) -> None:
        data, self._pending = self._pending + data, b""
        try:
            self._process.stdin.write(data)  # type: ignore[union-attr]
        except BrokenPipeError:
            self._process.wait()
            raise self._failure(self._process.returncode) from None

    def _failure(self, code: int) -> HistoryError:
        self._errors.seek(0)
        detail = self._errors.read().decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit code {code}"
        return HistoryError(f"{self.store.git_dir}: git fast-import failed: {reason}")


def batch_stream(
    batches: Mapping[str, Sequence[str]], message: str, when: int, first_mark: int = 1
) -> bytes:
    """Given {batch ref: parents (commit ids, or `:<mark>` of this stream)}, return the end of a
    `git fast-import` stream that sets each ref to a commit with an empty tree and those
    parents, then `done`."""
    parts = []
    for mark, (ref, parents) in enumerate(batches.items(), start=first_mark):
        parts += _commit_header(ref, mark, message, when)
        parts += [b"merge %s\n" % parent.encode("ascii") for parent in parents]
        parts.append(b"\n")
    parts.append(b"done\n")
    return b"".join(parts)


def _commit_header(ref: str, mark: int, message: str, when: int) -> list[bytes]:
    encoded = message.encode("utf-8")
    return [
        # reset: a parentless commit, whatever the ref held before in this stream
        f"reset {ref}\ncommit {ref}\nmark :{mark}\n".encode(),
        f"committer {IDENTITY} <{IDENTITY_EMAIL}> {when} +0000\n".encode(),
        b"data %d\n" % len(encoded),
        encoded,
        b"\n",
    ]


def quote_path(path: str) -> bytes:
    """Given a relative path, return it C-quoted as git's fast-import reads paths."""
    return b'"' + _SPECIAL_BYTE.sub(_escape, path.encode("utf-8")) + b'"'


# The bytes a quoted path escapes: a quote or a backslash (with a backslash), a control byte
# (as a backslash and three octal digits).
_SPECIAL_BYTE = re.compile(rb'["\\\x00-\x1f\x7f]')


def _escape(match: re.Match[bytes]) -> bytes:
    byte = match[0]
    return b"\\" + byte if byte in b'"\\' else b"\\%03o" % byte[0]


class GitStore:
    """A bare repository at `git_dir` holding one agent's snapshots as refs/snapshots/<id>."""

    def __init__(self, git_dir: Path, executable: str = "git", path_env: str | None = None):
        self.git_dir = git_dir
        self.executable = executable
        # The whole environment git runs with: nothing of the caller's git.
        self.env = {
            "PATH": path_env or os.environ.get("PATH", os.defpath),
            # git < 2.32 has no GIT_CONFIG_GLOBAL: a HOME without a .gitconfig has the same effect.
            "HOME": str(git_dir),
            "GIT_DIR": str(git_dir),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": IDENTITY,
            "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
            "GIT_COMMITTER_NAME": IDENTITY,
            "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
            "LC_ALL": "C",
            "TZ": "UTC",
        }

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        """Create the repository (0700 folders, 0600 files, no hooks) unless it exists, with
        STORE_CONFIG: git copies it from a template folder holding only that config, so one
        process makes the store (not one more for each setting) and no store is ever left
        without it."""
        if self.exists():
            return
        ensure_dir(self.git_dir.parent)
        with tempfile.TemporaryDirectory(prefix="memwarden-git-template-") as template:
            Path(template, "config").write_text(STORE_CONFIG, encoding="utf-8")
            self.run(["init", "--bare", "--quiet", f"--template={template}", "--shared=0600"])

    def commit_batch(
        self, ref: str, snapshots: Sequence[SnapshotCommit], message: str, when: int
    ) -> list[str]:
        """Commit the snapshots under the batch `ref`, in one git process; return their commit
        ids, in order."""
        batch = BatchImport(self, ref)
        try:
            for snapshot in snapshots:
                batch.add(snapshot)
            return batch.finish(message, when)
        finally:
            batch.close()

    def keep(self, batches: Mapping[str, Sequence[str]], message: str, when: int) -> None:
        """Set each batch ref to a commit whose parents are the given existing commits, all in
        one `git fast-import`."""
        if batches:
            self.run(FAST_IMPORT, stdin=STREAM_START + batch_stream(batches, message, when))

    def refs(self, prefix: str) -> list[str]:
        """Return the names of the refs under `prefix` (`refs/batches/`)."""
        output = self.run(["for-each-ref", "--format=%(refname)", prefix])
        return output.decode("utf-8", "replace").split()

    def parents(self, refs: Sequence[str]) -> list[str]:
        """Return the parents of the commits the refs point to (the snapshots a batch keeps)."""
        if not refs:
            return []
        output = self.run(
            ["rev-list", "--no-walk", "--parents", "--stdin"],
            stdin="".join(f"{ref}\n" for ref in refs).encode(),
        )
        lines = output.decode("ascii").splitlines()
        return [commit for line in lines for commit in line.split()[1:]]

    def listing(self, commit: str) -> dict[str, tuple[str, int]]:
        """Given a commit id, return its files as {relative path: (blob id, size in bytes)}."""
        output = self.run(["ls-tree", "-r", "-l", "-z", "--full-tree", commit])
        files = {}
        for record in output.split(b"\0"):
            if not record:
                continue
            header, _, path = record.partition(b"\t")
            _mode, kind, sha, size = header.decode("ascii").split()
            if kind == "blob":
                files[path.decode("utf-8", "surrogateescape")] = (sha, int(size))
        return files

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Given blob ids, return {id: exact bytes}. Raise HistoryError if one is missing."""
        wanted = sorted(set(shas))
        if not wanted:
            return {}
        output = self.run(["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in wanted).encode())
        found, offset = {}, 0
        while offset < len(output):
            end = output.index(b"\n", offset)
            header = output[offset:end].decode("ascii").split(" ")
            if header[-1] == "missing":
                raise HistoryError(f"{self.git_dir}: object {header[0]} is missing from history")
            size = int(header[2])
            found[header[0]] = output[end + 1 : end + 1 + size]
            offset = end + 1 + size + 1
        return found

    def delete_refs(self, refs: Iterable[str]) -> None:
        lines = "".join(f"delete {ref}\n" for ref in refs)
        if lines:
            self.run(["update-ref", "--stdin"], stdin=lines.encode())

    def needs_compaction(self) -> bool:
        """Return True when loose objects or more than one pack could be packed together."""
        objects = self.git_dir / "objects"
        packs = list((objects / "pack").glob("*.pack"))
        loose = any(
            folder.is_dir() and any(folder.iterdir())
            for folder in objects.iterdir()
            if len(folder.name) == 2
        )
        return loose or len(packs) > 1

    def remove_leftovers(self) -> None:
        """Remove what `git fast-import` leaves when its stream is cut (the run killed): its
        crash report and marks file; its objects are unreachable, `compact` drops them. Only
        with the store locked alone: no import is under way."""
        for pattern in ("fast_import_crash_*", "memwarden-marks-*"):
            for path in self.git_dir.glob(pattern):
                path.unlink(missing_ok=True)

    def compact(self) -> None:
        """Delete unreachable objects and repack the rest into one delta-compressed pack."""
        self.run(["gc", "--quiet", "--prune=now"])

    def repack_by_group(self, groups: Iterable[Sequence[str]]) -> None:
        """Pack what each group of commits reaches together, so that git looks for deltas within
        a group only, then pack the rest; drop the packs they came from.

        git looks for a delta base among objects of the same file name and nearby size: in a
        store shared by many agents, `memory/ACTIVE_CONTEXT.md` of every agent compete, and
        an agent's successive versions are rarely found. Each agent's snapshots form a group;
        `compact()` afterwards merges the packs and keeps the deltas found here.
        """
        kept: list[Path] = []
        try:
            for commits in groups:
                keep = self._pack_group(commits)
                if keep is not None:
                    kept.append(keep)
            # Everything outside the groups (batch commits, anything else reachable) into one
            # more pack; every other pack, with the undeltified copies, is then dropped.
            self.run(["repack", "-a", "-d", "--quiet"])
        finally:
            for keep in kept:
                keep.unlink(missing_ok=True)

    def _pack_group(self, commits: Sequence[str]) -> Path | None:
        """Pack what `commits` reach into a new pack marked kept; return its `.keep` file (None
        when there is nothing to pack or a commit is missing: the final repack covers it)."""
        if not commits:
            return None
        pack_dir = self.git_dir / "objects" / "pack"
        try:
            output = self.run(
                [
                    "pack-objects",
                    "--revs",
                    "--quiet",
                    "--delta-base-offset",
                    str(pack_dir / "pack"),
                ],
                stdin="".join(f"{commit}\n" for commit in commits).encode("ascii"),
            )
        except HistoryError:
            return None
        keep = pack_dir / f"pack-{output.decode('ascii').strip()}.keep"
        keep.write_text("memwarden retention\n")
        return keep

    def start(
        self, arguments: list[str], stderr: IO[bytes], env: Mapping[str, str] | None = None
    ) -> subprocess.Popen:
        """Start git with `arguments` on this store (and `env` added to its environment), its
        stdin a pipe to write to, its output discarded and its errors to `stderr`. Raise
        HistoryError if git cannot be started."""
        if not self.git_dir.is_dir():
            raise HistoryError(f"{self.git_dir}: no history store here (was it deleted?)")
        try:
            process = subprocess.Popen(
                [self.executable, *arguments],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env={**self.env, **(env or {})},
                cwd=self.git_dir,
            )
        except FileNotFoundError as error:
            raise self._missing() from error
        _widen_pipe(process.stdin)
        return process

    def run(self, arguments: list[str], stdin: bytes | None = None) -> bytes:
        """Run git with `arguments` on this store; return stdout. Raise HistoryError on failure."""
        if arguments[0] != "init" and not self.git_dir.is_dir():
            raise HistoryError(f"{self.git_dir}: no history store here (was it deleted?)")
        try:
            completed = subprocess.run(
                [self.executable, *arguments],
                input=stdin,
                capture_output=True,
                env=self.env,
                # Never the workspace: git starts in memwarden's own folder.
                cwd=self.git_dir if self.git_dir.is_dir() else self.git_dir.parent,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
        except FileNotFoundError as error:
            raise self._missing() from error
        except subprocess.TimeoutExpired as error:
            raise HistoryError(f"{self.git_dir}: git {arguments[0]} timed out") from error
        if completed.returncode != 0:
            detail = completed.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else f"exit code {completed.returncode}"
            raise HistoryError(f"{self.git_dir}: git {arguments[0]} failed: {reason}")
        return completed.stdout

    def _missing(self) -> HistoryError:
        return HistoryError(
            f"{self.executable}: git not found; memory history needs git "
            "(install it, or set history.git to its full path)"
        )


def _widen_pipe(pipe: IO[bytes] | None) -> None:
    """Give a pipe 1 MB of buffer where the system allows it (Linux), so memwarden goes on
    reading workspaces while git starts and catches up, instead of waiting on every 64 KB."""
    size_flag = getattr(fcntl, "F_SETPIPE_SZ", None)
    if pipe is None or size_flag is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipe.fileno(), size_flag, PIPE_BYTES)
