"""Templates compiled once, kept in memwarden's state dir and loaded by the next process.

Each case renders in a fresh process: within one process templates are compiled once anyway.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TEMPLATE = "checkpoint/daily_header.md.j2"

# Render TEMPLATE with the cache of argv[1]; with argv[2] == "forbid", compiling fails.
RENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import jinja2

    if sys.argv[2] == "forbid":
        def refuse(*arguments, **options):
            raise AssertionError("compiled a template the cache holds")

        jinja2.Environment.compile = refuse
    from memwarden import templating

    templating.cache_compiled_templates(Path(sys.argv[1]))
    sys.stdout.write(templating.render(sys.argv[3], date="2026-11-22", agent="main"))
    """
)


def render_in_process(state_dir: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RENDER, str(state_dir), mode, TEMPLATE],
        capture_output=True,
        text=True,
        check=False,
    )


def test_render_with_cache_next_process_loads_without_compiling(tmp_path):
    first = render_in_process(tmp_path, "compile")
    cached = sorted(path.name for path in (tmp_path / "cache" / "templates").iterdir())
    second = render_in_process(tmp_path, "forbid")

    assert first.returncode == 0, first.stderr
    assert len(cached) == 1
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert second.stdout.startswith("# 2026-11-22\n")


def test_render_without_cache_compiles(tmp_path):
    completed = render_in_process(tmp_path, "forbid")

    assert completed.returncode != 0
    assert "compiled a template the cache holds" in completed.stderr


def test_render_with_unwritable_cache_folder_still_renders(tmp_path):
    (tmp_path / "cache").write_text("a file where the cache folder would go")

    completed = render_in_process(tmp_path, "compile")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("# 2026-11-22\n")
    assert (tmp_path / "cache").is_file()


def test_render_with_missing_state_dir_creates_nothing(tmp_path):
    state_dir = tmp_path / "never-made"

    completed = render_in_process(state_dir, "compile")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("# 2026-11-22\n")
    assert not state_dir.exists()
