"""Errors that reach the operator as one clear line and an exit code.

Every error memwarden raises on purpose derives from `MemwardenError`; the CLI prints its message
(one line per problem) to stderr and exits with its `exit_code`. Anything else is a bug and shows a
traceback only with `-v`.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURES = 1
EXIT_USAGE = 2
EXIT_LOCKED = 75


class MemwardenError(Exception):
    """An expected failure with a message meant for the operator."""

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


class StoreError(MemwardenError):
    """A session store or transcript of the gateway cannot be read."""


class LockHeld(MemwardenError):
    """Another run of the same job holds the lock."""

    exit_code = EXIT_LOCKED


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM) while a job ran.

    Not an Exception, as KeyboardInterrupt is not: every job isolates failures per item with
    `except Exception`, and a stop must get through them and end the run at once.
    """

    exit_code = 143

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def lines(self) -> list[str]:
        return [self.message]


class UnsafePathError(MemwardenError):
    """A write was refused: the path is a symlink or leaves the folder it must stay in."""
