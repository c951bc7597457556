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

- `measure` runs `argv` through a small launcher process that forks it and reaps it with
  `os.wait4`, so the wall time covers the child's whole life (interpreter start, imports, work,
  exit) and the peak RSS is the child's own (`ru_maxrss`), never the harness's (see
  `_LAUNCHER`). A non-zero exit fails the measurement. `run_child(argv, env, stdout=path)`
  runs one child and keeps its output.
- By default the child writes and reuses bytecode in `bench/.fleet/pycache` (PYTHONPYCACHEPREFIX,
  PYTHONDONTWRITEBYTECODE removed), as an installed package has its bytecode compiled by pip:
  otherwise every run would recompile memwarden and measure the compiler.
- `measure_interleaved({name: Command(argv, env, prepare)}, repeat=7)` measures commands
  round-robin, for figures compared with each other (a 1 MB and a 100 MB fleet): the
  machine's speed drifts, and one command measured after another would compare two speeds.
- `machine_info()` says where the figures come from (cores, CPU, Python, OS, load average and a
  speed index: the time of a fixed pure-Python loop, since a shared VM's speed drifts from one
  minute to the next); the report starts with it and every section is stamped with it.
- `section.measurements(...)` puts every measurement that has a target into the report's
  summary table; `section.headline(what, target, measured, met)` adds any other figure there
  (an in-process timing, a ratio).
- A bench without `run(report)` may offer `run() -> list[dict]` (rendered as a table) or
  `main() -> int` (its printed output is quoted); see bench/run.py.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
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
    cpu_s: float = 0.0  # user + system time of the child


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
    def cpu_median_s(self) -> float:
        return statistics.median(sample.cpu_s for sample in self.samples)

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


def default_settings_environment(work: Path, **extra: str) -> dict[str, str]:
    """The environment of a measured memwarden at its default settings: ours without any
    memwarden, gateway or XDG variable, with state, config and cache folders of its own under
    `work`, plus `extra`."""
    (work / "config").mkdir(parents=True, exist_ok=True)
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_"))
    }
    return child_environment(
        base,
        XDG_STATE_HOME=str(work / "state"),
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_CACHE_HOME=str(work / "cache"),
        TZ="UTC",
        **extra,
    )


def run_child(
    argv: Sequence[str], env: Mapping[str, str] | None = None, stdout: Path | None = None
) -> Sample:
    """Run `argv` once (its output to `stdout`, else discarded); return its wall time, CPU time
    and peak RSS. Raise BenchError if it fails."""
    child_env = dict(env) if env is not None else child_environment()
    with tempfile.NamedTemporaryFile(prefix="bench-stderr-") as errors:
        report = _launcher().run(list(argv), child_env, errors.name, stdout)
        stderr = Path(errors.name).read_text(errors="replace")
    exit_code = os.waitstatus_to_exitcode(report["status"])
    if exit_code != 0:
        raise BenchError(f"{' '.join(argv)} exited {exit_code}: {stderr.strip()[-2000:]}")
    # Linux reports ru_maxrss in kilobytes, macOS in bytes.
    divisor = 1024 * 1024 if sys.platform == "darwin" else 1024
    return Sample(report["wall"], report["maxrss"] / divisor, exit_code, report["cpu"])


# Children are started by this small launcher, not by the harness itself: a child's peak RSS
# (`ru_maxrss`) counts the memory of the process that started it (subprocess uses vfork, and
# Linux keeps the old address space's peak across exec), and the harness grows to hundreds of
# MB while it builds fleets. The launcher stays under 10 MB and forks each child.
_LAUNCHER = r"""
import json, os, sys, time
for line in sys.stdin:
    request = json.loads(line)
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            out = request["stdout"]
            os.dup2(null, 0)
            os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) if out else null, 1)
            os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC), 2)
            os.execvpe(request["argv"][0], request["argv"], request["env"])
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    report = {"wall": wall, "status": status, "maxrss": usage.ru_maxrss, "cpu": cpu}
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
"""


class _Launcher:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, argv: list[str], env: dict[str, str], stderr: str, stdout: Path | None) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"argv": argv, "env": env, "stderr": stderr, "stdout": stdout and str(stdout)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise BenchError("the child launcher died")
        return json.loads(line)


_LAUNCHERS: list[_Launcher] = []


def _launcher() -> _Launcher:
    if not _LAUNCHERS or _LAUNCHERS[0].process.poll() is not None:
        _LAUNCHERS[:] = [_Launcher()]
    return _LAUNCHERS[0]


