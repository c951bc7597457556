"""Agents checkpointed in worker processes (checkpoint.fanout): the same bytes as one process,
and a worker that dies costs time, never data.

The fleet is the bench's (bench/fleet.py, both gateway eras), big enough that the run forks; the
clock is pinned, so two runs of one fleet write the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from memwarden.checkpoint import fanout
from memwarden.runtime import JobContext
from support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
AGENTS = 3 * fanout.AGENTS_PER_PROCESS + 1

sys.path.insert(0, str(REPO / "bench"))
from fleet import FleetSpec, build_fleet  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux")


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    fleet = build_fleet(
        tmp_path_factory.mktemp("fleet"), FleetSpec(agents=AGENTS, transcript_bytes=20_000), now=NOW
    )
    return fleet.root


def copy_of(pristine: Path, root: Path) -> Path:
    shutil.copytree(pristine, root, symlinks=True)
    config = root / "state" / "openclaw.json"
    config.write_text(config.read_text().replace(str(pristine), str(root)))
    return root


def checkpoint(root: Path, monkeypatch, capsys, workers: str, warnings: list | None = None) -> dict:
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "xdg"))
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_WORKERS", workers)
    result = run_cli(capsys, "--json", "--state-dir", str(root / "state"), "checkpoint")
    assert result.exit_code == 0, result.stderr
    if warnings is not None:
        warnings += [line for line in result.messages if "worker" in line]
    return result.json()


def memory(root: Path) -> dict[str, bytes]:
    workspaces = root / "workspaces"
    return {
        str(path.relative_to(workspaces)): path.read_bytes()
        for path in sorted(workspaces.rglob("*"))
        if path.is_file()
    }


def outcomes(document: dict) -> list[tuple[str, str, str]]:
    return [(item["agent"], item["session_key"], item["outcome"]) for item in document["agents"]]


def indexed(document: dict, root: Path) -> str:
    """The run's index outcomes, in their order, with the fleet's folder left out."""
    return json.dumps(document["index"]).replace(str(root), "<fleet>")


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_processes_for_takes_enough_agents_per_process(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert fanout.processes_for(1, 500) == 1
    assert fanout.processes_for(3, 500) == 3
    assert fanout.processes_for(4, 2 * fanout.AGENTS_PER_PROCESS) == 2
    assert fanout.processes_for(0, fanout.AGENTS_PER_PROCESS - 1) == 1
    cores = len(os.sched_getaffinity(0))
    assert fanout.processes_for(0, 1000) == min(cores, fanout.MAX_PROCESSES)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert fanout.processes_for(4, 1000) == 1


def test_workers_write_the_bytes_one_process_writes(pristine, tmp_path, monkeypatch, capsys):
    one = copy_of(pristine, tmp_path / "one")
    three = copy_of(pristine, tmp_path / "three")
    forks = []
    real_fork = fanout._fork
    monkeypatch.setattr(fanout, "_fork", lambda *a: forks.append(a[2]) or real_fork(*a))

    from memwarden.checkpoint.durable_run import DurableWrites

    commits = []
    real_commit = DurableWrites.commit_agents

    def counted(self, run, finished):
        commits.append(len(finished))
        return real_commit(self, run, finished)

    monkeypatch.setattr(DurableWrites, "commit_agents", counted)
    alone = checkpoint(one, monkeypatch, capsys, "1")
    assert forks == []
    assert commits == [AGENTS]
    commits.clear()
    shared = checkpoint(three, monkeypatch, capsys, "3")

    assert forks == [1, 2]
    # What was done was committed while the workers still read, the rest at the end.
    assert len(commits) >= 2 and sum(commits) == AGENTS
    assert indexed(shared, three) == indexed(alone, one)
    assert outcomes(shared) == outcomes(alone)
    assert {outcome for _, _, outcome in outcomes(shared)} == {"written"}
    assert memory(three) == memory(one)
    assert not list((three / "workspaces").rglob("*.tmp"))
    assert not list((three / "xdg").rglob("checkpoint-writers/*"))
    assert no_children_left()


@pytest.mark.parametrize("dies_after", [0, 3])
def test_a_worker_that_dies_costs_time_not_data(
    pristine, tmp_path, monkeypatch, capsys, dies_after
):
    one = copy_of(pristine, tmp_path / "one")
    two = copy_of(pristine, tmp_path / "two")
    real_work = fanout._work

    def dying_work(run, agents, index, pipe, checkpoint_one, *rest):
        done = []

        def checkpoint_until(run, agent):
            if len(done) == dies_after:
                os._exit(9)  # as the kernel's OOM killer would end it: nothing sent back
            done.append(agent)
            return checkpoint_one(run, agent)

        real_work(run, agents, index, pipe, checkpoint_until, *rest)

    alone = checkpoint(one, monkeypatch, capsys, "1")
    monkeypatch.setattr(fanout, "_work", dying_work)
    warnings = []
    shared = checkpoint(two, monkeypatch, capsys, "2", warnings)

    assert warnings == [
        "memwarden: checkpoint: a worker process ended with exit 9; this process checkpointed "
        "the agents it had not finished"
    ]
    assert outcomes(shared) == outcomes(alone)
    assert memory(two) == memory(one)
    # The temp files it wrote before it died are removed with the run's.
    assert not list((two / "workspaces").rglob("*.tmp"))
    assert no_children_left()


def test_no_fork_possible_checkpoints_everything_here(pristine, tmp_path, monkeypatch, capsys):
    one = copy_of(pristine, tmp_path / "one")
    two = copy_of(pristine, tmp_path / "two")
    alone = checkpoint(one, monkeypatch, capsys, "1")

    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")  # as under TasksMax

    monkeypatch.setattr(fanout.os, "fork", refused)
    warnings = []
    shared = checkpoint(two, monkeypatch, capsys, "2", warnings)

    assert len(warnings) == 1 and "no worker process" in warnings[0], warnings
    assert outcomes(shared) == outcomes(alone)
    assert memory(two) == memory(one)
    assert not list((two / "workspaces").rglob("*.tmp"))


def test_a_run_stopped_while_workers_run_kills_and_reaps_them(pristine, tmp_path, monkeypatch):
    from memwarden.checkpoint.run_state import RunState

    agents = [
        SimpleNamespace(id=f"agent{number}") for number in range(2 * fanout.AGENTS_PER_PROCESS)
    ]
    waited = []

    def slow_in_workers(run, agent):
        if os.getpid() != parent:
            import time

            time.sleep(60)
        waited.append(agent)
        return None

    parent = os.getpid()
    run = RunState.__new__(RunState)
    run.writer = None
    done = fanout.checkpoint_in_processes(run, agents, 2, slow_in_workers)
    next(done)  # the first agent, here; the worker is forked on the next step
    next(done)
    done.close()  # as a SIGTERM raised in the parent would end it

    assert no_children_left()
    assert len(waited) == 2


def checkpoint_where(agents, *, slow_in_worker: float = 0.0, slow_between: float = 0.0):
    """Checkpoint `agents` (stand-ins) in two processes; return the pid each one was done in."""
    import time

    from memwarden.checkpoint.run_state import RunState

    def where(run, agent):
        if os.getpid() != parent:
            time.sleep(slow_in_worker)
        return os.getpid()

    parent = os.getpid()
    run = RunState.__new__(RunState)
    run.writer = None
    done = fanout.checkpoint_in_processes(
        run, agents, 2, where, between=lambda: time.sleep(slow_between)
    )
    return [(agent.id, pid) for agent, pid in done], parent


@pytest.mark.parametrize("busy", ["worker", "parent"])
def test_the_less_loaded_process_takes_more_agents(busy):
    agents = [SimpleNamespace(id=f"agent{number}") for number in range(4 * AGENTS)]
    if busy == "worker":  # a run of new lines: the worker's reading is the longer work
        done, parent = checkpoint_where(agents, slow_in_worker=0.05)
    else:  # a first run: the parent's commits are
        done, parent = checkpoint_where(agents, slow_between=0.02)

    assert sorted(agent_id for agent_id, _ in done) == sorted(agent.id for agent in agents)
    here = sum(pid == parent for _, pid in done)
    if busy == "worker":
        assert here > len(agents) * 3 // 4, done
    else:
        assert here < len(agents) // 4, done
    assert no_children_left()
