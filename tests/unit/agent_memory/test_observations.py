"""The one grammar of what a conversation's text holds: marked lines, tasks and file paths."""

from __future__ import annotations

import pytest

from memwarden.agent_memory.observations import (
    argument_paths,
    find_paths,
    inline_code_spans,
    lines_outside_code,
    marked_lines,
    markers_in_line,
    open_todos,
    shorten,
    task_changes,
)


def test_markers_in_line_ignores_inline_code():
    assert markers_in_line("[DECISION] keep `[TODO]` and [TODO] later") == ["DECISION", "TODO"]


def test_lines_outside_code_drops_fenced_lines():
    text = "a\n```\n[TODO] x\n```\nb\n~~~py\nc\n~~~\nd"

    assert lines_outside_code(text) == ["a", "b", "d"]


def test_shorten_flattens_whitespace_and_cuts_with_ellipsis():
    assert shorten("a\n  b\tc", 10) == "a b c"
    assert shorten("abcdefghij", 5) == "abcd…"


def test_inline_code_spans_close_only_on_a_run_of_the_same_length():
    line = "a ``b ` c`` d `e` f"

    assert [line[start:end] for start, end in inline_code_spans(line)] == ["``b ` c``", "`e`"]


def test_marked_lines_give_the_first_marker_and_the_line_without_its_bullet():
    text = (
        "- [DECISION] use SQLite [FACT] fast\n1. [GOTCHA] WAL needs -shm\n"
        "`[TODO]` no\n```\n[FACT] no\n```"
    )

    assert marked_lines(text) == [
        ("DECISION", "[DECISION] use SQLite [FACT] fast"),
        ("GOTCHA", "[GOTCHA] WAL needs -shm"),
    ]


def test_task_changes_open_with_checkboxes_todo_lines_and_todo_markers_in_order():
    text = "TODO: call Ada\n- [ ] renew TLS\n[TODO] rotate keys\n- [x] renew TLS\n`[TODO] code`"

    assert task_changes(text) == [
        ("call Ada", True),
        ("renew TLS", True),
        ("rotate keys", True),
        ("renew TLS", False),
    ]


def test_task_changes_leave_todo_markers_inside_fenced_code():
    assert task_changes("```\n[TODO] not a task\n```\n[TODO] a task") == [("a task", True)]


def test_open_todos_keeps_open_items_and_drops_the_ticked_ones():
    texts = [
        "Plan:\n- [ ] export posts\n- [ ] renew TLS\n* [ ] tell Bob",
        "TODO: write the changelog\n[TODO] rotate the keys",
        "Progress:\n- [x] export posts\n- [X] tell Bob\n- [x] rotate the keys",
    ]

    assert open_todos(texts) == ["renew TLS", "write the changelog"]


def test_open_todos_reopened_item_comes_last():
    texts = ["- [ ] a thing\n- [ ] other", "- [x] a thing", "- [ ] a thing again", "- [ ] a thing"]

    assert open_todos(texts) == ["other", "a thing again", "a thing"]


def test_find_paths_ignores_urls_dates_and_plain_words():
    text = (
        "See https://github.com/openclaw/openclaw/blob/main/src/x.ts, on 22/11/2026, "
        "and/or read ./scripts/run.sh or /etc/nginx/nginx.conf."
    )

    assert find_paths(text) == ["./scripts/run.sh", "/etc/nginx/nginx.conf"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": " src/a.py ", "content": "x/y.z"}, ["src/a.py"]),
        ({"paths": ["a.md", 3, "", "b/c.md"], "file_path": "d.txt"}, ["a.md", "b/c.md", "d.txt"]),
        ({"file": "two\nlines.md", "command": "cat /etc/hosts"}, []),
    ],
)
def test_argument_paths_read_only_path_arguments(arguments, expected):
    assert argument_paths(arguments) == expected


@pytest.mark.parametrize(
    "texts",
    [
        ["- [ ] TODO: write tests", "- [x] TODO: write tests"],
        ["- [ ] [TODO] write tests", "- [x] [TODO] write tests"],
        ["- [ ] TODO: write tests", "- [x] write tests"],
        ["TODO: write tests", "- [x] write tests"],
        ["[TODO] write tests", "- [X] TODO: write tests"],
    ],
)
def test_a_task_named_with_todo_in_a_checkbox_is_one_task_and_closes(texts):
    assert task_changes(texts[0]) == [("write tests", True)]
    assert open_todos(texts) == []
