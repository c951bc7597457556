"""Run `memwarden ...` in child processes that SIGKILL themselves at a chosen point.

Started once by a test (`python kill_runner.py`), it imports memwarden, then reads one job per
line on stdin and answers one line on stdout, both JSON:

    {"args": [...], "env": {...}, "now": <epoch>, "kill_at": <n> | null, "labels": <bool>,
     "stderr": <path> | null}
    -> {"exit": <code, -9 when killed>, "events": <count>, "kill": {"index", "label",
        "committed"} | null, "labels": [...]}

Each job is a forked child (a real process: its own files, locks and SQLite connections) that
runs the CLI with `JobContext.now` pinned to `now`. The child counts the operations that change
what is on disk: file creations, writes, renames, unlinks, fsyncs and every statement of
memwarden's state database. With `kill_at = n` it sends itself SIGKILL right after the n-th one;
`committed` says whether the checkpoint's journal transaction had committed by then. Forking
from this process saves each run the interpreter's start and memwarden's imports.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from datetime import UTC, datetime


def main() -> None:
    import memwarden.checkpoint.commit.durable_run
    import memwarden.checkpoint.run.job
    import memwarden.checkpoint.run.pipeline
    import memwarden.indexing.refresh
    import memwarden.jobs.checkpoint  # noqa: F401 - imported once, before the forks
    from memwarden.cli import main as cli_main

    for line in sys.stdin:
        job = json.loads(line)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(job, write_end, cli_main)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            report = reader.read()
        _, status = os.waitpid(pid, 0)
        answer = json.loads(report) if report else {"events": None, "kill": None, "labels": []}
        answer["exit"] = os.waitstatus_to_exitcode(status)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def _child(job: dict, report_fd: int, cli_main) -> None:
    from memwarden.process.runtime import JobContext

    os.environ.update(job["env"])
    moment = datetime.fromtimestamp(job["now"], UTC)
    JobContext.now = lambda self: moment
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    if job.get("stderr"):  # the file to keep stderr in
        os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)
    else:
        os.dup2(devnull, 2)
    events = _Events(job.get("kill_at"), report_fd, bool(job.get("labels")))
    events.install()
    try:
        code = cli_main(job["args"])
    except BaseException:  # noqa: BLE001 - the exit code says it
        code = 99
    events.finish()
    os._exit(code)


class _Events:
    """Counts the operations that change the disk; kills the process after the chosen one."""

    def __init__(self, kill_at: int | None, report_fd: int, keep_labels: bool) -> None:
        self.kill_at = kill_at
        self.report_fd = report_fd
        self.keep_labels = keep_labels
        self.labels: list[str] = []
        self.count = 0
        self.journaled = False
        self.committed = False
        self.lock = threading.Lock()

    def happened(self, label: str) -> None:
        with self.lock:
            self.count += 1
            if label == "sql INSERT checkpoint_journal":
                self.journaled = True
            elif label == "sql COMMIT" and self.journaled:
                self.committed = True
            if self.keep_labels:
                self.labels.append(label)
            if self.count == self.kill_at:
                kill = {"index": self.count, "label": label, "committed": self.committed}
                self._report({"events": self.count, "kill": kill, "labels": self.labels})
                os.kill(os.getpid(), signal.SIGKILL)

    def finish(self) -> None:
        self._report({"events": self.count, "kill": None, "labels": self.labels})

    def _report(self, data: dict) -> None:
        payload = json.dumps(data).encode()
        view = memoryview(payload)
        while view:
            view = view[os.write_unhooked(self.report_fd, view) :]
        os.close(self.report_fd)

    def install(self) -> None:
        from memwarden.store.state import StateConnection

        os.write_unhooked = os.write
        originals = {name: getattr(os, name) for name in ("open", "write", "replace", "unlink")}
        originals["fsync"] = os.fsync
        happened = self.happened

        kinds: dict[int, str] = {}

        def opened(path, flags, *args, **kwargs):
            descriptor = originals["open"](path, flags, *args, **kwargs)
            kinds[descriptor] = _kind(path)
            if flags & os.O_CREAT:
                happened(f"create {_kind(path)}")
            return descriptor

        def written(descriptor, data):
            count = originals["write"](descriptor, data)
            happened(f"write {kinds.get(descriptor, 'other file')}")
            return count

        def replaced(source, target, *args, **kwargs):
            originals["replace"](source, target, *args, **kwargs)
            happened(f"rename {_kind(target)}")

        def unlinked(path, *args, **kwargs):
            originals["unlink"](path, *args, **kwargs)
            happened(f"unlink {_kind(path)}")

        def fsynced(descriptor):
            originals["fsync"](descriptor)
            happened(f"fsync {kinds.get(descriptor, 'other file')}")

        os.open, os.write, os.replace, os.unlink, os.fsync = (
            opened,
            written,
            replaced,
            unlinked,
            fsynced,
        )
        execute, executemany = StateConnection.execute, StateConnection.executemany

        def sql(statement: str) -> str | None:
            words = statement.split()
            verb = words[0].upper()
            if verb == "SELECT":
                return None  # reads change nothing
            if verb in ("INSERT", "DELETE"):
                return f"sql {verb} {words[2]}"
            if verb == "UPDATE":
                return f"sql {verb} {words[1]}"
            return f"sql {verb}"

        def executed(self, statement, parameters=(), /):
            cursor = execute(self, statement, parameters)
            if (label := sql(statement)) is not None:
                happened(label)
            return cursor

        def executed_many(self, statement, parameters, /):
            cursor = executemany(self, statement, parameters)
            if (label := sql(statement)) is not None:
                happened(label)
            return cursor

        StateConnection.execute = executed
        StateConnection.executemany = executed_many


def _kind(path) -> str:
    name = os.path.basename(os.fspath(path))
    if ".mw-" in name and name.endswith(".tmp"):
        target = os.path.join(os.path.dirname(os.fspath(path)), name[1 : name.rindex(".mw-")])
        return f"temp file of {_kind(target)}"
    if name.endswith(".tmp"):
        return "other temp file"
    if name[:4].isdigit() and name.endswith(".md"):
        return "daily log"
    if name == "ACTIVE_CONTEXT.md" or os.path.basename(os.path.dirname(os.fspath(path))) == (
        "sessions"
    ):
        return "handoff"
    if name in ("INDEX.md", ".memwarden-bootstrap.json"):
        return name
    if name.endswith(".lock"):
        return "lock file"
    return "other file"


if __name__ == "__main__":
    main()
