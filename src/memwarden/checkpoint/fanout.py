"""Checkpoint agents in worker processes, on every core (Linux).

Reading, digesting and rendering an agent is Python work that holds the GIL, so threads do not
run it side by side; processes do. The parent checkpoints its first agent alone (the modules
and templates every agent needs are then loaded once, before the fork), forks the workers,
checkpoints its own share, then takes the workers' results as they come. A worker only reads
the gateway's files and writes temp files: the parent commits every agent (journal, renames),
as for agents it did itself. The parent's share is the smaller one: whenever it would wait for
a worker, it calls `idle`, where the job commits the agents done so far, so that work runs
while the workers still read.

A worker sends each agent's result as soon as it has it, pickled through a pipe, and ends with
`os._exit`, so nothing of the parent (state DB, locks, buffered output) is closed or flushed
twice. A worker that dies (killed, out of memory) costs only time: the parent checkpoints the
agents it did not send again, and the temp files it left are removed with the run's (their
folders are in the writer file). On a stop (SIGTERM) the parent kills its workers before it
records the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from memwarden.log_format import LOGGER_NAME

if TYPE_CHECKING:
    from memwarden.checkpoint.agents import AgentResult
    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent

# Below this many agents per process a fork (a few milliseconds) and the results' trip back cost
# more than the work they share.
AGENTS_PER_PROCESS = 8
MAX_PROCESSES = 4
# The parent's share of the agents, against a worker's: it also commits what is done.
PARENT_SHARE = 0.5
_WORKER_FAILED = 70
_FRAME_HEADER = struct.Struct("<Q")
# Room in the pipe for a worker's results while the parent is busy (Linux caps it, often at
# 1 MiB); a worker that fills it waits for the parent.
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

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
) -> Iterator[tuple[Agent, AgentResult]]:
    """Checkpoint `agents` with `checkpoint(run, agent)` in `processes` processes (this one
    included); yield each agent with its result as it is here. `idle()` is called whenever this
    process would otherwise wait for a worker's next result."""
    if not agents:
        return
    yield agents[0], checkpoint(run, agents[0])
    rest = agents[1:]
    own = round(len(rest) / processes * PARENT_SHARE)
    shares = [rest[:own], *(rest[own + index :: processes - 1] for index in range(processes - 1))]
    workers: list[_Worker] = []
    own_share = shares[0]
    try:
        for index, share in enumerate(shares[1:], start=1):
            if not share:
                continue
            worker = _fork(run, share, index, checkpoint, [w.reader for w in workers])
            if worker is None:  # no fork now (a process limit, no memory): here, then
                own_share = own_share + share
            else:
                workers.append(worker)
        for agent in own_share:
            yield agent, checkpoint(run, agent)
        for worker in workers:
            sent = {}
            for agent_id, result in worker.results(idle):
                sent[agent_id] = result
                yield worker.by_id[agent_id], result
            for agent in worker.agents:  # a worker that died: the agents it did not send, here
                if agent.id not in sent:
                    yield agent, checkpoint(run, agent)
    finally:
        for worker in workers:
            worker.stop()


class _Worker:
    """A forked worker: its process, the pipe its results come through, and its agents."""

    def __init__(self, pid: int, reader: int, agents: list[Agent]) -> None:
        self.pid = pid
        self.reader: int | None = reader
        self.agents = agents
        self.by_id = {agent.id: agent for agent in agents}
        self._received = bytearray()

    def results(self, idle: Callable[[], None] | None) -> Iterator[tuple[str, AgentResult]]:
        """Yield (agent id, result) as the worker sends them, until it ends. Nothing more once
        it died (its last, cut frame is dropped)."""
        ended = False
        while not ended:
            frame = self._next_frame()
            if frame is None:
                if not self._receive(idle):
                    break
                continue
            kind, *content = frame
            if kind == "agent":
                yield content[0], content[1]
            else:
                ended = True
        self._close()

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
    agents: list[Agent],
    index: int,
    checkpoint: Callable[[RunState, Agent], AgentResult],
    other_pipes: list[int | None],
) -> _Worker | None:
    """Fork a worker for `agents`; return it, or None when the system cannot fork now."""
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
            _work(run, agents, index, writer, checkpoint, [reader, *other_pipes], mask)
        finally:
            os._exit(_WORKER_FAILED)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(writer)
    return _Worker(pid, reader, agents)


def _work(
    run: RunState,
    agents: list[Agent],
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
    data = pickle.dumps(frame, pickle.HIGHEST_PROTOCOL)
    view = memoryview(_FRAME_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(pipe, view) :]
