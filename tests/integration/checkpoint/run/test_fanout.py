"""Agents checkpointed in worker processes (checkpoint.run.fanout): the same bytes as one process;
a worker that fails or dies is the run's problem (exit 1), never a loss of data.

The fleet is the bench's (bench/fleet.py, both gateway eras), big enough that the run forks; the
clock is pinned, so two runs of one fleet write the same bytes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from memwarden.checkpoint.run import agents as checkpoint_agents
from memwarden.checkpoint.run import fanout
from memwarden.checkpoint.run import job as checkpoint_job
from memwarden.indexing.manifest import MANIFEST_NAME
from memwarden.process import cpus
from memwarden.process.runtime import JobContext
from support.cli import run_cli

REPO = Path(__file__).resolve().parents[4]
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


def checkpoint(
    root: Path, monkeypatch, capsys, workers: str, said: list | None = None, exit_code: int = 0
) -> dict:
    """Checkpoint the fleet at `root` with `workers`; return the --json document. The lines of
    stderr are added to `said`."""
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "xdg"))
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_WORKERS", workers)
    result = run_cli(capsys, "--json", "--state-dir", str(root / "state"), "checkpoint")
    assert result.exit_code == exit_code, result.stderr
    if said is not None:
        said += result.stderr.splitlines()
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


def in_workers(monkeypatch, instead):
    """Make `checkpoint_agent` call `instead(agent, checkpoint_it)` in worker processes (this
    process keeps the real one); return the real one."""
    parent = os.getpid()
    real = checkpoint_agents.checkpoint_agent

    def checkpoint_agent(run, agent, *, force):
        if os.getpid() == parent:
            return real(run, agent, force=force)
        return instead(agent, lambda: real(run, agent, force=force))

    monkeypatch.setattr(checkpoint_job, "checkpoint_agent", checkpoint_agent)
    return real


def test_processes_for_takes_enough_agents_per_process(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert fanout.processes_for(1, 500) == 1
    assert fanout.processes_for(3, 500) == 3
    assert fanout.processes_for(4, 2 * fanout.AGENTS_PER_PROCESS) == 2
    assert fanout.processes_for(0, fanout.AGENTS_PER_PROCESS - 1) == 1
    assert fanout.processes_for(0, 1000) == min(cpus.usable_cpus(), fanout.MAX_PROCESSES)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert fanout.processes_for(4, 1000) == 1


def test_processes_for_keeps_to_the_cgroup_cpu_quota(tmp_path, monkeypatch):
    # A unit with CPUQuota=100% on a host with more cores: one process, no worker to wait for.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    proc = tmp_path / "cgroup"
    proc.write_text("0::/system.slice/memwarden-checkpoint.service\n")
    unit = tmp_path / "sys" / "system.slice" / "memwarden-checkpoint.service"
    unit.mkdir(parents=True)
    (unit / "cpu.max").write_text("100000 100000\n")
    monkeypatch.setattr(cpus, "PROC_CGROUP", proc)
    monkeypatch.setattr(cpus, "CGROUP_ROOT", tmp_path / "sys")
    monkeypatch.setattr(sys, "platform", "linux")

    assert fanout.processes_for(0, 1000) == 1
    (unit / "cpu.max").write_text("250000 100000\n")  # two and a half CPUs' time
    assert fanout.processes_for(0, 1000) == 3


def test_workers_write_the_bytes_one_process_writes(pristine, tmp_path, monkeypatch, capsys):
    one = copy_of(pristine, tmp_path / "one")
    three = copy_of(pristine, tmp_path / "three")
    pools = []
    real_start = fanout._start

    def start(*arguments):
        pool = real_start(*arguments)
        pools.append(len(multiprocessing.active_children()))
        return pool

    monkeypatch.setattr(fanout, "_start", start)

    from memwarden.checkpoint.commit.durable_run import DurableWrites

    commits = []
    real_commit = DurableWrites.commit_agents

    def counted(self, run, finished):
        commits.append(len(finished))
        return real_commit(self, run, finished)

    monkeypatch.setattr(DurableWrites, "commit_agents", counted)
    alone = checkpoint(one, monkeypatch, capsys, "1")
    assert pools == []
    assert commits == [AGENTS]
    commits.clear()
    shared = checkpoint(three, monkeypatch, capsys, "3")

    assert pools == [3]
    # What was done was committed while the workers still read, the rest at the end.
    assert len(commits) >= 2 and sum(commits) == AGENTS
    assert indexed(shared, three) == indexed(alone, one)
    assert outcomes(shared) == outcomes(alone)
    assert {outcome for _, _, outcome in outcomes(shared)} == {"written"}
    assert memory(three) == memory(one)
    assert not list((three / "workspaces").rglob("*.tmp"))
    assert not list((three / "xdg").rglob("checkpoint-writers/*"))
    assert no_children_left()


def test_a_workspace_shared_across_batches_is_indexed_as_one_process_indexes_it(
    pristine, tmp_path, monkeypatch, capsys
):
    # The first and the last agent share a workspace: committed in different batches, its
    # manifest is refreshed once both are, and the run reports it once, as one process does.
    # (Their daily-log entries are in the order they were committed: that file may differ.)
    one = share_a_workspace(copy_of(pristine, tmp_path / "one"))
    two = share_a_workspace(copy_of(pristine, tmp_path / "two"))
    refreshes = []
    real_refresh = checkpoint_job._refresh_indexes

    def counted(context, agents, *arguments, **options):
        refreshes.append([agent.id for agent in agents])
        return real_refresh(context, agents, *arguments, **options)

    monkeypatch.setattr(checkpoint_job, "_refresh_indexes", counted)
    alone = checkpoint(one, monkeypatch, capsys, "1")
    refreshes.clear()
    shared = checkpoint(two, monkeypatch, capsys, "2")

    # Refreshed batch by batch while the workers still read, not once at the end; the shared
    # workspace once.
    assert len([batch for batch in refreshes if batch]) >= 2
    last = json.loads((two / "state" / "openclaw.json").read_text())["agents"]["list"][-1]["id"]
    sharing = [batch for batch in refreshes if "main" in batch or last in batch]
    assert len(sharing) == 1 and {"main", last} <= set(sharing[0])
    workspaces = [item["workspace"] for item in shared["index"]]
    assert len(workspaces) == len(set(workspaces)) == AGENTS - 1
    first, last = shared["index"][0], alone["index"][0]
    assert (first["agents"], first["status"], first["files"]) == (
        last["agents"],
        last["status"],
        last["files"],
    )
    assert len(first["agents"]) == 2
    manifests = [root / "workspaces" / "main" / "memory" / MANIFEST_NAME for root in (one, two)]
    assert manifests[1].read_bytes() == manifests[0].read_bytes()
    assert {path: body for path, body in memory(two).items() if not path.startswith("main/")} == {
        path: body for path, body in memory(one).items() if not path.startswith("main/")
    }


def share_a_workspace(root: Path) -> Path:
    """Give the fleet's last agent the first agent's workspace; return the fleet's folder."""
    config_path = root / "state" / "openclaw.json"
    config = json.loads(config_path.read_text())
    agents = config["agents"]["list"]
    agents[-1]["workspace"] = agents[0]["workspace"]
    config_path.write_text(json.dumps(config))
    return root


