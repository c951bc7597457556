"""Rendering: template values from digests, and telling a real change from a new timestamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwarden.checkpoint.extract import Excerpt, WindowDigest
from memwarden.checkpoint.options import Limits
from memwarden.checkpoint.render import (
    ACTIVE_CONTEXT_TEMPLATE,
    GENERATED_AT_PLACEHOLDER,
    PreviousWindow,
    active_context_values,
    cut,
    demote_headings,
    pressure_text,
    render_template,
    same_apart_from_time,
    stamp,
)
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import SessionRecord

AT = datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def session(total=None, fresh=None, window=None, key="agent:main:main") -> SessionRecord:
    updated = int(AT.timestamp() * 1000)
    return SessionRecord(
        "main", key, "sid-1", classify(key).kind, updated, None, total, fresh, window,
        None, None, "fake-model", "file", None, None, None,
    )  # fmt: skip


def digest(*messages: tuple[str, str], **fields) -> WindowDigest:
    return WindowDigest(messages=[Excerpt(role, text, AT) for role, text in messages], **fields)


def render(values) -> str:
    return stamp(render_template(ACTIVE_CONTEXT_TEMPLATE, None, values), "2026-11-22T06:00:00Z")


def values_for(current, previous=None, limits=None, record=None, trigger="run"):
    return active_context_values(
        agent_id="main",
        session=record or session(1234, True, 32000),
        current=current,
        previous=previous,
        entries_read=14,
        limits=limits or Limits(),
        zone=UTC,
        trigger=trigger,
    )


def test_active_context_lists_last_requests_and_work_with_times_and_sections():
    current = digest(
        *[("user", f"request {n}") for n in range(7)],
        ("assistant", "did the thing\nin two lines"),
        files=["src/a.py"],
        tools={"exec": 2},
        todos=["renew TLS"],
        compaction_summary="## Decisions\nship it",
    )

    text = render(values_for(current))

    assert text.startswith("# Active Context — agent main\n")
    assert "> - generated at: 2026-11-22T06:00:00Z\n" in text
    assert "> - session: `agent:main:main` (id `sid-1`, model fake-model)\n" in text
    assert "> - entries read: 14\n" in text
    assert (
        "> - context size: 1,234 of 32,000 tokens (4%) as of 2026-11-22T05:30+00:00: "
        "the gateway's count, fresh\n"
    ) in text
    assert "> Written by memwarden checkpoint from this conversation's live transcript" in text
    requests = text.split("## Recent Requests\n")[1].split("\n\n")[0]
    assert requests.splitlines() == [
        f"- **2026-11-22T05:30+00:00** request {n}" for n in range(2, 7)
    ]
    assert "## Recent Work\n- **2026-11-22T05:30+00:00** did the thing\n  in two lines\n" in text
    assert "## Files Referenced\n- `src/a.py`\n" in text
    assert "## Tools Used\n- exec \N{MULTIPLICATION SIGN} 2\n" in text
    assert "## Open TODOs\n- [ ] renew TLS\n" in text
    assert "## Last Compaction Summary\n#### Decisions\nship it\n" in text
    assert "Previous Session" not in text


def test_active_context_with_previous_window_marks_it_with_the_previous_session_id():
    previous = PreviousWindow(digest(("user", "old request")), "old-sid", AT)

    text = render(values_for(digest(("user", "new request")), previous))

    current, _, kept = text.partition("## Previous Session `old-sid`")
    assert "new request" in current and "old request" not in current
    assert "had session id `old-sid` until the reset at 2026-11-22T05:30+00:00" in kept
    assert "the current window has only 1 message so far" in kept
    assert "### Recent Requests\n- **2026-11-22T05:30+00:00** old request\n" in kept
    assert "Before the Reset" not in text


def test_active_context_after_an_in_place_reset_never_calls_its_own_id_a_previous_session():
    previous = PreviousWindow(digest(("user", "old request")), "sid-1", AT, in_place=True)

    text = render(values_for(digest(), previous))

    assert "Previous Session" not in text
    current, _, kept = text.partition("## Before the Reset\n")
    assert "> - session: `agent:main:main` (id `sid-1`" in current
    assert "reset in place at 2026-11-22T05:30+00:00 (the gateway kept its id `sid-1`)" in kept
    assert "the window since then has no message so far" in kept
    assert "### Recent Requests\n- **2026-11-22T05:30+00:00** old request\n" in kept


def test_handoff_written_by_rotate_says_it_holds_the_conversation_before_that_reset():
    text = render(values_for(digest(("user", "plan it")), trigger="rotate"))

    assert "> Written by memwarden rotate right before it reset this conversation" in text
    assert "> - context size before the reset: 1,234 of 32,000 tokens" in text


def test_handoff_of_a_peer_conversation_is_titled_as_a_conversation_not_the_main_one():
    peer = session(None, None, None, key="agent:main:telegram:direct:42")

    text = render(values_for(digest(("user", "hello there")), record=peer))

    assert text.startswith("# Conversation Handoff — agent main, direct conversation\n")
    assert "> - session: `agent:main:telegram:direct:42` (id `sid-1`" in text
    assert "> - context size: unknown (no model call with a token count in this window)" in text


def test_same_apart_from_time_ignores_only_the_timestamp():
    rendered = f"# A\n> generated at: {GENERATED_AT_PLACEHOLDER}\nbody\n"

    assert same_apart_from_time("# A\n> generated at: 2026-11-22T05:00:00Z\nbody\n", rendered)
    assert not same_apart_from_time("# A\n> generated at: 2026-11-22T05:00:00Z\nbody!\n", rendered)
    assert not same_apart_from_time("# A\n> generated at: 2026\nlines\nbody\n", rendered)
    assert not same_apart_from_time(None, rendered)
    assert same_apart_from_time("no time", "no time")


@pytest.mark.parametrize(
    ("total", "fresh", "window", "last_call", "expected"),
    [
        (
            1234,
            True,
            32000,
            None,
            "1,234 of 32,000 tokens (4%) as of {at}: the gateway's count, fresh",
        ),
        (1234, None, 32000, None, "1,234 of 32,000 tokens (4%) as of {at}: the gateway's count"),
        (
            1234,
            False,
            32000,
            2000,
            "2,000 of 32,000 tokens (6%) as of {at}: the last model call's prompt in the "
            "transcript (the gateway's count is stale)",
        ),
        (
            0,
            True,
            32000,
            900,
            "900 of 32,000 tokens (3%) as of {at}: the last model call's prompt in the "
            "transcript (the gateway's count is missing)",
        ),
        (
            None,
            None,
            None,
            900,
            "900 tokens (context window unknown) as of {at}: the last model call's prompt in the "
            "transcript (the gateway's count is missing)",
        ),
        (None, None, 32000, None, None),
    ],
)
def test_pressure_text_says_which_count_it_is_and_as_of_when(
    total, fresh, window, last_call, expected
):
    last = WindowDigest(context_tokens=last_call, context_tokens_at=AT if last_call else None)

    text = pressure_text(session(total, fresh, window), last, UTC)

    assert text == (expected.format(at="2026-11-22T05:30+00:00") if expected else None)


def test_pressure_text_after_a_compaction_says_what_the_size_is():
    left = WindowDigest(context_tokens=80, context_tokens_at=AT, context_after_compaction=True)
    before = WindowDigest(
        context_tokens=1234, context_tokens_at=AT, compacted_since_at=AT + timedelta(minutes=2)
    )

    assert pressure_text(session(1234, False, 32000), left, UTC) == (
        "80 of 32,000 tokens (0%) as of 2026-11-22T05:30+00:00: what the last compaction left, "
        "in the transcript (the gateway's count is stale)"
    )
    assert pressure_text(session(1234, False, 32000), before, UTC) == (
        "1,234 of 32,000 tokens (4%) as of 2026-11-22T05:30+00:00: the last model call's prompt "
        "in the transcript, before the compaction at 2026-11-22T05:32+00:00 (the gateway's count "
        "is stale)"
    )


def test_cut_and_demote_headings():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdefg", 6) == "abcde…"
    assert demote_headings("# Title\n## Sub\n#hashtag\n###### Deep") == (
        "### Title\n#### Sub\n#hashtag\n###### Deep"
    )


def test_render_template_uses_the_operators_own_file(tmp_path: Path):
    custom = tmp_path / "mine.md.j2"
    custom.write_text("{{ agent }}: {{ current.requests | length }} requests\n")

    text = render_template(
        ACTIVE_CONTEXT_TEMPLATE, str(custom), values_for(digest(("user", "hello there")))
    )

    assert text == "main: 1 requests\n"
