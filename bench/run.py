"""Run the benchmarks and write bench/REPORT.md (`make bench`).

    .venv/bin/python bench/run.py                 # every bench/bench_*.py
    .venv/bin/python bench/run.py checkpoint      # only bench_checkpoint.py

Each bench module is called by the first of these it defines: `run(report)` (see
bench/harness.py), `run()` returning a list of dicts (shown as a table), or `main()` (its
printed output is quoted; a non-zero return marks the section as failed). A section replaces the
same bench's section of the existing report, between `<!-- bench:<name> -->` markers, so running
one bench keeps the others' figures. Exit status 1 if a bench failed or missed a target it
reports with `main()`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import re
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPORT = BENCH_DIR / "REPORT.md"
sys.path.insert(0, str(BENCH_DIR))

from harness import Headline, Report, Section, machine_info  # noqa: E402

HEADER = """# memwarden benchmarks

Written by `make bench` (`bench/run.py`; `bench/run.py checkpoint index` runs a subset and keeps
the other sections). Wall times cover a whole child process (interpreter start, imports, work,
exit) unless a row says otherwise; CPU is the child's user + system time; peak RSS is the
child's own (`ru_maxrss` from `os.wait4`). Each section is stamped with when and where it was
measured, with a *speed index* (the time of a fixed pure-Python loop): this machine is a shared
VM whose speed drifts by up to 2x from one minute to the next, so compare figures taken at
similar speed indexes, and prefer CPU time to wall time when comparing two runs. Every job runs
at memwarden's default settings (memory history on) unless a row says otherwise. The *reference*
section runs `memwarden checkpoint` beside the script it replaces when
`MEMWARDEN_BENCH_REFERENCE` names a checkout of drewTuzson/clawdbot-memory-infra and `node` is
on PATH (bench/README.md); without them it shows memwarden's own figures.
"""
# The order of the summary table.
JOB_ORDER = ("checkpoint", "reference", "rotate", "index", "health", "history")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("names", nargs="*", help="bench names (bench_<name>.py); default: all")
    options = parser.parse_args(argv)
    names = options.names or discover()
    unknown = sorted(set(names) - set(discover()))
    if unknown:
        parser.error(f"no bench named {', '.join(unknown)} (have: {', '.join(discover())})")
    report = Report()
    failed = []
    started = time.monotonic()
    for name in names:
        print(f"bench {name} ...", flush=True)
        began = time.monotonic()
        if not run_bench(name, report):
            failed.append(name)
        print(f"bench {name}: {time.monotonic() - began:.0f} s", flush=True)
    write_report(report)
    print(f"wrote {REPORT} in {time.monotonic() - started:.0f} s")
    if failed:
        print(f"failed or missed targets: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def discover() -> list[str]:
    """Return the names of the bench modules, sorted."""
    return sorted(path.stem.removeprefix("bench_") for path in BENCH_DIR.glob("bench_*.py"))


def run_bench(name: str, report: Report) -> bool:
    """Run bench `name` into its report section; return False if it failed."""
    report.current = name
    stamp = _stamp()
    try:
        module = importlib.import_module(f"bench_{name}")
        run = getattr(module, "run", None)
        if run is not None and inspect.signature(run).parameters:
            run(report)
            ok = True
        elif run is not None:
            rows = run()
            section = report.section(name)
            section.table(rows)
            ok = all(row.get("ok", True) for row in rows)
        else:
            ok = _run_main(module, report.section(name))
    except Exception:  # noqa: BLE001 - one broken bench must not lose the others' figures
        section = report.section(name)
        section.text(f"**This bench failed:**\n\n```\n{traceback.format_exc()}```")
        ok = False
    report.section(name).blocks.insert(0, stamp)
    return ok


def _run_main(module, section: Section) -> bool:
    output = io.StringIO()
    saved_argv = sys.argv
    sys.argv = [module.__file__]
    try:
        with contextlib.redirect_stdout(output):
            code = module.main()
    finally:
        sys.argv = saved_argv
    section.text(f"```\n{output.getvalue().rstrip()}\n```")
    return not code


def write_report(report: Report) -> None:
    """Write REPORT.md: the machine, the summary of every section's targets, the sections run
    now and the previous figures of the others."""
    existing = REPORT.read_text(encoding="utf-8") if REPORT.exists() else ""
    kept = dict(re.findall(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", existing, re.S))
    for name, section in report.sections.items():
        kept[name] = section.markdown()
    order = sorted(kept, key=_position)
    parts = [HEADER, _machine(), _summary(kept, order)]
    for name in order:
        parts.append(f"<!-- bench:{name} -->\n{kept[name].rstrip()}\n<!-- /bench:{name} -->\n")
    REPORT.write_text("\n".join(parts), encoding="utf-8")


def _position(name: str) -> tuple[int, str]:
    return (JOB_ORDER.index(name) if name in JOB_ORDER else len(JOB_ORDER), name)


def _machine() -> str:
    info = machine_info()
    return (
        f"**Machine** (when this file was written): {info['cores']} cores ({info['cpu']}), "
        f"Python {info['python']}, {info['os']}, load average {info['load average']}, "
        f"speed index {info['speed index']}.\n"
    )


def _summary(kept: dict[str, str], order: list[str]) -> str:
    """Return the table of every figure that has a target (or is a headline), by job."""
    rows = ["## Summary: targets and measured figures", ""]
    rows += [
        "Medians; each job's section has the minimum, maximum, CPU time, peak RSS and the "
        "growth series, and explains every missed target.",
        "",
        "| job | figure | target | measured | verdict | measured on |",
        "|---|---|---|---|---|---|",
    ]
    for name in order:
        stamp = re.search(r"_Measured (\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC)", kept[name])
        when = stamp.group(1) if stamp else "?"
        for comment in re.findall(r"<!-- headline (\{.*?\}) -->", kept[name]):
            row = Headline.from_comment(comment)
            cells = (row.job, row.what, row.target, row.measured, row.verdict, when)
            rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def _stamp() -> str:
    info = machine_info()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"_Measured {when} on {info['cores']} cores ({info['cpu']}), Python {info['python']}, "
        f"{info['os']}, load average {info['load average']}, speed index "
        f"{info['speed index']}._"
    )


if __name__ == "__main__":
    raise SystemExit(main())