def measure(
    name: str,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    repeat: int = 7,
    warmup: int = 1,
    prepare: Callable[[], None] | None = None,
    note: str = "",
    flush: bool = True,
) -> Measurement:
    """Run `argv` `warmup` times untimed, then `repeat` times timed; `prepare()` (untimed)
    before each run, then (with `flush`) `os.sync()`, so a run never pays for writing back what
    the harness itself just wrote (removed folders, appended transcripts). Return the
    Measurement. Raise BenchError if a run fails."""
    child_env = env if env is not None else child_environment()

    def ready() -> None:
        if prepare:
            prepare()
        if flush:
            os.sync()

    for _ in range(warmup):
        ready()
        run_child(argv, child_env)
    result = Measurement(name, note=note)
    for _ in range(repeat):
        ready()
        result.samples.append(run_child(argv, child_env))
    return result


@dataclass(frozen=True)
class Command:
    """One command of `measure_interleaved`: what to run, its environment, what to do before."""

    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    prepare: Callable[[], None] | None = None


def measure_interleaved(
    commands: Mapping[str, Command], *, repeat: int = 7, warmup: int = 1, flush: bool = True
) -> dict[str, Measurement]:
    """Measure several commands as `measure` does, one run of each in turn, so that a drift of
    the machine's speed affects them all alike; use it for figures compared with each other.
    Return the Measurements by name. Raise BenchError if a run fails."""
    results = {name: Measurement(name) for name in commands}
    for round_number in range(warmup + repeat):
        for name, command in commands.items():
            if command.prepare:
                command.prepare()
            if flush:
                os.sync()
            env = command.env if command.env is not None else child_environment()
            sample = run_child(command.argv, env)
            if round_number >= warmup:
                results[name].samples.append(sample)
    return results


def machine_info() -> dict[str, str]:
    """Return what the figures depend on: cores, CPU model, Python, OS."""
    return {
        "cores": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load average": " ".join(f"{value:.2f}" for value in os.getloadavg()),
        "speed index": f"{speed_index_ms():.0f} ms",
    }


def speed_index_ms() -> float:
    """Return the best of three timings (ms) of a fixed pure-Python loop: how fast this machine
    runs the interpreter right now (lower is faster). Figures taken at different speed indexes
    are not comparable."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@dataclass(frozen=True)
class Headline:
    """One row of the report's summary: a figure of a job beside its target."""

    job: str
    what: str
    target: str
    measured: str
    verdict: str

    def to_comment(self) -> str:
        """Return the row as an HTML comment, kept in the section (run.py collects them)."""
        return f"<!-- headline {json.dumps(asdict(self), ensure_ascii=False)} -->"

    @classmethod
    def from_comment(cls, text: str) -> Headline:
        return cls(**json.loads(text))


@dataclass
class Section:
    """One bench's part of the report, in Markdown."""

    name: str
    title: str
    blocks: list[str] = field(default_factory=list)
    headlines: list[Headline] = field(default_factory=list)

    def text(self, markdown: str) -> None:
        self.blocks.append(markdown.strip())

    def headline(self, what: str, target: str, measured: str, met: bool | None) -> None:
        """Add a row to the report's summary (`met` None: a figure without a target)."""
        verdict = "-" if met is None else "met" if met else "**missed**"
        self.headlines.append(Headline(self.title, what, target, measured, verdict))

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
            if target is not None:
                self.headline(
                    result.name,
                    target.describe(),
                    f"{result.median_s * 1000:.0f} ms (min {result.min_s * 1000:.0f}, max "
                    f"{result.max_s * 1000:.0f}), peak RSS {result.peak_rss_mb:.0f} MB",
                    target.met_by(result),
                )
            rows.append(
                {
                    "scenario": result.name,
                    "median": f"{result.median_s * 1000:.0f} ms",
                    "min": f"{result.min_s * 1000:.0f} ms",
                    "max": f"{result.max_s * 1000:.0f} ms",
                    "CPU": f"{result.cpu_median_s * 1000:.0f} ms",
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
        comments = "".join(f"\n{headline.to_comment()}" for headline in self.headlines)
        return f"## {self.title}\n\n" + "\n\n".join(self.blocks) + "\n" + comments


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


_ACCEPTING_1 = (
    "import sys; from memwarden import entry; entry.start(); from memwarden.cli import main; "
    "entry.end_process(0 if (code := main(sys.argv[1:])) in (0, 1) else code)"
)


def memwarden_accepting_1(*arguments: str) -> list[str]:
    """Return the command of `memwarden -q <arguments>` run as its program runs it
    (memwarden.entry), for a child whose exit 1 is a success: health with a critical check, a
    checkpoint with a failing session did their work."""
    return [PYTHON, "-c", _ACCEPTING_1, "-q", *arguments]
