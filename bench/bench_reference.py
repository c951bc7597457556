"""Benchmark: `memwarden checkpoint` side by side with the script it replaces, at default settings.

The reference is `scripts/memory-checkpoint.js` of drewTuzson/clawdbot-memory-infra (Node). The
bench fetches nothing: point MEMWARDEN_BENCH_REFERENCE at a checkout of that repository (the
folder holding `scripts/memory-checkpoint.js`); when it is set and `node` is on PATH, both run
on the same fleet, one run of each in turn, and the section reports both medians and their ratio
(reference / memwarden: above 1, memwarden is faster). Without them, memwarden's own figures.

Targets (issue 15, memwarden at its default settings, memory history on): 100 agents x 2 MB,
first run: ratio ≥ 1.0; one new turn each: ratio ≥ 1.2; 10 of the 100 agents with a new turn:
ratio ≥ 3; nothing new: ≤ 0.15 s; memory history adds ≤ 100 ms to a run of 100 changed agents
(one new turn each, the same run with history off, on its own copy of the fleet, interleaved);
peak RSS ≤ 60 MB in every scenario.

The fleet: `bench/fleet.py`, 100 agents, every one in the file era (the reference reads only
`agents/<id>/sessions/*.jsonl`). The reference gets its own home (`CLAWDBOT_HOME`: a
`clawdbot.json` naming the same agents with workspaces of its own, and `agents` linked to the
fleet's), so the two never read each other's output. It checkpoints the newest transcript of each
agent: the cron transcripts are dated an hour before the main ones, so both read the same main
transcript; `SESSION_STALE_HOURS` is raised so a fleet built days ago is not skipped as stale.

Run: `.venv/bin/python bench/run.py reference` (writes bench/REPORT.md), or this file alone.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from fleet import Fleet, FleetSpec, append_turns, build_fleet  # noqa: E402
from harness import (  # noqa: E402
    REPO,
    Command,
    Measurement,
    Report,
    child_environment,
    default_settings_environment,
    machine_info,
    measure_interleaved,
)

from memwarden.checkpoint.read.unchanged import RACY_SECONDS  # noqa: E402

REFERENCE_VARIABLE = "MEMWARDEN_BENCH_REFERENCE"
REFERENCE_SCRIPT = Path("scripts", "memory-checkpoint.js")
MEMWARDEN = str(REPO / ".venv" / "bin" / "memwarden")
FLEETS = BENCH_DIR / ".fleet"
WORK = FLEETS / "reference-work"
MB = 1_000_000
SPEC = FleetSpec(agents=100, transcript_bytes=2 * MB, sqlite_every=0)
REPEAT = 11  # the reference and memwarden differ by tens of ms on a machine that drifts by more
CHANGED_FEW = 10

FIRST = "first run"
ONE_TURN = "one new turn each"
FEW = f"{CHANGED_FEW} of {SPEC.agents} agents with a new turn"
NOTHING = "nothing new"
# Ratio targets (reference / memwarden) and the absolute ones.
RATIO_TARGETS = {FIRST: 1.0, ONE_TURN: 1.2, FEW: 3.0}
NOTHING_NEW_S = 0.15
HISTORY_ADDS_MS = 100.0
PEAK_RSS_MB = 60.0


@dataclass(frozen=True)
class Reference:
    """Where the reference script and node are (both found)."""

    script: Path
    node: str


def find_reference(env: dict[str, str] | None = None) -> tuple[Reference | None, str]:
    """Return the reference (or None) and a sentence saying what was found."""
    env = dict(os.environ) if env is None else env
    folder = env.get(REFERENCE_VARIABLE, "")
    if not folder:
        return None, f"{REFERENCE_VARIABLE} is not set: memwarden's own figures only."
    script = Path(folder).expanduser() / REFERENCE_SCRIPT
    if not script.is_file():
        return None, f"{REFERENCE_VARIABLE}={folder} has no {REFERENCE_SCRIPT}: memwarden only."
    node = shutil.which("node", path=env.get("PATH"))
    if node is None:
        return None, "`node` is not on PATH: memwarden's own figures only."
    return Reference(script, node), f"reference: `{script}` run by `{node}`."


def reference_home(fleet: Fleet) -> Path:
    """Lay out the reference's CLAWDBOT_HOME beside the fleet: its config (same agents, its own
    workspaces) and a link to the fleet's agents; date the cron transcripts an hour before the
    main ones. Return the home."""
    home = WORK / "reference-home"
    home.mkdir(parents=True, exist_ok=True)
    agents = home / "agents"
    if not agents.is_symlink():
        agents.symlink_to(fleet.state_dir / "agents")
    listing = [
        {"id": agent, "workspace": str(home / "workspaces" / agent)}
        for agent in sorted(fleet.workspaces)
    ]
    (home / "clawdbot.json").write_bytes(orjson.dumps({"agents": {"list": listing}}))
    for agent in fleet.workspaces:
        sessions = fleet.state_dir / "agents" / agent / "sessions"
        store = orjson.loads((sessions / "sessions.json").read_bytes())
        main = sessions / f"{store[f'agent:{agent}:main']['sessionId']}.jsonl"
        cron = sessions / f"{store[f'agent:{agent}:cron:nightly']['sessionId']}.jsonl"
        older = main.stat().st_mtime - 3600
        os.utime(cron, (older, older))
    return home


def forget_memwarden(work: Path, fleet: Fleet) -> None:
    """Remove what memwarden's runs left: its state (DB, history) and every memory folder."""
    shutil.rmtree(work / "state", ignore_errors=True)
    for workspace in fleet.workspaces.values():
        shutil.rmtree(workspace / "memory", ignore_errors=True)
        (workspace / "memory").mkdir()


