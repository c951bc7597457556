"""Which sessions to rotate, and why: pure code over the gateway's `sessions.list` rows.

A session is rotated when its context passes the threshold (an absolute token count, or a
fraction of the session's own context window, whichever comes first), it is not automation, its
token count is fresh (or confirmed from its transcript), it is not mid-turn, and the per-run cap
is not reached. Every row gets a Decision with a reason, whether it is rotated or not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from memwarden.openclaw.context_count import (
    TRANSCRIPT_MEASURES,
    gateway_count,
    gateway_gap,
    gateway_source,
)
from memwarden.openclaw.entries import Compaction, Message, Reset, SessionHeader
from memwarden.openclaw.keys import SessionKind, classify, is_automation_key

if TYPE_CHECKING:
    from memwarden.openclaw.entries import Entry
    from memwarden.openclaw.gateway import SessionRow
    from memwarden.settings.config import Config

Action = Literal["rotate", "skip"]


@dataclass(frozen=True)
class Policy:
    """The limits and guards of one rotation run."""

    threshold_tokens: int = 150_000
    context_ratio: float = 0.75
    max_per_run: int = 5
    quiet_seconds: int = 120
    automation_patterns: tuple[str, ...] = ()

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        threshold_tokens: int | None = None,
        context_ratio: float | None = None,
        max_per_run: int | None = None,
    ) -> Policy:
        """Given memwarden's config and the command line's overrides, return the policy."""
        settings = config.rotate
        return cls(
            threshold_tokens=threshold_tokens or settings.threshold_tokens,
            context_ratio=context_ratio or settings.context_ratio,
            max_per_run=max_per_run or settings.max_per_run,
            quiet_seconds=settings.quiet_seconds,
            automation_patterns=tuple(settings.automation_patterns),
        )


@dataclass(frozen=True)
class Decision:
    """What rotation does with one session, and why.

    `check` names the guard that decided (`rotate` when none held it back); `wanted` is True
    when the session is over its limit and may be rotated at all (not automation), so a `skip`
    with `wanted` is a rotation postponed (mid-turn, per-run cap).
    """

    key: str
    agent_id: str | None
    session_id: str | None
    action: Action
    check: str
    reason: str
    wanted: bool
    tokens: int | None
    token_source: str | None
    context_tokens: int | None
    limit: int

    def to_json(self) -> dict[str, Any]:
        # Every field is a plain value: dataclasses.asdict would deep-copy each one, a third of
        # a dry run over 10,000 listed sessions.
        return {name: getattr(self, name) for name in _DECISION_FIELDS}


_DECISION_FIELDS = tuple(field.name for field in fields(Decision))


def needs_confirmation(rows: Iterable[SessionRow], policy: Policy) -> list[SessionRow]:
    """Given rows, return those whose token count must be confirmed from the transcript.

    These are the rows rotation could act on (not automation, with a session id) whose count
    the gateway marks stale (`totalTokensFresh: false`) or does not know.
    """
    return [
        row
        for row in rows
        if row.session_id
        and _eligible_key(row.key, policy) is None
        and gateway_count(row.total_tokens, row.total_tokens_fresh) is None
    ]


def decide(
    rows: Sequence[SessionRow],
    policy: Policy,
    now: datetime,
    confirmed: Mapping[str, TranscriptContext | None] | None = None,
) -> list[Decision]:
    """Given the listed rows, the policy, the time and the counts confirmed from transcripts
    (by key; None when the transcript could not tell), return one Decision per row.

    Rotations come first, fullest first; at most `policy.max_per_run` rows are rotated, the
    other wanted rows are skipped with the reason `cap`. Then come the skips, in row order.
    """
    now_ms = int(now.timestamp() * 1000)
    confirmed = confirmed or {}
    candidates: list[tuple[float, Decision]] = []
    skipped: list[Decision] = []
    for row in rows:
        decision = _judge(row, policy, now_ms, confirmed)
        if decision.action == "rotate":
            fullness = (decision.tokens or 0) / decision.limit
            candidates.append((fullness, decision))
        else:
            skipped.append(decision)
    candidates.sort(key=lambda pair: (-pair[0], pair[1].key))
    chosen = [decision for _, decision in candidates[: policy.max_per_run]]
    postponed = [_capped(decision, policy) for _, decision in candidates[policy.max_per_run :]]
    return chosen + postponed + skipped


class TranscriptContext(NamedTuple):
    """The context size a transcript shows, and what gives it: the last model call's `prompt`,
    what a `compaction` after it left (its tokensAfter), or 0 after a `reset`."""

    tokens: int
    measure: str


def transcript_context(entries: Sequence[Entry]) -> TranscriptContext | None:
    """Given a transcript's last entries in order, return its current context size, or None.

    The size is the prompt of the last assistant message with usage (input + cache; a usage of
    0, as an aborted reply has, measures nothing), unless a compaction or reset came after it:
    then it is the compaction's `tokensAfter` (None if it does not say) or 0 after a reset (a
    reset line, or a session header after messages). None when the entries hold neither.
    Checkpoint's `Conversation` reads the same rule forward.
    """
    first = next((i for i, entry in enumerate(entries) if type(entry) is Message), len(entries))
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        kind = type(entry)
        if kind is Reset or (kind is SessionHeader and index > first):
            return TranscriptContext(0, "reset")
        if kind is Compaction:
            after = entry.tokens_after
            return None if after is None else TranscriptContext(after, "compaction")
        usage = entry.usage if kind is Message and entry.role == "assistant" else None
        if usage is not None and usage.context_tokens:
            return TranscriptContext(usage.context_tokens, "prompt")
    return None


# --- the guards, in the order they are checked --------------------------------------------------


def _judge(
    row: SessionRow,
    policy: Policy,
    now_ms: int,
    confirmed: Mapping[str, TranscriptContext | None],
) -> Decision:
    limit = policy.threshold_tokens
    if row.context_tokens:  # a share of the session's own window, when that is less
        limit = min(limit, math.ceil(policy.context_ratio * row.context_tokens))
    tokens, source, measure = _count(row, confirmed)
    wanted = tokens is not None and tokens >= limit

    def decision(action: Action, check: str, reason: str, counted_in: bool) -> Decision:
        return Decision(
            row.key,
            row.agent_id,
            row.session_id,
            action,
            check,
            reason,
            counted_in,
            tokens,
            source,
            row.context_tokens,
            limit,
        )

    def skip(check: str, reason: str, held_back: bool = True) -> Decision:
        return decision("skip", check, reason, wanted and held_back)

    if not row.session_id:
        return skip("no_session", "the gateway lists no sessionId for it", held_back=False)
    key_problem = _eligible_key(row.key, policy)
    if key_problem is not None:
        return skip(*key_problem, held_back=False)
    if tokens is None:
        return skip("stale_count", _unconfirmed_reason(row, confirmed))
    counted = _count_text(tokens, measure, row.total_tokens_fresh)
    if not wanted:
        return skip("below_threshold", f"{counted} < limit {_limit_text(limit, row, policy)}")
    busy = _mid_turn(row, policy, now_ms)
    if busy is not None:
        return skip("mid_turn", busy)
    over = f"{counted} ≥ limit {_limit_text(limit, row, policy)}"
    return decision("rotate", "rotate", over, wanted)


def _eligible_key(key: str, policy: Policy) -> tuple[str, str] | None:
    info = classify(key)
    if is_automation_key(key, policy.automation_patterns):
        kind = info.kind.value if info.is_automation else "matches rotate.automation_patterns"
        return "automation", f"automation session ({kind}): never rotated"
    if info.kind is SessionKind.UNKNOWN:
        return "unknown_key", "unrecognised session key: not rotated unattended"
    return None


def _count(
    row: SessionRow, confirmed: Mapping[str, TranscriptContext | None]
) -> tuple[int | None, str | None, str | None]:
    tokens = gateway_count(row.total_tokens, row.total_tokens_fresh)
    if tokens is not None:
        return tokens, "gateway", None
    found = confirmed.get(row.key)
    return (found.tokens, "transcript", found.measure) if found is not None else (None, None, None)


def _count_text(tokens: int, measure: str | None, fresh: bool | None) -> str:
    """Return a token count saying which count it is: the gateway's (fresh when it says so), or
    the one read from the transcript (`measure`) when the gateway's is stale or missing."""
    if measure is not None:
        measured = TRANSCRIPT_MEASURES[measure]
        return f"{tokens:,} tokens ({measured}; the gateway's count is {gateway_gap(fresh)})"
    return f"{tokens:,} tokens ({gateway_source(fresh)})"


