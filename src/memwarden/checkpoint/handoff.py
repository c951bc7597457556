"""A conversation's handoff: what it holds, as the template's values, fitted into its budget.

What a handoff carries, in this order: every marked item, every open task and every referenced
file of the conversation since it began (each with who said it and when), then its recent
messages (the user's requests before the assistant's replies, newest first, shown in the order
they were said, with the resets and compactions between them), the tools it used and its last
compaction summary. It must fit the characters the gateway's bootstrap caps leave it (see
`openclaw.bootstrap`): the messages that do not fit are left out, the oldest first (then, only
if the items alone are too long, the oldest items), and the file says how many and which daily
logs hold them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any

from memwarden.checkpoint.conversation import Conversation, Said
from memwarden.checkpoint.daily_log import local
from memwarden.checkpoint.options import Limits
from memwarden.checkpoint.render import (
    GENERATED_AT_PLACEHOLDER,
    cut,
    demote_headings,
    pressure_text,
    tidy,
)
from memwarden.openclaw.bootstrap import js_length

if TYPE_CHECKING:
    from memwarden.openclaw.sessions import SessionRecord

# The run's time takes up to this many more characters than its placeholder.
TIME_ALLOWANCE = 16
WHO = {"user": "user", "assistant": "assistant"}


@dataclass(frozen=True)
class Shown:
    """What of a conversation a handoff shows: its items but the `items_left_out` oldest, its
    first `messages` messages by priority, and its compaction summary or not."""

    items_left_out: int = 0
    messages: int = 0
    summary: bool = False


def fit_handoff(conversation: Conversation, budget: int, render: Callable[[Shown], str]) -> str:
    """Given a conversation, a budget in characters (as the gateway counts them) and the
    function that renders the handoff showing what a `Shown` says, return the longest handoff
    that fits: every item, then as many messages as fit, then the compaction summary when it
    fits too; when the items alone do not fit, without the oldest of them."""
    room = budget - TIME_ALLOWANCE

    def fits(shown: Shown) -> bool:
        return js_length(render(shown)) <= room

    messages = len(conversation.messages)
    if not fits(Shown()):
        items = len(_items_oldest_first(conversation))
        left_out = _least(lambda count: fits(Shown(count)), 1, items)
        return render(Shown(left_out))
    if fits(Shown(0, messages)):
        shown = messages
    else:
        shown = _most(lambda count: fits(Shown(0, count)), 0, messages - 1)
    if conversation.compaction_summary and fits(Shown(0, shown, summary=True)):
        return render(Shown(0, shown, summary=True))
    return render(Shown(0, shown))


def handoff_values(
    *,
    agent_id: str,
    session: SessionRecord,
    conversation: Conversation,
    shown: Shown,
    budget: int,
    limits: Limits,
    zone: tzinfo | None,
    trigger: str = "run",
) -> dict[str, Any]:
    """Return every value a handoff's template sees, showing what `shown` says; `generated_at`
    is the placeholder. `trigger` is why it is written: "rotate" (right before rotate resets
    the session), "session" (`checkpoint --session`) or "run"."""
    items = _items_oldest_first(conversation)[shown.items_left_out :]
    kept = set(map(id, items))
    chosen = set(map(id, _by_priority(conversation.messages)[: shown.messages]))
    messages = [message for message in conversation.messages if id(message) in chosen]
    summary = conversation.compaction_summary if shown.summary else None
    return {
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
            "since": _time(conversation.started_at, zone),
            "messages": conversation.message_count,
            "resets": conversation.resets,
            "compactions": conversation.compactions,
        },
        "marked": [_item(item, zone) for item in conversation.marked.values() if id(item) in kept],
        "tasks": [_item(task, zone) for task in conversation.tasks.values() if id(task) in kept],
        "files": [
            _item(path, zone) for path in reversed(conversation.paths.values()) if id(path) in kept
        ],
        "exchanges": _exchanges(conversation, messages, limits, zone),
        "tools": [{"name": name, "count": count} for name, count in _tools(conversation)],
        "compaction_summary": (
            demote_headings(cut(tidy(summary), limits.summary_max_chars)) if summary else None
        ),
        "left_out": _left_out(conversation, shown, messages, budget, zone),
    }


def _items_oldest_first(conversation: Conversation) -> list[Said]:
    items = [*conversation.marked.values(), *conversation.tasks.values()]
    items += conversation.paths.values()
    return sorted(items, key=lambda item: item.at if item.at is not None else 0.0)


def _by_priority(messages: list[Said]) -> list[Said]:
    """The user's requests, newest first, then the assistant's replies, newest first."""
    requests = [message for message in reversed(messages) if message.role == "user"]
    return requests + [message for message in reversed(messages) if message.role != "user"]


def _exchanges(
    conversation: Conversation, messages: list[Said], limits: Limits, zone: tzinfo | None
) -> list[dict[str, Any]]:
    """The messages shown, in the order they were said, with the resets and compactions that
    came between them."""
    if not messages:
        return []
    first = messages[0].at
    shown: list[tuple[float, int, dict[str, Any]]] = []
    for order, message in enumerate(messages):
        text = cut(tidy(message.text), limits.message_max_chars)
        time = _time(message.at, zone) or "time unknown"
        entry = {"time": time, "who": WHO.get(message.role), "text": text, "break": None}
        shown.append((message.at or 0.0, order, entry))
    for kind, at in conversation.breaks:
        if at is not None and first is not None and at > first:
            entry = {"time": _time(at, zone), "who": None, "text": None, "break": kind}
            shown.append((at, -1, entry))
    return [entry for _, _, entry in sorted(shown, key=lambda one: (one[0], one[1]))]


def _left_out(
    conversation: Conversation,
    shown: Shown,
    messages: list[Said],
    budget: int,
    zone: tzinfo | None,
) -> dict[str, Any] | None:
    requests = sum(1 for message in conversation.messages if message.role == "user")
    shown_requests = sum(1 for message in messages if message.role == "user")
    outputs = len(conversation.messages) - requests - (len(messages) - shown_requests)
    counts = (
        (requests - shown_requests, "earlier request", "earlier requests"),
        (outputs, "earlier reply", "earlier replies"),
        (conversation.dropped_messages, "message before those", "messages before those"),
        (shown.items_left_out + conversation.dropped_items, "oldest item", "oldest items"),
    )
    what = [f"{count} {one if count == 1 else many}" for count, one, many in counts if count]
    if not what:
        return None
    kept = set(map(id, messages))
    days = sorted(
        {
            local(datetime.fromtimestamp(message.at, UTC), zone).date().isoformat()
            for message in conversation.messages
            if id(message) not in kept and message.at is not None
        }
    )
    return {"what": what, "budget": f"{budget:,}", "logs": [f"memory/{day}.md" for day in days]}


def _item(item: Said, zone: tzinfo | None) -> dict[str, Any]:
    return {
        "time": _time(item.at, zone) or "time unknown",
        "who": WHO.get(item.role, item.role),
        "text": item.text,
    }


def _tools(conversation: Conversation) -> list[tuple[str, int]]:
    return sorted(conversation.tools.items(), key=lambda item: (-item[1], item[0]))


def _time(at: float | None, zone: tzinfo | None) -> str | None:
    if at is None:
        return None
    return local(datetime.fromtimestamp(at, UTC), zone).isoformat(timespec="minutes")


def _least(good: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest count in [low, high] that is good (high when none is below it); `good`
    holds from some count on."""
    while low < high:
        middle = (low + high) // 2
        if good(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _most(good: Callable[[int], bool], low: int, high: int) -> int:
    """The largest count in [low, high] that is good (low when none above it is); `good`
    holds up to some count."""
    while low < high:
        middle = (low + high + 1) // 2
        if good(middle):
            low = middle
        else:
            high = middle - 1
    return low
