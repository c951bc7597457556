"""Checkpoint agents in worker processes (Linux): a process pool of `multiprocessing`, forked.

Reading, digesting and rendering an agent is Python work that holds the GIL, so threads do not
run it side by side; processes do. This process checkpoints the first agent itself (the modules
every agent needs are then loaded once, before the fork), then starts the pool: each worker
takes the next agent as soon as it is free, and sends its result back as soon as it has it. A
worker only reads the gateway's files and writes temp files (each flushed to disk); this
process commits every agent (journal, renames) as its result arrives.

`concurrent.futures.ProcessPoolExecutor` on the fork context is the pool: a worker that dies
(killed, out of memory) breaks it at once instead of leaving its agent unanswered. Every
failure is the run's problem (exit 1), never silently made up for: an exception in a worker
fails its agent, with its traceback logged; the agents a dead worker's pool had not finished are
checkpointed here, and the run says so. On a stop (SIGTERM) this process kills its workers
before it records the run; a worker whose parent is gone (SIGKILL) ends too.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from memwarden.checkpoint.outcome import SessionOutcome
from memwarden.checkpoint.run.agents import AgentResult
from memwarden.process.cpus import usable_cpus
from memwarden.process.errors import describe_error
from memwarden.process.log_format import LOGGER_NAME

# multiprocessing and concurrent.futures are imported where a pool starts: most runs need none.
if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.process import BaseProcess

    from memwarden.checkpoint.run_state import RunState
    from memwarden.openclaw.agents import Agent

# Below this many agents per process a fork (a few milliseconds) and the results' trip back cost
# more than the work they share.
AGENTS_PER_PROCESS = 8
MAX_PROCESSES = 4
_STOPS = {signal.SIGTERM, signal.SIGINT}

log = logging.getLogger(LOGGER_NAME)
Checkpoint = Callable[["RunState", "Agent"], "AgentResult"]


def processes_for(setting: int, pending: int) -> int:
    """Return how many worker processes checkpoint `pending` agents (1: none, this process does
    them all): `checkpoint.workers` (0: one per CPU this process may use, at most
    MAX_PROCESSES), never more than keeps AGENTS_PER_PROCESS agents each, and 1 where processes
    cannot be forked safely (anywhere but Linux)."""
    if not sys.platform.startswith("linux") or pending < 2 * AGENTS_PER_PROCESS:
        return 1
    wanted = setting or min(usable_cpus(), MAX_PROCESSES)
    return max(1, min(wanted, pending // AGENTS_PER_PROCESS))


def checkpoint_in_processes(
    run: RunState,
    agents: list[Agent],
    processes: int,
    checkpoint: Checkpoint,
    problems: list[str],
    idle: Callable[[], None] | None = None,
) -> Iterator[tuple[Agent, AgentResult]]:
    """Checkpoint `agents` with `checkpoint(run, agent)` in `processes` worker processes; yield
    each agent with its result as it arrives. An agent whose worker raised fails (the traceback
    is logged); a worker that dies is a line in `problems`, and the agents it left are
    checkpointed here. `idle()` is called whenever this process would wait for a worker."""
    if not agents:
        return
    yield agents[0], checkpoint(run, agents[0])
    import multiprocessing
    import queue
    from concurrent.futures.process import BrokenProcessPool

    rest = agents[1:]
    pool = _start(run, rest, checkpoint, processes)
    if pool is None:  # no fork now (a process limit): here, then
        yield from ((agent, checkpoint(run, agent)) for agent in rest)
        return
    executor, futures, left = pool
    arrived: queue.SimpleQueue[Future[AgentResult | _WorkerError]] = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(arrived.put)
    finished = False
    try:
        for _ in range(len(futures)):
            if arrived.empty() and idle is not None:
                idle()
            future = arrived.get()
            agent = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool:
                left.append(agent)
                continue
            except Exception as error:  # noqa: BLE001 - its result could not come back
                result = _WorkerError(describe_error(error), _traceback_of(error))
            yield agent, _failed(agent, result) if isinstance(result, _WorkerError) else result
        finished = True
    finally:
        if not finished:  # stopped: the workers are killed at once
            _kill(multiprocessing.active_children())
        executor.shutdown(wait=True)
    if left:
        problems.append(
            "checkpoint: a worker process died (killed, or out of memory?); this process "
            f"checkpointed the {len(left)} agent(s) it had not finished"
        )
        yield from ((agent, checkpoint(run, agent)) for agent in left)


def _start(
    run: RunState, agents: list[Agent], checkpoint: Checkpoint, processes: int
) -> (
    tuple[ProcessPoolExecutor, dict[Future[AgentResult | _WorkerError], Agent], list[Agent]] | None
):
    """Fork the pool and hand it every agent; return it with the agent of each of its futures
    and the agents it could not take (a worker died already), or None when the system cannot
    fork now."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # No stop may reach a worker before it is one (a signal there would run this process's
    # handler, and this process's code, in the worker).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    executor = ProcessPoolExecutor(
        min(processes, len(agents)),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_start_worker,
        initargs=(run, agents, checkpoint, mask),
    )
    futures: dict[Future[AgentResult | _WorkerError], Agent] = {}
    try:
        for number, agent in enumerate(agents):  # the first submit forks every worker
            futures[executor.submit(_checkpoint, number)] = agent
    except OSError as error:
        log.warning("checkpoint: no worker process (%s); this process does its agents", error)
        _kill(multiprocessing.active_children())
        executor.shutdown(wait=True)
        return None
    except BrokenProcessPool:
        pass  # a worker died already: the agents not handed out are done here
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return executor, futures, agents[len(futures) :]


def _kill(workers: list[BaseProcess]) -> None:
    for worker in workers:
        worker.kill()
        worker.join()


class _WorkerError(NamedTuple):
    """What a worker sends back for an agent whose checkpoint raised."""

    reason: str
    traceback: str


def _failed(agent: Agent, error: _WorkerError) -> AgentResult:
    """Log the error a worker met checkpointing `agent`, with its traceback; return the agent's
    failed result."""
    log.error("checkpoint of agent %s failed in a worker process:\n%s", agent.id, error.traceback)
    reason = f"failed in a worker process: {error.reason}"
    return AgentResult([SessionOutcome(agent.id, str(agent.workspace), "failed", reason)])


def _traceback_of(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)).rstrip()


# What a worker checkpoints, set when it starts (inherited through the fork, never pickled).
_work: tuple[RunState, list[Agent], Checkpoint]


def _start_worker(
    run: RunState, agents: list[Agent], checkpoint: Checkpoint, mask: set[signal.Signals]
) -> None:
    global _work
    _work = (run, agents, checkpoint)
    for number in _STOPS:  # this process's parent handles a stop: it kills its workers
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if run.writer is not None:
        run.writer.start_worker()
    threading.Thread(target=_end_with_parent, daemon=True).start()


def _end_with_parent() -> None:
    """End this worker once its parent is gone (killed): it would wait for work for ever,
    holding the parent's run lock."""
    import multiprocessing

    multiprocessing.parent_process().join()
    os._exit(1)


def _checkpoint(number: int) -> AgentResult | _WorkerError:
    run, agents, checkpoint = _work
    try:
        return checkpoint(run, agents[number])
    except Exception as error:  # noqa: BLE001 - reported by the parent, with this traceback
        return _WorkerError(describe_error(error), _traceback_of(error))
