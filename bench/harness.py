"""The benchmark harness: time a command as a child process, repeatedly; write the report.

API (everything a bench_*.py needs):

    from harness import Report, Target, measure

    def run(report: Report) -> None:           # bench/run.py calls this for bench_<name>.py
        section = report.section("checkpoint", "One paragraph saying what is measured.")
        result = measure(
            "100 agents x 2 MB, first run",
            [PYTHON, "-m", "memwarden", "checkpoint"],
            env=child_env,                     # full environment of the child (default: ours)
            repeat=7,                          # timed runs; the report shows median, min, max
            warmup=1,                          # untimed runs first (bytecode, page cache)
            prepare=reset_state,               # called, untimed, before every run
        )
        section.measurements([result], {result.name: Target(wall_s=0.2, rss_mb=60)})
        section.text("Markdown: how to read the figures, what was missed and why.")

- `measure` runs `argv` with `subprocess.Popen` and reaps it with `os.wait4`, so the wall time
  covers the child's whole life (interpreter start, imports, work, exit) and the peak RSS is
  the child's own (`ru_maxrss`), never the harness's. A non-zero exit fails the measurement.
- By default the child writes and reuses bytecode in `bench/.fleet/pycache` (PYTHONPYCACHEPREFIX,
  PYTHONDONTWRITEBYTECODE removed), as an installed package has its bytecode compiled by pip:
  otherwise every run would recompile memwarden and measure the compiler.
- `machine_info()` says where the figures come from (cores, CPU, Python, OS); the report
  starts with it.
- A bench without `run(report)` may offer `run() -> list[dict]` (rendered as a table) or
  `main() -> int` (its printed output is quoted); see bench/run.py.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PYTHON = str(REPO / ".venv" / "bin" / "python")
PYCACHE = BENCH_DIR / ".fleet" / "pycache"


@dataclass(frozen=True)
class Sample:
    """One timed run of the child."""

    wall_s: float
    max_rss_mb: float
    exit_code: int


@dataclass
class Measurement:
    """The samples of one command, and their summary."""

    name: str
    samples: list[Sample] = field(default_factory=list)
    note: str = ""

    @property
    def walls(self) -> list[float]:
        return [sample.wall_s for sample in self.samples]

    @property
    def median_s(self) -> float:
        return statistics.median(self.walls)

    @property
    def min_s(self) -> float:
        return min(self.walls)

    @property
    def max_s(self) -> float:
        return max(self.walls)

    @property
    def rss_mb(self) -> float:
        """The median of the runs' peak RSS, in MB."""
        return statistics.median(sample.max_rss_mb for sample in self.samples)

    @property
    def peak_rss_mb(self) -> float:
        return max(sample.max_rss_mb for sample in self.samples)


@dataclass(frozen=True)
class Target:
    """A goal for a measurement: median wall time and/or peak RSS."""

    wall_s: float | None = None
    rss_mb: float | None = None

    def met_by(self, measurement: Measurement) -> bool:
        fast = self.wall_s is None or measurement.median_s <= self.wall_s
        small = self.rss_mb is None or measurement.peak_rss_mb <= self.rss_mb
        return fast and small

    def describe(self) -> str:
        parts = []
        if self.wall_s is not None:
            parts.append(f"≤ {self.wall_s:g} s")
        if self.rss_mb is not None:
            parts.append(f"≤ {self.rss_mb:g} MB")
        return ", ".join(parts) or "-"


class BenchError(RuntimeError):
    """A measured command failed; the message has its exit code and stderr."""


def child_environment(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """Return an environment for a measured child: `base` (default: ours), with bytecode
    cached under bench/.fleet/pycache, plus `extra`."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.update(extra)
    return env


def run_child(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Sample:
    """Run `argv` once; return its wall time and peak RSS. Raise BenchError if it fails."""
    child_env = dict(env) if env is not None else child_environment()
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(
            list(argv), env=child_env, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    if child.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {child.returncode}: {stderr.strip()[-2000:]}")
    # Linux reports ru_maxrss in kilobytes, macOS in bytes.
    divisor = 1024 * 1024 if sys.platform == "darwin" else 1024
    return Sample(wall, usage.ru_maxrss / divisor, child.returncode)


def measure(
    name: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    repeat: int = 7,
    warmup: int = 1,
    prepare: Callable[[], None] | None = None,
    note: str = "",
) -> Measurement:
    """Run `argv` `warmup` times untimed, then `repeat` times timed; `prepare()` (untimed)
    before each run. Return the Measurement. Raise BenchError if a run fails."""
    child_env = env if env is not None else child_environment()
    for _ in range(warmup):
        if prepare:
            prepare()
        run_child(argv, child_env)
    result = Measurement(name, note=note)
    for _ in range(repeat):
        if prepare:
            prepare()
        result.samples.append(run_child(argv, child_env))
    return result


def machine_info() -> dict[str, str]:
    """Return what the figures depend on: cores, CPU model, Python, OS."""
    return {
        "cores": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load average": " ".join(f"{value:.2f}" for value in os.getloadavg()),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@dataclass
class Section:
    """One bench's part of the report, in Markdown."""

    name: str
    title: str
    blocks: list[str] = field(default_factory=list)

    def text(self, markdown: str) -> None:
        self.blocks.append(markdown.strip())

    def table(self, rows: Sequence[Mapping[str, object]], columns: Sequence[str] = ()) -> None:
        """Add a table of `rows` (dicts), with `columns` (default: the first row's keys)."""
        if not rows:
            return
        names = list(columns or rows[0].keys())
        lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
        lines += ["| " + " | ".join(_cell(row.get(n)) for n in names) + " |" for row in rows]
        self.blocks.append("\n".join(lines))

    def measurements(
        self, results: Sequence[Measurement], targets: Mapping[str, Target] | None = None
    ) -> None:
        """Add a table of measurements with their targets and verdicts."""
        targets = targets or {}
        rows = []
        for result in results:
            target = targets.get(result.name)
            rows.append(
                {
                    "scenario": result.name,
                    "median": f"{result.median_s * 1000:.0f} ms",
                    "min": f"{result.min_s * 1000:.0f} ms",
                    "max": f"{result.max_s * 1000:.0f} ms",
                    "peak RSS": f"{result.peak_rss_mb:.1f} MB",
                    "runs": len(result.samples),
                    "target": target.describe() if target else "-",
                    "verdict": ("met" if target.met_by(result) else "**missed**")
                    if target
                    else "-",
                }
            )
        self.table(rows)

    def markdown(self) -> str:
        return f"## {self.title}\n\n" + "\n\n".join(self.blocks) + "\n"


class Report:
    """The sections written so far; `bench/run.py` turns them into bench/REPORT.md."""

    def __init__(self) -> None:
        self.sections: dict[str, Section] = {}
        self.current = ""

    def section(self, title: str, intro: str = "") -> Section:
        """Return the section of the bench being run (created with `title`), adding `intro`."""
        name = self.current or title
        if name not in self.sections:
            self.sections[name] = Section(name, title)
        section = self.sections[name]
        if intro:
            section.text(intro)
        return section


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "" if value is None else str(value).replace("|", "\\|")
