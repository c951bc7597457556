"""Scans of transcript text take time in proportion to its size, whatever its shape.

Each input is a 5 MB message shaped to make a backtracking pattern try every position against
every other (a long run of blanks where a line end is looked for). A quadratic scan needs hours
on it and times out here; a linear one takes well under a second.
"""

from __future__ import annotations

import pytest

from memwarden.agent_memory.observations import find_paths, open_todos
from memwarden.checkpoint.render.values import tidy

FIVE_MB = 5 * 1024 * 1024
BLANKS = " \t" * (FIVE_MB // 2)

pytestmark = pytest.mark.timeout(60)


def test_open_todos_item_followed_by_megabytes_of_blanks_is_found_stripped():
    texts = [f"TODO: ship it{BLANKS}", f"- [ ] write docs{BLANKS}x\n- [x] ship it{BLANKS}\n"]

    assert open_todos(texts) == [f"write docs{BLANKS}x"]


def test_todo_marker_followed_by_megabytes_of_blanks_is_found_stripped():
    texts = [f"[TODO] ship it{BLANKS}\n[TODO]{BLANKS}", f"[TODO] `x` {BLANKS}" * 3]

    assert open_todos(texts) == ["ship it", f"`x` {BLANKS}[TODO] `x` {BLANKS}[TODO] `x`"]


def test_tidy_megabytes_of_blanks_without_a_line_end_kept_as_one_line():
    assert tidy(f"a{BLANKS}b  \n\n\n\nc") == f"a{BLANKS}b\n\nc"


@pytest.mark.parametrize(
    "text",
    ["a/" * (FIVE_MB // 2) + "b", "/a" * (FIVE_MB // 2), "x." * (FIVE_MB // 2) + "/y"],
    ids=["folders", "absolute", "dots"],
)
def test_find_paths_long_path_like_runs_finish(text):
    assert isinstance(find_paths(text), list)
