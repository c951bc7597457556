"""Session summaries without a model: the window a reset closed, and what it said."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.jobs.summarize import (
    conversation,
    ended_window,
    observations,
    redact_messages,
    referenced_files,
    summarize,
)
from memwarden.openclaw.entries import parse_entry

START = datetime(2026, 11, 22, 5, 0, tzinfo=UTC)


def iso(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def message(entry_id: str, role: str, text: str, second: float, tool_calls=()):
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "name": name, "arguments": arguments} for name, arguments in tool_calls
    ]
    return parse_entry(
        {
            "type": "message",
            "id": entry_id,
            "timestamp": iso(second),
            "message": {
                "role": role,
                "content": content,
                "timestamp": int((START + timedelta(seconds=second)).timestamp() * 1000),
            },
        }
    )


def reset(entry_id: str, second: float):
    return parse_entry({"type": "reset", "id": entry_id, "timestamp": iso(second)})


TRANSCRIPT = [
    parse_entry({"type": "session", "id": "s1", "timestamp": iso(0)}),
    message("u1", "user", "first window", 1),
    reset("r1", 10),
    message("u2", "user", "second window", 11),
    message("a2", "assistant", "ok", 12),
    reset("r2", 20),
    message("u3", "user", "third, still open", 21),
]


def ids(entries) -> list[str]:
    return [entry.id for entry in entries]


def test_ended_window_with_event_time_is_closed_by_the_first_reset_after_it():
    window = ended_window(TRANSCRIPT, START + timedelta(seconds=19.5))

    assert ids(window) == ["u2", "a2"]


def test_ended_window_with_event_time_before_its_reset_is_written_is_none():
    assert ended_window(TRANSCRIPT, START + timedelta(seconds=25)) is None


def test_ended_window_without_event_time_is_before_the_last_reset():
    assert ids(ended_window(TRANSCRIPT, None)) == ["u2", "a2"]


def test_ended_window_without_resets_is_the_whole_transcript():
    assert ids(ended_window(TRANSCRIPT[:2], None)) == ["s1", "u1"]


def test_ended_window_first_window_starts_at_the_header():
    assert ids(ended_window(TRANSCRIPT, START + timedelta(seconds=5))) == ["s1", "u1"]


def test_observations_collects_marked_lines_under_each_marker_once():
    messages = [
        message("u", "user", "- [DECISION] use SQLite [TRADEOFF] slower writes\n* [TODO] bench", 1),
        message("a", "assistant", "[DECISION] use SQLite [TRADEOFF] slower writes\nplain", 2),
    ]

    found = observations(messages)

    both = "[DECISION] use SQLite [TRADEOFF] slower writes"
    assert found == {"DECISION": [both], "TRADEOFF": [both], "TODO": ["bench"]}


def test_observations_open_tasks_are_todos_and_code_is_ignored():
    text = (
        "- [ ] write docs\n- [x] done already\nTODO: call Ada\n- [ ] done later\n"
        "```\n[GOTCHA] in code\n- [ ] in code\n```\n"
    )
    later = "- [x] done later"

    found = observations([message("a", "assistant", text, 1), message("u", "user", later, 2)])

    assert found == {"TODO": ["write docs", "call Ada"]}


def test_referenced_files_from_tool_calls_and_the_paths_in_the_text():
    messages = [
        message(
            "a",
            "assistant",
            "Edited `src/app.py` and /etc/nginx/nginx.conf; see https://example.com/x.html "
            "and `not a path` or `make`, then docs/setup.md.",
            1,
            tool_calls=[("read", {"path": "README.md"}), ("edit", {"file_path": "src/app.py"})],
        )
    ]

    assert referenced_files(messages) == [
        "README.md",
        "src/app.py",
        "/etc/nginx/nginx.conf",
        "docs/setup.md",
    ]


def test_conversation_skips_control_replies_and_tool_results():
    window = [
        message("u", "user", "hi", 1),
        message("a", "assistant", "HEARTBEAT_OK", 2),
        message("t", "toolResult", "output", 3),
        message("b", "assistant", "hello", 4),
    ]

    assert ids(conversation(window)) == ["u", "b"]


def test_summarize_title_counts_and_excerpt_of_first_two_and_last():
    messages = [
        message(f"m{n}", "user" if n % 2 == 0 else "assistant", f"text {n}", n) for n in range(12)
    ]
    messages[0] = message("m0", "user", "/new", 0)
    messages[2] = message("m2", "user", "## Plan the Q4 launch: budget & dates!", 2)

    summary = summarize(messages, excerpt_messages=6)

    assert summary.title == "Plan the Q4 launch: budget & dates!"
    assert (summary.user_messages, summary.assistant_messages) == (6, 6)
    assert [item.text for item in summary.excerpt] == [
        "/new",
        "text 1",
        "text 8",
        "text 9",
        "text 10",
        "text 11",
    ]
    assert summary.omitted == 6
    assert summary.started == START and summary.ended == START + timedelta(seconds=11)


def test_summarize_excerpt_and_omitted_count_only_messages_with_text():
    said = [message(f"m{n}", "user", f"text {n}", n) for n in range(4)]
    calls = [message(f"c{n}", "assistant", " ", n, tool_calls=[("read", {})]) for n in range(3)]

    summary = summarize([said[0], *calls, *said[1:]], excerpt_messages=3)

    assert [item.text for item in summary.excerpt] == ["text 0", "text 1", "text 3"]
    assert summary.omitted == 1


def test_redact_messages_masks_text_and_every_path_argument_and_drops_thinking():
    token = "npm_" + "Q1w2E3r4T5" * 4
    called = message(
        "a1",
        "assistant",
        f"published with {token}",
        1,
        tool_calls=[("read", {"paths": [f"/srv/{token}/a.md", 7], "path": f"~/{token}.txt"})],
    )
    thinking = parse_entry(
        {
            "type": "message",
            "id": "a2",
            "timestamp": iso(2),
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"remember {token}"},
                    {"type": "text", "text": "done"},
                ],
            },
        }
    )

    masked = redact_messages([called, thinking], build_redactor().redact)

    assert masked[0].text == "published with [REDACTED:npm-token]"
    assert referenced_files(masked) == [
        "/srv/[REDACTED:npm-token]/a.md",
        "~/[REDACTED:npm-token].txt",
    ]
    assert masked[1].text == "done"
    assert token not in repr(masked)
