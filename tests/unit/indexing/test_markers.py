"""Observation markers and titles in memory files: per occurrence, never inside code."""

from __future__ import annotations

import pytest

from memwarden.agent_memory.observations import lines_outside_code, markers_in_line
from memwarden.indexing.markers import MARKERS, ZERO, add_counts, count_markers, first_heading


def counts(**named: int) -> tuple[int, ...]:
    return tuple(named.get(name, 0) for name in MARKERS)


def test_count_markers_several_on_one_line_counts_each_occurrence():
    data = b"- [DECISION] use sqlite [DECISION] again, [TODO] bench it [TODO] [TODO]\n"

    assert count_markers(data) == counts(DECISION=2, TODO=3)


def test_count_markers_all_eight_counts_each_in_order():
    data = " ".join(f"[{name}]" for name in MARKERS).encode()

    assert count_markers(data) == (1,) * 8


def test_count_markers_inside_inline_code_span_not_counted():
    data = b"Write `[TODO]` to flag work; double ``x [FACT] y`` too. [GOTCHA] real\n"

    assert count_markers(data) == counts(GOTCHA=1)


def test_count_markers_inside_fenced_blocks_not_counted():
    data = (
        b"[PATTERN] before\n"
        b"```markdown\n[DECISION] example\n[TODO] example\n```\n"
        b"~~~\n[FACT] example\n~~~\n"
        b"[PATTERN] after\n"
    )

    assert count_markers(data) == counts(PATTERN=2)


def test_count_markers_unclosed_fence_hides_the_rest_of_the_file():
    data = b"[SOLUTION] kept\n```\n[SOLUTION] code to the end\n"

    assert count_markers(data) == counts(SOLUTION=1)


def test_count_markers_lowercase_or_unknown_tags_not_counted():
    assert count_markers(b"[todo] [Decision] [NOTE] [ TODO ]") == ZERO


def test_count_markers_non_utf8_bytes_still_counted():
    data = "café [FACT] déjà vu [TRADEOFF]".encode("latin-1")

    assert count_markers(data) == counts(FACT=1, TRADEOFF=1)


def test_count_markers_empty_file_all_zero():
    assert count_markers(b"") == ZERO


def test_add_counts_sums_position_by_position():
    assert add_counts([counts(FACT=1), counts(FACT=2, TODO=1), ZERO]) == counts(FACT=3, TODO=1)


def test_first_heading_skips_headings_inside_code():
    data = b"intro\n```bash\n# not a title\n```\n## Real title ##\n# later\n"

    assert first_heading(data) == "Real title"


def test_first_heading_without_heading_is_none():
    assert first_heading(b"just text\n#hashtag is not a heading\n") is None


def test_first_heading_non_utf8_replaced_and_long_titles_shortened():
    data = b"# Caf\xe9 " + b"x" * 200 + b"\n"

    title = first_heading(data)

    assert title is not None and title.startswith("Caf\ufffd ")
    assert len(title) == 80 and title.endswith("…")


def test_count_markers_after_a_backtick_run_nothing_closes_still_counted():
    assert count_markers(b"text ``` [TODO] `` [FACT] ` [GOTCHA]\n") == counts(
        TODO=1, FACT=1, GOTCHA=1
    )


FIVE_MB = 5 * 1024 * 1024

# Shapes that made the scanning quadratic: one line, many markers, backticks everywhere, runs
# of backticks nothing closes, a heading padded with spaces. A quadratic scan needs hours on
# 5 MB (32 KB took 6 s): it times out here, where a linear one takes a few seconds.
ONE_LINE_SHAPES = {
    "markers between code spans": b"[TODO] `x` " * (FIVE_MB // 11),
    "unclosed opening run": b"``" + b"[TODO] x" * (FIVE_MB // 8),
    "backtick runs of every length": b"".join(b"`" * n + b"[FACT]" for n in range(1, 3200)),
    "one long backtick run": b"x" + b"`" * FIVE_MB + b"[TODO]",
    "heading padded with spaces": b"# a" + b" " * FIVE_MB + b"b [TODO]",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("data", ONE_LINE_SHAPES.values(), ids=ONE_LINE_SHAPES.keys())
def test_marker_scanning_one_5mb_line_finishes_in_linear_time(data):
    text = data.decode()

    counted = count_markers(data)
    first_heading(data)
    listed = markers_in_line(text)
    kept = lines_outside_code(text)

    assert sum(counted) == len(listed) > 0
    assert kept == [text]
