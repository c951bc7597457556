"""SIGKILL `memwarden checkpoint` of a 100-agent fleet at many points, rerun, and compare with a
fleet that was never killed: no file torn, no daily-log entry lost or logged twice, no temp
file, writer file or journal row left over.

The fleet is the bench's (`bench/fleet.py`: both gateway eras, small transcripts here). Kill
points are operations that change the disk (file creations, writes, renames, unlinks, fsyncs,
statements of memwarden's state database; see support/kill_runner.py), drawn with a fixed
seed: two in every stage of a reference run, the rest at random. A chain of
runs follows each first kill: the next run is killed too (often while it finishes the killed
run's journal), up to five kills, then a run that completes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SEED = 20261125
KILLS = 56
KILLS_PER_CHAIN = 5
# A run after a kill past the journal commit only finishes the journal: this many operations.
SHORT_RUN = 150
ENTRY_HEADING = "\n### "


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A 100-agent fleet with small transcripts, its files an hour old (trusted by the fast
    skip); return its root."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from fleet import FleetSpec, build_fleet
    finally:
        sys.path.remove(str(ROOT / "bench"))
    fleet = build_fleet(
        tmp_path_factory.mktemp("fleet"), FleetSpec(agents=100, transcript_bytes=4_000, seed=SEED)
    )
    hour_ago = time.time() - 3600
    for path in fleet.root.rglob("*"):
        os.utime(path, (hour_ago, hour_ago), follow_symlinks=False)
    return fleet.root


@pytest.fixture(scope="module")
def runner():
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "support" / "kill_runner.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    yield process
    process.stdin.close()
    process.wait(timeout=30)


class Copy:
    """One copy of the pristine fleet, with its own memwarden storage."""

    def __init__(self, pristine: Path, root: Path) -> None:
        # The gateway's files are only read: linked, not copied. The workspaces are copied.
        shutil.copytree(pristine / "state", root / "state", symlinks=True, copy_function=os.link)
        shutil.copytree(pristine / "workspaces", root / "workspaces", symlinks=True)
        config = root / "state" / "openclaw.json"
        config.unlink()
        config.write_text(
            (pristine / "state" / "openclaw.json").read_text().replace(str(pristine), str(root))
        )
        self.root = root
        self.storage_home = root / "xdg"

    def set_up_storage(self, runner, now: float) -> None:
        """Create memwarden's storage and state without checkpointing anything (a usage
        error once the journal has been looked at)."""
        answer = self.run(runner, now, arguments=["--session", "agent:main:none"])
        assert answer["exit"] == 2, self.stderr()

    def run(
        self,
        runner,
        now: float,
        kill_at: int | None = None,
        labels: bool = False,
        arguments: list[str] = (),
    ) -> dict:
        job = {
            "args": ["--state-dir", str(self.root / "state"), "checkpoint", "-q", *arguments],
            "env": {
                "XDG_STATE_HOME": str(self.storage_home),
                "MEMWARDEN_HISTORY_ENABLED": "false",
                "MEMWARDEN_CHECKPOINT_WORKERS": "1",  # the same order of operations every run
            },
            "now": now,
            "kill_at": kill_at,
            "labels": labels,
            "stderr": str(self.root.parent / f"{self.root.name}.stderr"),
        }
        runner.stdin.write(json.dumps(job) + "\n")
        runner.stdin.flush()
        return json.loads(runner.stdout.readline())

    def stderr(self) -> str:
        return (self.root.parent / f"{self.root.name}.stderr").read_text()

    def memory(self) -> dict[str, bytes]:
        workspaces = self.root / "workspaces"
        return {
            str(path.relative_to(workspaces)): path.read_bytes()
            for path in sorted(workspaces.rglob("*"))
            if path.is_file()
        }

    def leftovers(self) -> list[str]:
        """Temp files, writer files and journal rows still there."""
        found = [str(path) for path in (self.root / "workspaces").rglob("*.tmp")]
        found += [str(path) for path in self.storage_home.rglob("checkpoint-writers/*")]
        for database in self.storage_home.rglob("state.db"):
            connection = sqlite3.connect(database)
            rows = connection.execute("SELECT target FROM checkpoint_journal").fetchall()
            connection.close()
            found += [f"journal row {target}" for (target,) in rows]
        return found


def entries(files: dict[str, bytes]) -> Counter[str]:
    counted: Counter[str] = Counter()
    for name, data in files.items():
        if Path(name).name[:4].isdigit() and name.endswith(".md"):
            text = data.decode()
            counted.update(f"{name}: {entry}" for entry in text.split(ENTRY_HEADING)[1:])
    return counted


def stage(label: str) -> str:
    """Return the stage of a run an operation belongs to."""
    if label.startswith("fsync temp file of") and label.endswith(("daily log", "handoff")):
        return "fsync of the staged files"
    if label.startswith(("create temp file of", "write temp file of")):
        if label.endswith(("daily log", "handoff")):
            return "staging (temp files)"
        return "bootstrap manifests and INDEX.md"
    if label.startswith("rename"):
        return (
            "bootstrap manifests and INDEX.md"
            if "bootstrap" in label or "INDEX" in label
            else ("renames")
        )
    if label.startswith("unlink temp file of"):
        return "removal of temp files"
    if label.startswith("sql") and any(
        table in label
        for table in ("read_positions", "events", "checkpoint_agents", "BEGIN", "COMMIT")
    ):
        return "journal transaction"
    if label.startswith(("sql INSERT checkpoint_journal", "sql UPDATE checkpoint_journal")):
        return "journal transaction"
    if label == "sql DELETE checkpoint_journal":
        return "journal clear"
    if "lock file" in label or "writer" in label:
        return "lock and writer files"
    return "state setup and run records"


def first_kill_points(labels: list[str], rng: random.Random) -> tuple[list[int], list[int]]:
    """Return two points of every stage of a run (two of its operations, at random), and
    points at random for the rest."""
    by_stage: dict[str, list[int]] = {}
    for index, label in enumerate(labels, start=1):
        by_stage.setdefault(stage(label), []).append(index)
    every_stage = [
        point
        for _, indexes in sorted(by_stage.items())
        for point in rng.sample(indexes, min(2, len(indexes)))
    ]
    return every_stage, [rng.randint(1, len(labels)) for _ in range(KILLS)]


@pytest.mark.timeout(600)
def test_checkpoint_killed_at_random_points_ends_like_a_run_never_killed(
    pristine, runner, tmp_path
):
    now = time.time()
    reference = Copy(pristine, tmp_path / "reference")
    first = reference.run(runner, now, labels=True)
    assert first["exit"] == 0
    expected = reference.memory()
    expected_entries = entries(expected)
    assert sum(expected_entries.values()) == 100  # one entry per agent's main session
    labels = first["labels"]

    # A run after a kill does not set up memwarden's state again: its operations, for the
    # points of a run killed after another.
    settled = Copy(pristine, tmp_path / "reference-after-setup")
    settled.set_up_storage(runner, now)
    later_labels = settled.run(runner, now, labels=True)["labels"]
    journal_starts = later_labels.index("sql INSERT checkpoint_journal") + 1
    rng = random.Random(SEED)
    kills: list[dict] = []
    torn, lost, duplicated, stray = [], 0, 0, []
    every_stage, at_random = first_kill_points(labels, rng)
    for chain, point in enumerate(every_stage + at_random):
        if chain >= len(every_stage) and len(kills) >= KILLS:
            break
        copy = Copy(pristine, tmp_path / f"chain{chain}")
        kill_at, run = point, 0
        while run < KILLS_PER_CHAIN:
            answer = copy.run(runner, now, kill_at=kill_at)
            if answer["exit"] != -9:  # the run ended before that point
                assert answer["exit"] == 0, copy.stderr()
                break
            kills.append({**answer["kill"], "run": run})
            run += 1
            # The next run: a short one (it finishes the journal), killed anywhere in it; or,
            # after a kill before the commit, a whole run again, killed at its commit or later.
            if answer["kill"]["committed"]:
                kill_at = rng.randint(1, SHORT_RUN)
            else:
                kill_at = rng.randint(journal_starts, len(later_labels))
        final = copy.run(runner, now)
        assert final["exit"] == 0, copy.stderr()
        found = copy.memory()
        found_entries = entries(found)
        lost += sum((expected_entries - found_entries).values())
        duplicated += sum((found_entries - expected_entries).values())
        torn += [f"chain {chain}: {name}" for name in found if found[name] != expected.get(name)]
        torn += [f"chain {chain}: {name} missing" for name in expected if name not in found]
        stray += copy.leftovers()

    covered = Counter(stage(kill["label"]) for kill in kills)
    summary = (
        f"{len(kills)} kills ({sum(k['run'] > 0 for k in kills)} in a run after a kill, "
        f"{sum(k['committed'] for k in kills)} after the journal commit) in: "
        + ", ".join(f"{name} x{count}" for name, count in sorted(covered.items()))
    )
    print(summary)
    assert len(kills) >= 50, summary
    assert (torn, lost, duplicated, stray) == ([], 0, 0, []), summary
    assert set(covered) == {stage(label) for label in labels}, summary
