"""Rendering: a handoff's header from the session and the conversation, and telling a real change
from a new timestamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwarden.agent_memory.observations import cut
from memwarden.checkpoint.digest.conversation import ContextSize, Conversation, Said
from memwarden.checkpoint.render.handoff import Handoff, Shown
from memwarden.checkpoint.render.values import (
    ACTIVE_CONTEXT_TEMPLATE,
    GENERATED_AT_PLACEHOLDER,
    demote_headings,
    pressure_text,
    render_template,
    same_apart_from_time,
    stamp,
)
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import SessionRecord
from memwarden.settings.config import defaults

AT = datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def session(total=None, fresh=None, window=None, key="agent:main:main") -> SessionRecord:
    updated = int(AT.timestamp() * 1000)
    return SessionRecord(
        "main", key, "sid-1", classify(key).kind, updated, None, total, fresh, window,
        "fake-model", None, None,
    )  # fmt: skip


def held(*messages: tuple[str, str]) -> Conversation:
    said = [Said(role, text, AT.timestamp()) for role, text in messages]
    return Conversation(messages=said, message_count=len(said), started_at=AT.timestamp())


def render(values) -> str:
    return stamp(render_template(ACTIVE_CONTEXT_TEMPLATE, None, values), "2026-11-22T06:00:00Z")


def values_for(conversation, record=None, trigger="run"):
    handoff = Handoff(
        agent_id="main",
        session=record or session(1234, True, 32000),
        conversation=conversation,
        budget=20_000,
        options=defaults().checkpoint,
        zone=UTC,
        trigger=trigger,
    )
    return handoff.values(Shown(0, len(conversation.messages)))


def test_handoff_header_says_who_wrote_it_whose_it_is_and_what_the_conversation_held():
    conversation = held(("user", "plan it"), ("assistant", "planned"))
    conversation.resets, conversation.compactions, conversation.model = 1, 2, "fake-model"

    text = render(values_for(conversation))

    assert text.startswith(
        "# Active Context — agent main\n\n"
        "> Written by memwarden checkpoint from this conversation's live transcript; replaced "
        "when it changes, do not edit.\n"
        "> - generated at: 2026-11-22T06:00:00Z\n"
        "> - session: `agent:main:main` (id `sid-1`, model fake-model)\n"
        "> - conversation: since 2026-11-22T05:30+00:00, 2 messages, 1 reset, 2 compactions\n"
        "> - context size: 1,234 of 32,000 tokens (4%) as of 2026-11-22T05:30+00:00: the "
        "gateway's count, fresh\n"
    )


def test_handoff_written_by_rotate_says_it_holds_the_conversation_before_that_reset():
    text = render(values_for(held(("user", "plan it")), trigger="rotate"))

    assert "> Written by memwarden rotate right before it reset this conversation" in text
    assert "> - context size before the reset: 1,234 of 32,000 tokens" in text


def test_handoff_of_a_peer_conversation_is_titled_as_a_conversation_not_the_main_one():
    peer = session(None, None, None, key="agent:main:telegram:direct:42")

    text = render(values_for(held(("user", "hello there")), record=peer))

    assert text.startswith("# Conversation Handoff — agent main, direct conversation\n")
    assert "> - session: `agent:main:telegram:direct:42` (id `sid-1`" in text
    assert "> - context size: unknown (no model call with a token count seen yet)" in text


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
        # Right after a reset the gateway's count is 0 and fresh: the older prompt is not it.
        (0, True, 32000, 2000, "0 of 32,000 tokens (0%) as of {at}: the gateway's count, fresh"),
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
    last = ContextSize(last_call, AT.timestamp() if last_call else None)

    text = pressure_text(session(total, fresh, window), last, UTC)

    assert text == (expected.format(at="2026-11-22T05:30+00:00") if expected else None)


def test_pressure_text_after_a_compaction_says_what_the_size_is():
    left = ContextSize(80, AT.timestamp(), after_compaction=True)
    before = ContextSize(1234, AT.timestamp(), compacted_at=(AT + timedelta(minutes=2)).timestamp())

    assert pressure_text(session(1234, False, 32000), left, UTC) == (
        "80 of 32,000 tokens (0%) as of 2026-11-22T05:30+00:00: what the last compaction left, "
        "in the transcript (the gateway's count is stale)"
    )
    # The prompt before a compaction that did not say what it left is no longer the context.
    assert pressure_text(session(1234, False, 32000), before, UTC) == (
        "unknown since the compaction at 2026-11-22T05:32+00:00, which did not say what it left "
        "(the gateway's count is stale)"
    )


def test_pressure_text_after_a_reset_with_no_gateway_count_says_zero_not_the_older_prompt():
    reset = ContextSize(0, AT.timestamp(), after_reset=True)

    assert pressure_text(session(None, None, 32000), reset, UTC) == (
        "0 of 32,000 tokens (0%) as of 2026-11-22T05:30+00:00: none since the reset in the "
        "transcript (the gateway's count is missing)"
    )


def test_cut_and_demote_headings():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdefg", 6) == "abcde…"
    assert demote_headings("# Title\n## Sub\n#hashtag\n###### Deep") == (
        "### Title\n#### Sub\n#hashtag\n###### Deep"
    )


def test_render_template_uses_the_operators_own_file(tmp_path: Path):
    custom = tmp_path / "mine.md.j2"
    custom.write_text("{{ agent }}: {{ exchanges | length }} messages\n")

    text = render_template(
        ACTIVE_CONTEXT_TEMPLATE, str(custom), values_for(held(("user", "hello there")))
    )

    assert text == "main: 1 messages\n"