def test_an_error_in_a_worker_fails_its_agent_with_its_traceback(
    pristine, tmp_path, monkeypatch, capsys
):
    one = copy_of(pristine, tmp_path / "one")
    two = copy_of(pristine, tmp_path / "two")
    alone = checkpoint(one, monkeypatch, capsys, "1")
    broken = outcomes(alone)[5][0]

    def failing(agent, checkpoint_it):
        if agent.id == broken:
            raise RuntimeError("a bug met in a worker")
        return checkpoint_it()

    real = in_workers(monkeypatch, failing)
    said = []
    shared = checkpoint(two, monkeypatch, capsys, "2", said, exit_code=1)

    assert said[0].endswith(f"checkpoint of agent {broken} failed in a worker process:")
    assert said[1].endswith(" Traceback (most recent call last):")
    assert any(line.endswith(" RuntimeError: a bug met in a worker") for line in said)
    failed = [item for item in shared["agents"] if item["outcome"] == "failed"]
    assert [(item["agent"], item["reason"]) for item in failed] == [
        (broken, "failed in a worker process: RuntimeError: a bug met in a worker")
    ]
    others = [item for item in outcomes(shared) if item[0] != broken]
    assert others == [item for item in outcomes(alone) if item[0] != broken]
    assert not list((two / "workspaces").rglob("*.tmp"))
    assert no_children_left()
    monkeypatch.setattr(checkpoint_job, "checkpoint_agent", real)
    again = checkpoint(two, monkeypatch, capsys, "2")  # the next run writes the agent that failed
    assert next(item for item in outcomes(again) if item[0] == broken)[2] == "written"
    assert memory(two) == memory(one)


