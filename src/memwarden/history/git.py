"""memwarden's own bare git repository per agent: blobs and trees in, blobs and trees out.

git runs with an environment built from nothing: `GIT_DIR` at the store, no system or global
config, no templates (so no hooks), no prompts, a fixed identity. There is no work tree: files go
in through `git fast-import` and come out through `git cat-file`, so git never looks at, walks or
writes the agent's workspace, nor any repository the operator keeps there.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memwarden.errors import MemwardenError
from memwarden.files import ensure_dir

SNAPSHOT_REFS = "refs/snapshots/"
FILE_MODE = "100644"
GIT_TIMEOUT_SECONDS = 300
IDENTITY = "memwarden"
IDENTITY_EMAIL = "memwarden@localhost"
STORE_CONFIG = {
    "core.hooksPath": "/dev/null",
    "core.symlinks": "false",
    "core.fsync": "objects,reference",
    "gc.auto": "0",
}


class HistoryError(MemwardenError):
    """The history store cannot do what was asked (git missing or failing, unreadable files)."""


def blob_sha(data: bytes) -> str:
    """Given file content, return the id git gives it as a blob (SHA-1 of header and bytes)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class TreeFile:
    """One file of a snapshot to commit: its path, and either its bytes or an existing blob id."""

    path: str
    sha: str
    data: bytes | None = None


def fast_import_stream(ref: str, files: Sequence[TreeFile], message: str, when: int) -> bytes:
    """Given a ref, the files, a message and a Unix time, return a `git fast-import` stream.

    The stream makes one parentless commit on `ref` (files with `data` inline, others by blob
    id), asks for the commit id (`get-mark`) and ends with `done`, so a cut stream commits
    nothing.
    """
    encoded = message.encode("utf-8")
    parts = [
        b"feature done\n",
        f"commit {ref}\nmark :1\n".encode(),
        f"committer {IDENTITY} <{IDENTITY_EMAIL}> {when} +0000\n".encode(),
        b"data %d\n" % len(encoded),
        encoded,
        b"\n",
    ]
    for file in files:
        path = quote_path(file.path)
        if file.data is None:
            parts.append(b"M %s %s %s\n" % (FILE_MODE.encode(), file.sha.encode(), path))
        else:
            parts.append(b"M %s inline %s\ndata %d\n" % (FILE_MODE.encode(), path, len(file.data)))
            parts += [file.data, b"\n"]
    parts.append(b"\nget-mark :1\ndone\n")
    return b"".join(parts)


def quote_path(path: str) -> bytes:
    """Given a relative path, return it C-quoted as git's fast-import reads paths."""
    out = bytearray(b'"')
    for byte in path.encode("utf-8"):
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


class GitStore:
    """A bare repository at `git_dir` holding one agent's snapshots as refs/snapshots/<id>."""

    def __init__(self, git_dir: Path, executable: str = "git", path_env: str | None = None):
        self.git_dir = git_dir
        self.executable = executable
        self.env = sanitized_env(git_dir, path_env)

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        """Create the repository (0700 folders, 0600 files, no hooks) unless it exists."""
        if self.exists():
            return
        ensure_dir(self.git_dir.parent)
        self.run(["init", "--bare", "--quiet", "--template=", "--shared=0600"])
        for key, value in STORE_CONFIG.items():
            self.run(["config", key, value])

    def commit(self, ref: str, files: Sequence[TreeFile], message: str, when: int) -> str:
        """Given a new ref, the files and a message, commit them; return the commit id."""
        output = self.run(
            ["fast-import", "--quiet", "--date-format=raw"],
            stdin=fast_import_stream(ref, files, message, when),
        )
        commit = output.decode("ascii", "replace").strip()
        if len(commit) != 40:
            raise HistoryError(f"{self.git_dir}: git fast-import returned no commit id")
        return commit

    def tree(self, commit: str) -> dict[str, str]:
        """Given a commit id, return its files as {relative path: blob id}."""
        return {path: sha for path, (sha, _) in self.listing(commit).items()}

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

    def compact(self) -> None:
        """Delete unreachable objects and repack the rest into one delta-compressed pack."""
        self.run(["gc", "--quiet", "--prune=now"])

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
            raise HistoryError(
                f"{self.executable}: git not found; memory history needs git "
                "(install it, or set history.git to its full path)"
            ) from error
        except subprocess.TimeoutExpired as error:
            raise HistoryError(f"{self.git_dir}: git {arguments[0]} timed out") from error
        if completed.returncode != 0:
            detail = completed.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = detail[-1] if detail else f"exit code {completed.returncode}"
            raise HistoryError(f"{self.git_dir}: git {arguments[0]} failed: {reason}")
        return completed.stdout


def sanitized_env(git_dir: Path, path_env: str | None = None) -> Mapping[str, str]:
    """Given the store, return the whole environment git runs with (nothing of the caller's git)."""
    return {
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