def forget_reference(home: Path) -> None:
    shutil.rmtree(home / "workspaces", ignore_errors=True)


def memwarden_environment(work: Path, **extra: str) -> dict[str, str]:
    """The child's environment: memwarden at its default settings (see harness)."""
    return default_settings_environment(work, **extra)


def run(report: Report) -> None:
    reference, found = find_reference()
    section = report.section(
        "reference",
        "`memwarden -q --state-dir <fleet> checkpoint` at its default settings (memory history "
        "on, INDEX.md refreshed after the run) as a child process, side by side with the script "
        "it replaces, `scripts/memory-checkpoint.js` of drewTuzson/clawdbot-memory-infra (Node, "
        f"from a checkout named by `{REFERENCE_VARIABLE}`), on the same fleet of "
        f"{SPEC.agents} agents x 2 MB (`bench/fleet.py`, every agent in the file era, the only "
        f"one the reference reads). Medians of {REPEAT} runs after a warm-up; one run of each "
        "command in turn, so the machine's drift affects both alike; the harness's writes "
        f"flushed before each run. *Ratio*: the reference's median / memwarden's (above 1: "
        f"memwarden is faster). {found}",
    )
    fleet = build_fleet(FLEETS, SPEC)
    twin = build_fleet(FLEETS / "history-off", SPEC)
    home = reference_home(fleet)
    on_work, off_work = WORK / "memwarden", WORK / "memwarden-history-off"
    on_env = memwarden_environment(on_work)
    off_env = memwarden_environment(off_work, MEMWARDEN_HISTORY_ENABLED="false")

    def memwarden(which: Fleet) -> list[str]:
        return [MEMWARDEN, "-q", "--state-dir", str(which.state_dir), "checkpoint"]

    def with_reference(commands: dict[str, Command], prepare=None) -> dict[str, Command]:
        if reference is not None:
            env = child_environment(
                {"PATH": os.environ.get("PATH", os.defpath)},
                CLAWDBOT_HOME=str(home),
                HOME=str(home),
                TZ="UTC",
                SESSION_STALE_HOURS="1000000",
            )
            commands["reference"] = Command([reference.node, str(reference.script)], env, prepare)
        return commands

    few = sorted(fleet.workspaces)[:: SPEC.agents // CHANGED_FEW]
    results: dict[str, dict[str, Measurement]] = {}
    results[FIRST] = measure_interleaved(
        with_reference(
            {
                "memwarden": Command(
                    memwarden(fleet), on_env, lambda: forget_memwarden(on_work, fleet)
                )
            },
            lambda: forget_reference(home),
        ),
        repeat=REPEAT,
    )
    # The twin keeps no memory from an earlier bench run: its pool would grow past the index
    # threshold run after run, and the twin pay for an INDEX.md the fleet does not.
    forget_memwarden(off_work, twin)
    results[ONE_TURN] = measure_interleaved(
        with_reference(
            {
                "memwarden": Command(memwarden(fleet), on_env, lambda: append_turns(fleet)),
                "memwarden, history off": Command(
                    memwarden(twin), off_env, lambda: append_turns(twin)
                ),
            }
        ),
        repeat=REPEAT,
    )
    # The twin was never checkpointed before this scenario's warm-up: that run is its first.
    time.sleep(RACY_SECONDS + 0.5)  # older changes are trusted on their stat
    results[FEW] = measure_interleaved(
        with_reference(
            {
                "memwarden": Command(
                    memwarden(fleet), on_env, lambda: append_turns(fleet, agents=few)
                )
            }
        ),
        repeat=REPEAT,
    )
    time.sleep(RACY_SECONDS + 0.5)
    results[NOTHING] = measure_interleaved(
        with_reference({"memwarden": Command(memwarden(fleet), on_env)}), repeat=REPEAT
    )
    section.table(rows(results))
    verdicts(section, results, reference is not None)
    section.text(
        f"Load average after the runs: {machine_info()['load average']}. What the reference "
        "does not do, and memwarden does in these figures: make every file it writes durable "
        "before it records how far it read (atomically, 0600, an fsync each), redact "
        "secrets, read the SQLite era, keep a read position so a turn is logged once, snapshot "
        "the memory folders into history and refresh INDEX.md; it also re-reads every agent "
        "on every run, where memwarden settles an unchanged agent "
        "on a stat. See the checkpoint section for where memwarden's time goes."
    )


def rows(results: dict[str, dict[str, Measurement]]) -> list[dict[str, str]]:
    table = []
    for scenario, measured in results.items():
        reference = measured.get("reference")
        for name, result in measured.items():
            if name == "reference":
                continue
            ratio = reference.median_s / result.median_s if reference else None
            table.append(
                {
                    "scenario": scenario,
                    "command": name,
                    "median": f"{result.median_s * 1000:.0f} ms",
                    "min": f"{result.min_s * 1000:.0f} ms",
                    "max": f"{result.max_s * 1000:.0f} ms",
                    "CPU": f"{result.cpu_median_s * 1000:.0f} ms",
                    "peak RSS": f"{result.peak_rss_mb:.1f} MB",
                    "reference median": f"{reference.median_s * 1000:.0f} ms" if reference else "-",
                    "reference CPU": f"{reference.cpu_median_s * 1000:.0f} ms"
                    if reference
                    else "-",
                    "ratio": f"x{ratio:.2f}" if ratio else "-",
                }
            )
    return table


def verdicts(section, results: dict[str, dict[str, Measurement]], compared: bool) -> None:
    """Add the targets to the summary (ratios only when the reference ran)."""
    for scenario, target in RATIO_TARGETS.items():
        ours = results[scenario]["memwarden"]
        if compared:
            theirs = results[scenario]["reference"]
            ratio = theirs.median_s / ours.median_s
            section.headline(
                f"100 agents x 2 MB, {scenario}: reference / memwarden",
                f"ratio ≥ {target:g}",
                f"x{ratio:.2f} (memwarden {ours.median_s * 1000:.0f} ms, reference "
                f"{theirs.median_s * 1000:.0f} ms)",
                ratio >= target,
            )
        else:
            section.headline(
                f"100 agents x 2 MB, {scenario} (no reference: see {REFERENCE_VARIABLE})",
                f"ratio ≥ {target:g}",
                f"memwarden {ours.median_s * 1000:.0f} ms",
                None,
            )
    nothing = results[NOTHING]["memwarden"]
    section.headline(
        f"100 agents x 2 MB, {NOTHING}",
        f"≤ {NOTHING_NEW_S:g} s",
        f"{nothing.median_s * 1000:.0f} ms (min {nothing.min_s * 1000:.0f}, max "
        f"{nothing.max_s * 1000:.0f})",
        nothing.median_s <= NOTHING_NEW_S,
    )
    on, off = results[ONE_TURN]["memwarden"], results[ONE_TURN]["memwarden, history off"]
    added = (on.median_s - off.median_s) * 1000
    section.headline(
        "memory history, 100 changed agents: added to a run",
        f"≤ {HISTORY_ADDS_MS:g} ms",
        f"{added:.0f} ms ({on.median_s * 1000:.0f} ms on, {off.median_s * 1000:.0f} ms off; "
        f"CPU {(on.cpu_median_s - off.cpu_median_s) * 1000:.0f} ms)",
        added <= HISTORY_ADDS_MS,
    )
    peak = max(
        result.peak_rss_mb
        for measured in results.values()
        for name, result in measured.items()
        if name != "reference"
    )
    section.headline(
        "peak RSS, every scenario",
        f"≤ {PEAK_RSS_MB:g} MB",
        f"{peak:.1f} MB",
        peak <= PEAK_RSS_MB,
    )


def main() -> int:
    report = Report()
    report.current = "reference"
    run(report)
    print(report.sections["reference"].markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
