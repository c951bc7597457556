"""Checkpoint agents in worker processes, on every core (Linux).

Reading, digesting and rendering an agent is Python work that holds the GIL, so threads do not
run it side by side; processes do. The parent checkpoints its first agent alone (the modules
and templates every agent needs are then loaded once, before the fork) and forks the workers.
The other agents are handed out as they are asked for, through a pipe of agent numbers every
process reads from: a worker takes its next agent as soon as it is free, the parent only between
commits (`between()` commits what is done once there is enough), so the less loaded process
does more. On a first run the parent's commits are the longer work, on a run of a few new lines
the workers' reading: neither waits for the other. Once no agent is left to take, the parent
calls `idle` whenever it would wait for a worker, where the job commits the agents done so far.
A worker only reads the gateway's files and writes temp files: the parent commits every agent
(journal, renames), as for agents it did itself.

A worker sends each agent's result as soon as it has it, pickled through a pipe, and ends with
`os._exit`, so nothing of the parent (state DB, locks, buffered output) is closed or flushed
twice. A worker that dies (killed, out of memory) costs only time: the parent checkpoints the
agents it took and did not send, and the temp files it left are removed with the run's (their
folders are in the writer file). On a stop (SIGTERM) the parent kills its workers before it
records the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from memwarden.files import write_all
from memwarden.log_format import LOGGER_NAME

if TYPE_CHECKING:
    from memwarden.checkpoint.agents import AgentResult
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent

# Below this many agents per process a fork (a few milliseconds) and the results' trip back cost
# more than the work they share.
AGENTS_PER_PROCESS = 8
MAX_PROCESSES = 4
_WORKER_FAILED = 70
_FRAME_HEADER = struct.Struct("<Q")
# Room in the pipe for a worker's results while the parent is busy (Linux caps it, often at
# 1 MiB); a worker that fills it waits for the parent.
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
# The numbers of the agents to take are written at once, before the fork, into a pipe that holds
# them whole at its smallest (one page, once the user's pipe quota is spent): at most this many,
# each for a run of agents when there are more.
_TAKE = struct.Struct("<I")
_MAX_TAKES = 4096 // _TAKE.size

log = logging.getLogger(LOGGER_NAME)


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
    idle: Callable[[], None] | None = None,
    between: Callable[[], None] | None = None,
) -> Iterator[tuple[Agent, AgentResult]]:
    """Checkpoint `agents` with `checkpoint(run, agent)` in `processes` processes (this one
    included); yield each agent with its result as it is here. `between()` is called before
    this process takes an agent itself, `idle()` whenever it would otherwise wait for a worker's
    next result."""
    if not agents:
        return
    import pickle  # noqa: F401 - results travel pickled: loaded once, before the forks

    yield agents[0], checkpoint(run, agents[0])
    rest = agents[1:]
    takes = _Takes(rest)
    workers: list[_Worker] = []
    sent: set[str] = set()
    try:
        for index in range(1, min(processes, len(rest) + 1)):  # never more workers than agents
            worker = _fork(run, takes, index, checkpoint, [w.reader for w in workers])
            if worker is not None:  # else no fork now (a process limit, no memory): here, then
                workers.append(worker)
        while True:
            for worker in workers:
                for agent_id, result in worker.results_here():
                    sent.add(agent_id)
                    yield takes.by_id[agent_id], result
            if between is not None:
                between()
            taken = takes.take()
            if taken is None:
                break
            for agent in taken:
                sent.add(agent.id)
                yield agent, checkpoint(run, agent)
        for worker in workers:
            for agent_id, result in worker.results(idle):
                sent.add(agent_id)
                yield takes.by_id[agent_id], result
        for agent in rest:  # taken by a worker that died before it sent them: here
            if agent.id not in sent:
                yield agent, checkpoint(run, agent)
    finally:
        takes.close()
        for worker in workers:
            worker.stop()


class _Takes:
    """The agents still to take, as numbers in a pipe every process reads from: each read takes
    the next run of agents, whoever makes it."""

    def __init__(self, agents: Sequence[Agent]) -> None:
        self.agents = agents
        self.by_id = {agent.id: agent for agent in agents}
        self.run = -(-len(agents) // _MAX_TAKES) or 1  # agents a number stands for
        self.reader: int | None
        self.reader, writer = os.pipe()
        try:
            write_all(
                writer, b"".join(_TAKE.pack(start) for start in range(0, len(agents), self.run))
            )
        finally:
            os.close(writer)  # read to its end, the pipe says no agent is left

    def take(self) -> Sequence[Agent] | None:
        """Return the next run of agents to checkpoint, or None when none is left."""
        if self.reader is None:
            return None
        number = os.read(self.reader, _TAKE.size)
        if len(number) < _TAKE.size:  # the end: every number was written before any read
            return None
        (start,) = _TAKE.unpack(number)
        return self.agents[start : start + self.run]

    def __iter__(self) -> Iterator[Agent]:
        while (taken := self.take()) is not None:
            yield from taken

    def close(self) -> None:
        if self.reader is not None:
            os.close(self.reader)
            self.reader = None


class _Worker:
    """A forked worker: its process and the pipe its results come through."""

    def __init__(self, pid: int, reader: int) -> None:
        self.pid = pid
        self.reader: int | None = reader
        self._received = bytearray()
        self._ended = False

    def results_here(self) -> Iterator[tuple[str, AgentResult]]:
        """Yield (agent id, result) for what the worker has sent so far, without waiting."""
        if self.reader is not None and _readable(self.reader):
            self._receive(None)
        yield from self._frames()

    def results(self, idle: Callable[[], None] | None) -> Iterator[tuple[str, AgentResult]]:
        """Yield (agent id, result) as the worker sends them, until it ends. Nothing more once
        it died (its last, cut frame is dropped)."""
        while True:
            yield from self._frames()
            if self._ended or not self._receive(idle):
                break
        self._close()

    def _frames(self) -> Iterator[tuple[str, AgentResult]]:
        while not self._ended:
            frame = self._next_frame()
            if frame is None:
                return
            kind, *content = frame
            if kind == "agent":
                yield content[0], content[1]
            else:
                self._ended = True

    def _receive(self, idle: Callable[[], None] | None) -> bool:
        """Read what the worker sent; call `idle` first when that means waiting. Return False
        at the end of the pipe."""
        reader = self.reader
        if reader is None:
            return False
        if idle is not None and not _readable(reader):
            idle()
        chunk = os.read(reader, _PIPE_BYTES)
        self._received += chunk
        return bool(chunk)

    def _next_frame(self) -> tuple | None:
        if len(self._received) < _FRAME_HEADER.size:
            return None
        (size,) = _FRAME_HEADER.unpack_from(self._received)
        end = _FRAME_HEADER.size + size
        if len(self._received) < end:
            return None
        import pickle

        # The worker's own bytes, through a pipe only it and this process hold.
        frame = pickle.loads(self._received[_FRAME_HEADER.size : end])  # noqa: S301
        del self._received[:end]
        return frame

    def _close(self, *, stopped: bool = False) -> None:
        if self.reader is not None:
            os.close(self.reader)
            self.reader = None
        if self.pid:
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
            code = os.waitstatus_to_exitcode(status)
            if code != 0 and not stopped:
                log.warning(
                    "checkpoint: a worker process ended with %s; this process checkpointed the "
                    "agents it had not finished",
                    f"signal {-code}" if code < 0 else f"exit {code}",
                )

    def stop(self) -> None:
        """Kill the worker if it still runs (the parent stops early), and reap it."""
        if self.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self._close(stopped=True)


def _fork(
    run: RunState,
    takes: _Takes,
    index: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
    other_pipes: list[int | None],
) -> _Worker | None:
    """Fork a worker that takes its agents from `takes`; return it, or None when the system
    cannot fork now."""
    reader, writer = os.pipe()
    with contextlib.suppress(OSError):  # a smaller pipe only makes the worker wait sooner
        fcntl.fcntl(writer, _F_SETPIPE_SZ, _PIPE_BYTES)
    # No stop may reach the worker before it is one (a signal there would run the parent's
    # handler, and the parent's code, in the worker).
    stops = {signal.SIGTERM, signal.SIGINT}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        pid = os.fork()
    except OSError as error:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(reader)
        os.close(writer)
        log.warning("checkpoint: no worker process (%s); this process does its agents", error)
        return None
    if pid == 0:  # the worker: never returns into the parent's code, whatever happens
        try:
            _work(run, iter(takes), index, writer, checkpoint, [reader, *other_pipes], mask)
        finally:
            os._exit(_WORKER_FAILED)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(writer)
    return _Worker(pid, reader)


def _work(
    run: RunState,
    agents: Iterator[Agent],
    index: int,
    pipe: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
    inherited: list[int | None],
    signals: set[signal.Signals],
) -> None:
    status = _WORKER_FAILED
    try:
        # The parent handles a stop: it kills its workers.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, signals)
        for descriptor in inherited:  # the parent's ends of every worker's pipe
            if descriptor is not None:
                os.close(descriptor)
        if run.writer is not None:
            run.writer.start_worker(index)
        for agent in agents:
            _send(pipe, ("agent", agent.id, checkpoint(run, agent)))
        _send(pipe, ("end",))
        status = 0
    finally:
        os._exit(status)


def _readable(descriptor: int) -> bool:
    poller = select.poll()
    poller.register(descriptor, select.POLLIN)
    return bool(poller.poll(0))


def _send(pipe: int, frame: tuple) -> None:
    import pickle

    data = pickle.dumps(frame, pickle.HIGHEST_PROTOCOL)
    write_all(pipe, _FRAME_HEADER.pack(len(data)) + data)
