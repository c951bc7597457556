"""Benchmark: `memwarden index` over memory folders of 100 to 10,000 files.

Targets (issue 5): 2,000 files / 16 MB indexed in ≤ 0.5 s cold (no facts cache, no INDEX.md) and
≤ 0.2 s when nothing changed. Each figure is a whole `python -m memwarden index --workspace W`
child process at the default settings in a fresh environment (no memwarden or gateway variable
of the machine's): interpreter start, imports, state DB, the scan, the work and the exit.
Run: `.venv/bin/python bench/run.py index` (writes bench/REPORT.md), or this file alone.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from harness import PYTHON, Report, Target, child_environment, measure

FILE_BYTES = 8 * 1024  # 2,000 files x 8 KB = 16 MB
SIZES = (100, 500, 2_000, 10_000)
TARGETS = {
    "2,000 files (16 MB), cold": Target(wall_s=0.5),
    "2,000 files (16 MB), unchanged": Target(wall_s=0.2),
}
PARAGRAPH = (
    "We looked at the deployment again and wrote down what changed, what broke and what we "
    "decided, so the next session does not have to find it out again. "
)


# As the checkpoint writes it: the session line tells the bootstrap hook whose context it is.
ACTIVE_CONTEXT = (
    "# Active Context — agent main\n\n"
    "> - session: `agent:main:main` (id `00000000-0000-4000-8000-000000000000`)\n\n"
    "## Open TODOs\n- [ ] [TODO] finish the bench\n"
)


def file_text(number: int) -> str:
    """Return a memory file of FILE_BYTES bytes with a heading, markers, a code block and prose."""
    head = (
        f"# Note {number}: the {('billing', 'deploy', 'search', 'mail')[number % 4]} work\n\n"
        f"- [DECISION] keep option {number % 7} [TODO] check it in a week\n"
        f"- [FACT] host {number % 13} runs the {number % 3}.x release\n"
        "```bash\n# [GOTCHA] inside code: not counted\nmake deploy\n```\n"
        "Use `[TODO]` to flag open work.\n\n"
    )
    body = (PARAGRAPH * (FILE_BYTES // len(PARAGRAPH) + 1))[: FILE_BYTES - len(head) - 1]
    return head + body + "\n"


def file_name(number: int) -> str:
    """Half daily logs and session summaries, the rest plans, research, config and notes."""
    if number % 2 == 0:
        day = number // 2
        return f"{2020 + day // 336:04d}-{day // 28 % 12 + 1:02d}-{day % 28 + 1:02d}.md"
    kind = number % 10
    if kind in (1, 3):
        return f"plans/plan-{number:05d}.md"
    if kind == 5:
        return f"research/deep/topic-{number:05d}.md"
    if kind == 7:
        return f"config/host-{number:05d}.md"
    return f"notes/n{number % 20:02d}/note-{number:05d}.md"


def make_workspace(root: Path, files: int) -> Path:
    """Write a workspace whose memory folder holds `files` files (plus ACTIVE_CONTEXT.md)."""
    memory = root / "workspace" / "memory"
    for number in range(files - 1):
        path = memory / file_name(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file_text(number))
    (memory / "ACTIVE_CONTEXT.md").write_text(ACTIVE_CONTEXT)
    return root / "workspace"


def scenario(root: Path, files: int, repeat: int) -> list:
    """Measure one folder size cold and unchanged; return the two measurements."""
    workspace = make_workspace(root / f"f{files}", files)
    storage = root / f"f{files}" / "memwarden-state"
    # A fresh environment: memwarden's defaults, none of the machine's memwarden or gateway
    # variables.
    base = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_"))
    }
    gateway = root / "gateway-state"  # a gateway with no agent: the workspace is named
    gateway.mkdir(exist_ok=True)
    (gateway / "openclaw.json").write_text("{}\n")
    env = child_environment(
        base,
        XDG_STATE_HOME=str(storage),
        XDG_CONFIG_HOME=str(root / "config"),
        HOME=str(root / "home"),
        OPENCLAW_STATE_DIR=str(gateway),
    )
    argv = [PYTHON, "-m", "memwarden", "-q", "index", "--workspace", str(workspace)]

    def forget() -> None:
        shutil.rmtree(storage, ignore_errors=True)
        for name in ("INDEX.md", ".memwarden-bootstrap.json"):
            (workspace / "memory" / name).unlink(missing_ok=True)

    label = f"{files:,} files ({files * FILE_BYTES / 1e6:.0f} MB)"
    cold = measure(f"{label}, cold", argv, env=env, repeat=repeat, prepare=forget)
    unchanged = measure(f"{label}, unchanged", argv, env=env, repeat=repeat)
    return [cold, unchanged]


def run(report: Report) -> None:
    section = report.section(
        "index",
        "`memwarden index --workspace W` on generated memory folders of 8 KB files (half daily "
        "logs, the rest plans, research, config and notes in nested folders; markers, code "
        "blocks and inline code in every file). *Cold*: no facts cache, no INDEX.md, the page "
        "cache warm (as after the files were written). *Unchanged*: the folder as the last "
        "run left it. Each run is a whole child process.",
    )
    baseline = measure(
        "baseline: `python -m memwarden --version`",
        [PYTHON, "-m", "memwarden", "--version"],
        env=child_environment(),
        repeat=7,
    )
    results = [baseline]
    with tempfile.TemporaryDirectory(prefix="mw-bench-index-") as folder:
        for files in SIZES:
            results += scenario(Path(folder), files, repeat=5 if files > 2_000 else 7)
    section.measurements(results, TARGETS)
    section.text(
        "The baseline row is the interpreter and the CLI alone, which every run pays. "
        "The unchanged case stats every file and compares a digest of the stats, cap, rules "
        "and template with the one stored for the INDEX.md on disk; it neither reads the files "
        "nor renders. The cold case reads and scans every byte for markers, then renders the "
        "catalog a few times while condensing it to the 20,000-character cap."
    )


if __name__ == "__main__":
    demo = Report()
    run(demo)
    for part in demo.sections.values():
        sys.stdout.write(part.markdown())
