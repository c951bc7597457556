"""Checkpoint agents in worker processes, on every core (Linux).

Reading, digesting and rendering an agent is Python work that holds the GIL, so threads do not
run it side by side; processes do. The parent checkpoints its first agent alone (the modules
and templates every agent needs are then loaded once, before the fork), forks the workers,
checkpoints its own share and then collects theirs. A worker only reads the gateway's files and
writes temp files: the parent commits every agent (journal, renames), as for agents it did
itself. Each worker sends its results back pickled through a pipe and ends with `os._exit`, so
nothing of the parent (state DB, locks, buffered output) is closed or flushed twice.

A worker that dies (killed, out of memory) costs only time: the parent checkpoints its agents
again, and the temp files it left are removed with the run's (their folders are in the writer
file). On a stop (SIGTERM) the parent kills its workers before it records the run.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memwarden.checkpoint.agents import AgentResult
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent

# Below this many agents per process a fork (a few milliseconds) and the results' trip back cost
# more than the work they share.
AGENTS_PER_PROCESS = 8
MAX_PROCESSES = 4
_WORKER_FAILED = 70


def processes_for(setting: int, pending: int) -> int:
    """Return how many processes checkpoint `pending` agents: `checkpoint.workers` (0: one per
    core, at most MAX_PROCESSES), never more than keeps AGENTS_PER_PROCESS agents each, and one
    where processes cannot be forked safely (anywhere but Linux)."""
    if not sys.platform.startswith("linux"):
        return 1
    wanted = setting or min(len(os.sched_getaffinity(0)), MAX_PROCESSES)
    return max(1, min(wanted, pending // AGENTS_PER_PROCESS))


def checkpoint_in_processes(
    run: RunState,
    agents: list[Agent],
    processes: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
) -> Iterator[tuple[Agent, AgentResult]]:
    """Checkpoint `agents` with `checkpoint(run, agent)` in `processes` processes (this one
    included); yield each agent with its result, this process's as they are done, the workers'
    when they end."""
    if not agents:
        return
    yield agents[0], checkpoint(run, agents[0])
    rest = agents[1:]
    shares = [rest[index::processes] for index in range(processes)]
    workers: list[_Worker] = []
    try:
        for index, share in enumerate(shares[1:], start=1):
            if share:
                workers.append(_fork(run, share, index, checkpoint))
        for agent in shares[0]:
            yield agent, checkpoint(run, agent)
        for worker in workers:
            results = worker.collect()
            if run.writer is not None:
                run.writer.adopt(worker.folders)
            by_id = dict(results)
            for agent in worker.agents:
                result = by_id.get(agent.id)
                # A worker that died: its agents again, here.
                yield agent, result if result is not None else checkpoint(run, agent)
    finally:
        for worker in workers:
            worker.stop()


class _Worker:
    """A forked worker: its process, the pipe its results come through, and its agents."""

    def __init__(self, pid: int, reader: int, agents: list[Agent]) -> None:
        self.pid = pid
        self.reader: int | None = reader
        self.agents = agents
        self.folders: list[str] = []

    def collect(self) -> list[tuple[str, AgentResult]]:
        """Wait for the worker; return its results (none when it died)."""
        chunks = []
        with os.fdopen(self._take_reader(), "rb") as pipe:
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        status = self._wait()
        if status != 0 or not chunks:
            return []
        try:
            # The worker's own bytes, through a pipe only it and this process hold.
            results, self.folders = pickle.loads(b"".join(chunks))  # noqa: S301
        except (pickle.UnpicklingError, EOFError, ValueError):
            return []
        return results

    def stop(self) -> None:
        """Kill the worker if it still runs (the parent stops early), and reap it."""
        if self.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._wait()
        if self.reader is not None:
            os.close(self._take_reader())

    def _take_reader(self) -> int:
        reader, self.reader = self.reader, None
        if reader is None:
            raise RuntimeError("checkpoint worker: its pipe was read already")
        return reader

    def _wait(self) -> int:
        pid, self.pid = self.pid, 0
        if not pid:
            return 0
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)


def _fork(
    run: RunState,
    agents: list[Agent],
    index: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
) -> _Worker:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns
        os.close(reader)
        _work(run, agents, index, writer, checkpoint)
    os.close(writer)
    return _Worker(pid, reader, agents)


def _work(
    run: RunState,
    agents: list[Agent],
    index: int,
    pipe: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
) -> None:
    status = _WORKER_FAILED
    try:
        # The parent handles a stop: it kills its workers.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if run.writer is not None:
            run.writer.start_worker(index)
        results = [(agent.id, checkpoint(run, agent)) for agent in agents]
        folders = run.writer.folders() if run.writer is not None else []
        payload = memoryview(pickle.dumps((results, folders), pickle.HIGHEST_PROTOCOL))
        while payload:
            payload = payload[os.write(pipe, payload) :]
        status = 0
    finally:
        os._exit(status)
