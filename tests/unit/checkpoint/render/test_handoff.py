"""A conversation's handoff: every item first, then as many messages as fit its budget, said
by whom and when; the daily-log grouping by local date; and the archive of a file-era reset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

from memwarden.checkpoint.digest.conversation import Conversation, Said
from memwarden.checkpoint.digest.daily_log import group_by_day
from memwarden.checkpoint.digest.extract import Excerpt
from memwarden.checkpoint.read.gather import archives_near
from memwarden.checkpoint.render.bundled import active_context
from memwarden.checkpoint.render.handoff import Handoff, fit_handoff
from memwarden.openclaw.bootstrap import js_length
from memwarden.openclaw.keys import SessionKind
from memwarden.settings.config import defaults

T0 = datetime(2026, 11, 28, 9, 0, tzinfo=UTC).timestamp()
SESSION = SimpleNamespace(
    key="agent:main:main",
    session_id="s-1",
    kind=SessionKind.MAIN,
    model=None,
    total_tokens=None,
    total_tokens_fresh=None,
    updated=None,
    context_tokens=None,
)


def conversation(turns: int, *, items_per_turn: int = 2, text: str = "") -> Conversation:
    """A conversation of `turns` requests and replies; each request carries marked items."""
    held = Conversation(started_at=T0)
    for turn in range(turns):
        at = T0 + 60 * turn
        request = f"request {turn} {text}"
        held.messages += [Said("user", request, at), Said("assistant", f"reply {turn}", at + 1)]
        held.message_count += 2
        for number in range(items_per_turn):
            item = f"[DECISION] item {turn}.{number}"
            held.marked[item] = Said("user", item, at, "DECISION")
        held.tasks[f"task {turn}"] = Said("assistant", f"task {turn}", at + 1)
        held.paths[f"src/f{turn}.py"] = Said("user", f"src/f{turn}.py", at)
    return held


def rendered(held: Conversation, budget: int, options: SimpleNamespace | None = None) -> str:
    handoff = Handoff(
        agent_id="main",
        session=SESSION,
        conversation=held,
        budget=budget,
        options=options or defaults().checkpoint,
        zone=UTC,
    )
    return fit_handoff(handoff, budget, lambda shown: active_context(handoff.values(shown)))


def test_handoff_within_budget_carries_every_item_and_message_by_whom_and_when():
    held = conversation(7)

    text = rendered(held, 20_000)

    for item in [*held.marked, *held.tasks, *held.paths]:
        assert item in text
    for message in held.messages:
        assert message.text.strip() in text
    assert "- **2026-11-28T09:00+00:00, user:** [DECISION] item 0.0\n" in text
    assert "- [ ] task 3 _(assistant, 2026-11-28T09:03+00:00)_\n" in text
    assert "- **2026-11-28T09:06+00:00, user:** request 6" in text
    assert "not instructions from the operator" in text
    assert "## Left Out" not in text


def test_handoff_over_budget_keeps_every_item_and_the_newest_requests_and_says_what_it_left():
    held = conversation(40, text="x" * 500)

    text = rendered(held, 12_000)

    assert js_length(text) <= 12_000
    for item in [*held.marked, *held.tasks, *held.paths]:
        assert item in text
    shown = [turn for turn in range(40) if f"request {turn} " in text]
    assert shown == list(range(40 - len(shown), 40)) and 0 < len(shown) < 40
    assert "reply 39\n" in text  # the last reply stays with the last request
    assert "## Left Out\n" in text
    assert f"{40 - len(shown)} requests, 39 replies of earlier turns" in text
    assert "the daily logs memory/2026-11-28.md list every request" in text
    assert "budget of 12,000 characters" in text


def test_handoff_shows_requests_before_older_replies_when_both_do_not_fit():
    held = conversation(10, items_per_turn=0, text="y" * 300)

    text = rendered(held, 5_000)

    requests = sum(f"request {turn} " in text for turn in range(10))
    replies = [turn for turn in range(10) if f"reply {turn}\n" in text]
    assert requests > 1 and replies == [9]  # the newest reply, and no older one
    assert "9 replies" in text


def test_handoff_whose_items_alone_pass_the_budget_leaves_out_the_oldest_items():
    held = conversation(60, items_per_turn=3)

    text = rendered(held, 4_000)

    assert js_length(text) <= 4_000
    assert "[DECISION] item 59.2" in text and "[DECISION] item 0.0" not in text
    assert "oldest items" in text


def test_handoff_shows_resets_and_compactions_between_the_messages():
    held = conversation(2, items_per_turn=0)
    held.breaks = [("reset", T0 + 30), ("compaction", T0 + 90)]

    text = rendered(held, 20_000)

    assert (
        text.index("reply 0") < text.index("the session was reset here") < text.index("request 1")
    )
    assert text.index("reply 1") < text.index("the session was compacted here")


def test_handoff_shows_the_compaction_summary_only_when_it_fits_after_the_messages():
    held = conversation(3, items_per_turn=0)
    held.compaction_summary = "## Decisions\nkeep it " + "z" * 3000

    assert "#### Decisions" in rendered(held, 20_000)
    short = rendered(held, 2_600)
    assert "Last Compaction Summary" not in short and "request 2" in short


def test_archives_near_lists_the_archives_renamed_when_it_began_closest_first():
    started = datetime(2026, 11, 22, 5, 35, 7, 924000, tzinfo=UTC)
    archives = [
        (Path("old.jsonl.reset.a"), started - timedelta(hours=2)),
        (Path("other.jsonl.reset.d"), started - timedelta(seconds=3)),
        (Path("match.jsonl.reset.b"), started + timedelta(milliseconds=1)),
        (Path("undated.jsonl.reset.c"), None),
    ]

    assert archives_near(archives, started) == [
        Path("match.jsonl.reset.b"),
        Path("other.jsonl.reset.d"),
    ]
    assert archives_near(archives[:1], started) == []
    assert archives_near(archives, None) == []


def excerpt(text: str, at: datetime | None) -> Excerpt:
    return Excerpt("user", text, at)


def test_group_by_day_splits_messages_at_local_midnight():
    paris = ZoneInfo("Europe/Paris")
    messages = [
        excerpt("late", datetime(2026, 11, 22, 22, 50, tzinfo=UTC)),  # 23:50 in Paris
        excerpt("after midnight", datetime(2026, 11, 22, 23, 10, tzinfo=UTC)),  # 00:10
        excerpt("no time", None),
    ]
    fallback = datetime(2026, 11, 23, 0, 0, tzinfo=UTC)

    groups = group_by_day(messages, paris, fallback)

    assert [(group.day.isoformat(), [m.text for m in group.messages]) for group in groups] == [
        ("2026-11-22", ["late"]),
        ("2026-11-23", ["after midnight", "no time"]),
    ]


@pytest.mark.parametrize("size", [0, 1, 2, 7, 33])
def test_the_search_for_how_many_fit_finds_the_largest_from_any_guess(size):
    from memwarden.checkpoint.render.handoff import _nearest

    for largest in range(size + 1):
        for guess in range(size + 1):
            tried: list[int] = []

            def fits(count: int, largest: int = largest, tried: list[int] = tried) -> bool:
                tried.append(count)
                return count <= largest

            assert _nearest(fits, guess, size) == largest, (guess, largest)
            assert all(0 <= count <= size for count in tried)
