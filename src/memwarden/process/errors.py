"""Errors that reach the operator as one clear line and an exit code.

Every error memwarden raises on purpose derives from `MemwardenError`; the CLI prints its message
(one line per problem) to stderr and exits with its `exit_code`. Anything else is a bug and shows a
traceback only with `-v`.
"""

from __future__ import annotations

import errno

EXIT_FAILURES = 1
EXIT_USAGE = 2
EXIT_LOCKED = 75


class MemwardenError(Exception):
    """An expected failure with a message meant for the operator; `str(error)` is that message."""

    exit_code = EXIT_FAILURES

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def lines(self) -> list[str]:
        return [self.message]


class ConfigError(MemwardenError):
    """memwarden's own configuration is invalid; `problems` lists every one of them."""

    exit_code = EXIT_USAGE

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems

    def lines(self) -> list[str]:
        return list(self.problems)


class UsageError(MemwardenError):
    """The command line asks for something that cannot be done as asked."""

    exit_code = EXIT_USAGE


class GatewayConfigError(MemwardenError):
    """The gateway's config file (openclaw.json) cannot be read or parsed."""

    exit_code = EXIT_USAGE


class GatewayNotFound(GatewayConfigError):
    """The gateway's state dir does not exist, or holds neither a gateway config nor agents:
    memwarden was pointed at the wrong folder (a green run there would protect nothing).

    The message is `<problem>; fix: <fix>`; `problem` is kept for reports that show the fix
    apart, and `reason` alone says what is wrong with the folder.
    """

    def __init__(self, problem: str, fix: str, reason: str) -> None:
        super().__init__(f"{problem}; fix: {fix}")
        self.problem = problem
        self.reason = reason


class StoreError(MemwardenError):
    """A session store or transcript of the gateway cannot be read."""


class StateError(MemwardenError):
    """memwarden's own state (state.db, run locks, its state folder) cannot be read or written:
    locked by another process, disk full, read-only, damaged."""


class LockHeld(MemwardenError):
    """Another run of the same job holds the lock."""

    exit_code = EXIT_LOCKED


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM) while a job ran.

    Not an Exception, as KeyboardInterrupt is not: every job isolates failures per item with
    `except Exception`, and a stop must get through them and end the run at once.
    """

    exit_code = 143
    message = "stopped by SIGTERM before finishing"

    def __init__(self) -> None:
        super().__init__(self.message)

    def lines(self) -> list[str]:
        return [self.message]


class UnsafePathError(MemwardenError):
    """A write was refused: the path is a symlink or leaves the folder it must stay in."""


class NotRegularFileError(OSError):
    """A file memwarden was to read is a folder, a FIFO, a device or a socket; `strerror`
    says which, in words."""


_OS_ERROR_HINTS = {
    errno.ENOSPC: "the disk is full: free space there",
    errno.EDQUOT: "the disk quota is used up: free space or raise the quota",
    errno.EFBIG: "the file size limit was reached (ulimit -f), or the disk is full",
    errno.EROFS: "the filesystem is read-only",
    # The reason already says "permission denied" / "operation not permitted": only the fix.
    errno.EACCES: "check the owner and mode of the folder",
    errno.EPERM: "check the owner and mode of the folder, and its attributes with lsattr: an "
    "immutable or append-only file or folder refuses changes, even to root",
    errno.ENOTDIR: "a file is where a folder should be: move it away",
    errno.EISDIR: "a folder is where a file should be: move it away",
}


def describe_os_error(error: OSError, doing: str = "") -> str:
    """Given an OSError and what memwarden was doing ("cannot write"), return one line naming
    the path, the reason and, for the common causes, the fix."""
    where = error.filename if error.filename is not None else ""
    reason = error.strerror or str(error) or type(error).__name__
    hint = _OS_ERROR_HINTS.get(error.errno or -1)
    if hint is None and isinstance(error, NotRegularFileError):
        hint = "a file is what belongs there: move it away"
    text = f"{where}: " if where != "" else ""
    text += f"{doing}: " if doing else ""
    text += reason[0].lower() + reason[1:] if reason else ""
    return f"{text} ({hint})" if hint else text


def describe_error(error: BaseException) -> str:
    """Given any exception, return one line for the operator: a MemwardenError's message, an
    OSError's path, reason and fix, else the exception's type and text."""
    if isinstance(error, MemwardenError):
        return error.message
    if isinstance(error, OSError):
        return describe_os_error(error)
    return f"{type(error).__name__}: {error}"
