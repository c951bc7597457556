"""A conversation's handoff: what it holds, as the template's values, fitted into its budget.

What a handoff carries, in this order: every marked item, every open task and every referenced
file of the conversation since it began (each with who said it and when), then its recent
messages (the last request and reply, then the user's other requests before the assistant's
other replies, newest first, shown in the order they were said, with the resets and compactions
between them), the tools it used and its last
compaction summary. It must fit the characters the gateway's bootstrap caps leave it (see
`openclaw.bootstrap`): the messages that do not fit are left out, the oldest first (then, only
if the items alone are too long, the oldest items), and the file says how many and which daily
logs hold them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any, NamedTuple

from memwarden.agent_memory.observations import cut
from memwarden.checkpoint.digest.conversation import Conversation, Said
from memwarden.checkpoint.render.values import (
    GENERATED_AT_PLACEHOLDER,
    demote_headings,
    minute,
    pressure_text,
    tidy,
)
from memwarden.openclaw.bootstrap import js_length

if TYPE_CHECKING:
    from types import SimpleNamespace

    from memwarden.openclaw.sessions import SessionRecord

# Which limit a budget is, when it is what the gateway's bootstrap caps leave a handoff.
GATEWAY_CAPS_LIMIT = "what the gateway's bootstrap caps leave it"
# The run's time takes up to this many more characters than its placeholder.
TIME_ALLOWANCE = 16
# What a message's list line adds to its text and time: `- **…, assistant:** …` and its end.
LINE_OVERHEAD = 20


class Shown(NamedTuple):
    """What of a conversation a handoff shows: its items but the `items_left_out` oldest, its
    first `messages` messages by priority, and its compaction summary or not."""

    items_left_out: int = 0
    messages: int = 0
    summary: bool = False


def fit_handoff(handoff: Handoff, budget: int, render: Callable[[Shown], str]) -> str:
    """Given a prepared handoff, a budget in characters (as the gateway counts them) and the
    function that renders it showing what a `Shown` says, return the longest rendering that
    fits: every item, then as many messages as fit, then the compaction summary when it fits
    too; when the items alone do not fit, without the oldest of them."""
    room = budget - TIME_ALLOWANCE
    messages = len(handoff.messages)
    whole = render(Shown(0, messages, summary=handoff.summary is not None))
    if js_length(whole) <= room:  # a conversation of a few dozen turns
        return whole

    def fits(shown: Shown) -> bool:
        return js_length(render(shown)) <= room

    base = render(Shown())
    if js_length(base) > room:  # the fewest oldest items left out that fit (else all of them)
        items = len(handoff.items)
        left_out = bisect_left(range(items), True, lo=1, key=lambda count: fits(Shown(count)))
        return render(Shown(left_out))
    # Start from what the messages' own lengths allow, then move to the exact count.
    guess = handoff.messages_within(room - js_length(base))
    shown = _nearest(lambda count: fits(Shown(0, count)), guess, messages)
    if handoff.summary and fits(Shown(0, shown, summary=True)):
        return render(Shown(0, shown, summary=True))
    return render(Shown(0, shown))


class Handoff:
    """A conversation's handoff, prepared once: the values of every item and message, so that
    rendering it showing more or less (`values`) costs little; the `checkpoint.*` `options` cut
    each message and the summary."""

    def __init__(
        self,
        *,
        agent_id: str,
        session: SessionRecord,
        conversation: Conversation,
        budget: int,
        budget_limit: str = GATEWAY_CAPS_LIMIT,
        options: SimpleNamespace,
        zone: tzinfo | None,
        trigger: str = "run",
    ) -> None:
        self.budget, self.budget_limit = budget, budget_limit
        self.dropped = (conversation.dropped_messages, conversation.dropped_items)
        self.header = {
            "agent": agent_id,
            "trigger": trigger,
            "generated_at": GENERATED_AT_PLACEHOLDER,
            "session": {
                "key": session.key,
                "id": session.session_id,
                "kind": session.kind.value,
                "model": conversation.model or session.model,
            },
            "pressure": pressure_text(session, conversation.context, zone),
            "conversation": {
                "since": minute(conversation.started_at, zone),
                "messages": conversation.message_count,
                "resets": conversation.resets,
                "compactions": conversation.compactions,
            },
            "tools": [
                {"name": name, "count": count}
                for name, count in sorted(conversation.tools.items(), key=lambda t: (-t[1], t[0]))
            ],
        }
        self.lists = {
            "marked": list(conversation.marked.values()),
            "tasks": list(conversation.tasks.values()),
            "files": list(reversed(conversation.paths.values())),
        }
        self.items = sorted(
            (item for kind in self.lists.values() for item in kind),
            key=lambda item: item.at if item.at is not None else 0.0,
        )
        self.item_values = {id(item): _item(item, zone) for item in self.items}
        self.messages = conversation.messages
        max_chars = options.message_max_chars
        self.message_values = [
            {**_item(message, zone), "text": cut(tidy(message.text), max_chars), "break": None}
            for message in self.messages
        ]
        self.days = [_day(message.at, zone) for message in self.messages]
        self.priority = _by_priority(self.messages)
        self.breaks = [
            (at, {"time": minute(at, zone), "who": None, "text": None, "break": kind})
            for kind, at in conversation.breaks
            if at is not None
        ]
        summary = conversation.compaction_summary
        self.summary = (
            demote_headings(cut(tidy(summary), options.summary_max_chars)) if summary else None
        )

    def messages_within(self, room: int) -> int:
        """Return how many messages, by priority, take at most `room` characters as list lines
        (an estimate of what a rendering shows: `fit_handoff` checks it)."""
        taken = 0
        for count, index in enumerate(self.priority):
            value = self.message_values[index]
            taken += len(value["text"]) + len(value["time"]) + LINE_OVERHEAD
            if taken > room:
                return count
        return len(self.priority)

    def values(self, shown: Shown) -> dict[str, Any]:
        """Return every value the template sees, showing what `shown` says; `generated_at` is
        the placeholder."""
        kept = {id(item) for item in self.items[shown.items_left_out :]}
        chosen = set(self.priority[: shown.messages])
        listed = {
            name: [self.item_values[id(item)] for item in items if id(item) in kept]
            for name, items in self.lists.items()
        }
        hidden = {name: len(items) - len(listed[name]) for name, items in self.lists.items()}
        return {
            **self.header,
            **listed,
            "items_left_out": hidden,
            "exchanges": self._exchanges(sorted(chosen)),
            "compaction_summary": self.summary if shown.summary else None,
            "left_out": self._left_out(shown, chosen),
        }

    def _exchanges(self, shown: list[int]) -> list[dict[str, Any]]:
        """The messages shown, in the order they were said, with the resets and compactions
        that came between them."""
        if not shown:
            return []
        first = self.messages[shown[0]].at
        ordered = [
            (self.messages[index].at or 0.0, 0, index, self.message_values[index])
            for index in shown
        ]
        if first is not None:
            ordered += [(at, -1, 0, value) for at, value in self.breaks if at > first]
        return [value for *_, value in sorted(ordered, key=lambda one: one[:3])]

    def _left_out(self, shown: Shown, chosen: set[int]) -> dict[str, Any] | None:
        messages = self.messages
        hidden = [index for index in range(len(messages)) if index not in chosen]
        requests = sum(1 for index in hidden if messages[index].role == "user")
        dropped_messages, dropped_items = self.dropped
        counts = (
            (requests, "request", "requests"),
            (len(hidden) - requests, "reply", "replies"),
            (dropped_messages, "message before those", "messages before those"),
            (shown.items_left_out + dropped_items, "oldest item", "oldest items"),
        )
        what = [f"{count} {one if count == 1 else many}" for count, one, many in counts if count]
        if not what:
            return None
        days = sorted({self.days[index] for index in hidden if self.days[index] is not None})
        return {
            "what": what,
            "budget": f"{self.budget:,}",
            "limit": self.budget_limit,
            "logs": [f"memory/{day}.md" for day in days],
        }


def _by_priority(messages: list[Said]) -> list[int]:
    """The indexes of the messages in the order a handoff keeps them: the last request and the
    last reply, then the user's other requests, newest first, then the other replies."""
    newest_first = range(len(messages) - 1, -1, -1)
    requests = [index for index in newest_first if messages[index].role == "user"]
    replies = [index for index in newest_first if messages[index].role != "user"]
    latest = requests[:1] + replies[:1]
    return latest + requests[1:] + replies[1:]


def _item(item: Said, zone: tzinfo | None) -> dict[str, Any]:
    return {
        "time": minute(item.at, zone) or "time unknown",
        "who": item.role,
        "text": item.text,
    }


def _day(at: float | None, zone: tzinfo | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, UTC).astimezone(zone).date().isoformat()


def _nearest(good: Callable[[int], bool], guess: int, high: int) -> int:
    """The largest count in [0, high] that is good, looked for from `guess` in steps that
    double, then halve (a few tries when the guess is close); `good(0)` holds, and `good` holds
    up to some count."""
    if good(guess):
        low, step = guess, 1
        while low < high and good(upper := min(high, low + step)):
            low, step = upper, step * 2
        return _most(good, low, min(high, low + step) - 1) if low < high else low
    high, step = guess - 1, 1
    while high > 0 and not good(lower := max(0, high - step)):
        high, step = lower - 1, step * 2
    return _most(good, max(0, high - step), high)


def _most(good: Callable[[int], bool], low: int, high: int) -> int:
    """The largest count in [low, high] that is good (low when none above it is); `good`
    holds up to some count."""
    return bisect_left(range(high + 1), True, lo=low + 1, key=lambda count: not good(count)) - 1