def _unconfirmed_reason(row: SessionRow, confirmed: Mapping[str, TranscriptContext | None]) -> str:
    what = "unknown" if row.total_tokens is None else f"stale ({row.total_tokens:,}, not fresh)"
    if row.key in confirmed:
        return f"token count is {what} and the transcript does not show the context size"
    return f"token count is {what} and the transcript was not read"


def _mid_turn(row: SessionRow, policy: Policy, now_ms: int) -> str | None:
    if (row.status or "").lower() == "running":
        return "a turn is running (status running)"
    if row.has_active_run:
        return "a run is active (hasActiveRun)"
    moments = [value for value in (row.updated_at, row.last_interaction_at) if value is not None]
    if not moments:
        return None
    age_seconds = (now_ms - max(moments)) / 1000
    if age_seconds < policy.quiet_seconds:
        shown = max(age_seconds, 0)
        return f"updated {shown:.0f} s ago (< {policy.quiet_seconds} s): may be mid-turn"
    return None


def _capped(decision: Decision, policy: Policy) -> Decision:
    reason = f"{decision.reason}; per-run cap of {policy.max_per_run} reached: next run"
    return replace(decision, action="skip", check="cap", reason=reason)


def _limit_text(limit: int, row: SessionRow, policy: Policy) -> str:
    if row.context_tokens and limit < policy.threshold_tokens:
        return f"{limit:,} ({policy.context_ratio:.0%} of the {row.context_tokens:,} window)"
    return f"{limit:,}"