@pytest.mark.parametrize("dies_after", [0, 3])
def test_a_worker_that_dies_is_the_runs_problem_not_a_loss(
    pristine, tmp_path, monkeypatch, capsys, dies_after
):
    one = copy_of(pristine, tmp_path / "one")
    two = copy_of(pristine, tmp_path / "two")
    done = []

    def dying(agent, checkpoint_it):
        if len(done) == dies_after:
            os._exit(9)  # as the kernel's OOM killer would end it: nothing sent back
        done.append(agent)
        return checkpoint_it()

    alone = checkpoint(one, monkeypatch, capsys, "1")
    in_workers(monkeypatch, dying)
    said = []
    shared = checkpoint(two, monkeypatch, capsys, "2", said, exit_code=1)

    (line,) = [line for line in said if "worker" in line]
    assert "checkpoint: a worker process died (killed, or out of memory?); this process" in line
    assert sorted(outcomes(shared)) == sorted(outcomes(alone))
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

    monkeypatch.setattr(os, "fork", refused)
    said = []
    shared = checkpoint(two, monkeypatch, capsys, "2", said)

    assert len(said) == 1 and "no worker process" in said[0], said
    assert outcomes(shared) == outcomes(alone)
    assert memory(two) == memory(one)
    assert not list((two / "workspaces").rglob("*.tmp"))


def stand_ins(count: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=f"agent{number}") for number in range(count)]


def bare_run():
    from memwarden.checkpoint.run_state import RunState

    run = RunState.__new__(RunState)
    run.writer = None
    return run


def test_a_run_stopped_while_workers_run_kills_and_reaps_them():
    def slow_but_one(run, agent):
        if os.getpid() != parent and agent.id != "agent1":
            time.sleep(60)
        return os.getpid()

    parent = os.getpid()
    agents = stand_ins(2 * fanout.AGENTS_PER_PROCESS)
    started = time.monotonic()
    done = fanout.checkpoint_in_processes(bare_run(), agents, 2, slow_but_one, [])
    next(done)  # the first agent, here; the workers are forked on the next step
    assert next(done)[0].id == "agent1"
    done.close()  # as a SIGTERM raised in this process would end it

    assert no_children_left()
    assert time.monotonic() - started < 30


def test_a_free_worker_takes_the_next_agent():
    agents = stand_ins(4 * AGENTS)

    def slow_once(run, agent):
        if agent.id == "agent1":  # the first agent a worker takes
            time.sleep(0.5)
        return os.getpid()

    done = list(fanout.checkpoint_in_processes(bare_run(), agents, 2, slow_once, []))

    assert sorted(agent.id for agent, _ in done) == sorted(agent.id for agent in agents)
    by_pid = {}
    for agent, pid in done:
        by_pid.setdefault(pid, []).append(agent.id)
    slow = next(ids for ids in by_pid.values() if "agent1" in ids)
    assert len(slow) < len(agents) // 4, by_pid  # the other worker went on meanwhile
    assert no_children_left()
