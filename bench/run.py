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
import traceback
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPORT = BENCH_DIR / "REPORT.md"
sys.path.insert(0, str(BENCH_DIR))

from harness import Report, Section, machine_info  # noqa: E402

HEADER = """# memwarden benchmarks

Written by `make bench` (`bench/run.py`); each section says when and where it was measured.
Wall times cover a whole child process (interpreter start, imports, work, exit) unless a section
says otherwise; peak RSS is the child's own (`ru_maxrss` from `os.wait4`).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="bench names (bench_<name>.py); default: all")
    options = parser.parse_args(argv)
    names = options.names or discover()
    report = Report()
    failed = []
    for name in names:
        print(f"bench {name} ...", flush=True)
        if not run_bench(name, report):
            failed.append(name)
    write_report(report)
    print(f"wrote {REPORT}")
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
    """Write REPORT.md: the sections run now, and the previous figures of the others."""
    existing = REPORT.read_text(encoding="utf-8") if REPORT.exists() else ""
    kept = dict(re.findall(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", existing, re.S))
    for name, section in report.sections.items():
        kept[name] = section.markdown()
    parts = [HEADER]
    for name in sorted(kept):
        parts.append(f"<!-- bench:{name} -->\n{kept[name].rstrip()}\n<!-- /bench:{name} -->\n")
    REPORT.write_text("\n".join(parts), encoding="utf-8")


def _stamp() -> str:
    info = machine_info()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"_Measured {when} on {info['cores']} cores ({info['cpu']}), Python {info['python']}, "
        f"{info['os']}, load average {info['load average']}._"
    )


if __name__ == "__main__":
    raise SystemExit(main())
