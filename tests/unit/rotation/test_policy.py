"""The rotation policy: which listed sessions are reset, and the reason given for each."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memwarden.openclaw.entries import parse_entry
from memwarden.openclaw.gateway import SessionRow, parse_session_row
from memwarden.rotation.policy import (
    Policy,
    TranscriptContext,
    decide,
    needs_confirmation,
    transcript_context,
)
from memwarden.settings.config import defaults

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
HOUR_AGO_MS = int((NOW - timedelta(hours=1)).timestamp() * 1000)


def row(key: str = "agent:main:main", **fields) -> SessionRow:
    values = {
        "key": key,
        "sessionId": f"id-{key}",
        "updatedAt": HOUR_AGO_MS,
        "status": "done",
        "totalTokens": 10_000,
        "totalTokensFresh": True,
        "contextTokens": 400_000,
    }
    values.update(fields)
    parsed = parse_session_row(values)
    assert parsed is not None
    return parsed


def only(decisions):
    assert len(decisions) == 1
    return decisions[0]


def test_decide_over_absolute_threshold_rotates_with_reason():
    decision = only(decide([row(totalTokens=160_000)], Policy(), NOW))

    assert (decision.action, decision.check, decision.wanted) == ("rotate", "rotate", True)
    assert decision.reason == "160,000 tokens (the gateway's count, fresh) ≥ limit 150,000"
    assert (decision.tokens, decision.token_source, decision.limit) == (160_000, "gateway", 150_000)


def test_decide_ratio_of_small_window_comes_first_rotates_at_ratio():
    decision = only(decide([row(totalTokens=100_000, contextTokens=128_000)], Policy(), NOW))

    assert decision.action == "rotate"
    assert decision.limit == 96_000
    assert "96,000 (75% of the 128,000 window)" in decision.reason


def test_decide_below_both_limits_skips_below_threshold():
    decision = only(decide([row(totalTokens=95_999, contextTokens=128_000)], Policy(), NOW))

    assert (decision.action, decision.check, decision.wanted) == ("skip", "below_threshold", False)
    assert decision.reason == (
        "95,999 tokens (the gateway's count, fresh) < limit 96,000 (75% of the 128,000 window)"
    )


def test_decide_unknown_window_uses_absolute_threshold_only():
    decision = only(decide([row(totalTokens=149_999, contextTokens=None)], Policy(), NOW))

    assert (decision.check, decision.limit) == ("below_threshold", 150_000)


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("agent:main:cron:nightly", "cron"),
        ("agent:main:cron:nightly:run:42", "cron_run"),
        ("agent:main:subagent:6f1c", "subagent"),
        ("agent:main:telegram:direct:5:heartbeat", "heartbeat"),
        ("cron:legacy-job", "cron"),
        ("hook:9a1b", "hook"),
    ],
)
def test_decide_automation_over_threshold_is_never_rotated(key, kind):
    decision = only(decide([row(key, totalTokens=900_000)], Policy(), NOW))

    assert (decision.action, decision.check, decision.wanted) == ("skip", "automation", False)
    assert decision.reason == f"automation session ({kind}): never rotated"


def test_decide_key_matching_extra_pattern_skips_as_automation():
    policy = Policy(automation_patterns=("agent:*:reports",))

    decision = only(decide([row("agent:ops:Reports", totalTokens=900_000)], policy, NOW))

    assert decision.check == "automation"
    assert "rotate.automation_patterns" in decision.reason


def test_decide_unrecognised_key_is_not_rotated_unattended():
    decision = only(decide([row("agent:", totalTokens=900_000)], Policy(), NOW))

    assert decision.check == "unknown_key"


def test_decide_row_without_session_id_skips():
    decision = only(decide([row(sessionId=None, totalTokens=900_000)], Policy(), NOW))

    assert decision.check == "no_session"


def test_decide_stale_count_without_transcript_skips_with_reason():
    stale = row(totalTokens=900_000, totalTokensFresh=False)

    decision = only(decide([stale], Policy(), NOW))

    assert (decision.action, decision.check) == ("skip", "stale_count")
    assert (
        decision.reason
        == "token count is stale (900,000, not fresh) and the transcript was not read"
    )


def test_decide_stale_count_confirmed_over_limit_rotates_from_transcript():
    stale = row(totalTokens=1_234, totalTokensFresh=False)

    decision = only(
        decide([stale], Policy(), NOW, {stale.key: TranscriptContext(170_000, "prompt")})
    )

    assert (decision.action, decision.tokens, decision.token_source) == (
        "rotate",
        170_000,
        "transcript",
    )
    assert decision.reason.startswith(
        "170,000 tokens (the last model call's prompt in the transcript; the gateway's count "
        "is stale) ≥ limit"
    )


def test_decide_stale_count_after_a_compaction_says_it_is_what_the_compaction_left():
    stale = row(totalTokens=900_000, totalTokensFresh=False)

    decision = only(
        decide([stale], Policy(), NOW, {stale.key: TranscriptContext(80, "compaction")})
    )

    assert decision.reason.startswith(
        "80 tokens (what the last compaction left, in the transcript; the gateway's count is "
        "stale) < limit"
    )


def test_decide_stale_count_confirmed_low_skips_below_threshold():
    stale = row(totalTokens=900_000, totalTokensFresh=False)

    decision = only(decide([stale], Policy(), NOW, {stale.key: TranscriptContext(2_000, "prompt")}))

    assert (decision.check, decision.tokens) == ("below_threshold", 2_000)


def test_decide_unknown_count_transcript_silent_skips_stale_count():
    unknown = row(totalTokens=None, totalTokensFresh=None)

    decision = only(decide([unknown], Policy(), NOW, {unknown.key: None}))

    assert decision.check == "stale_count"
    assert (
        decision.reason
        == "token count is unknown and the transcript does not show the context size"
    )


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"status": "running"}, "a turn is running (status running)"),
        ({"hasActiveRun": True}, "a run is active (hasActiveRun)"),
        ({"hasActiveSubagentRun": True}, "a run is active (hasActiveRun)"),
        (
            {"updatedAt": int((NOW - timedelta(seconds=30)).timestamp() * 1000)},
            "updated 30 s ago (< 120 s): may be mid-turn",
        ),
        (
            {"lastInteractionAt": int((NOW - timedelta(seconds=5)).timestamp() * 1000)},
            "updated 5 s ago (< 120 s): may be mid-turn",
        ),
    ],
)
def test_decide_mid_turn_over_threshold_is_postponed(fields, reason):
    decision = only(decide([row(totalTokens=160_000, **fields)], Policy(), NOW))

    assert (decision.action, decision.check, decision.wanted) == ("skip", "mid_turn", True)
    assert decision.reason == reason


def test_decide_quiet_seconds_zero_ignores_recent_update():
    recent = row(totalTokens=160_000, updatedAt=int(NOW.timestamp() * 1000))

    assert only(decide([recent], Policy(quiet_seconds=0), NOW)).action == "rotate"


def test_decide_more_wanted_than_cap_rotates_fullest_first_and_postpones_rest():
    rows = [row(f"agent:main:s{index}", totalTokens=150_000 + index * 1_000) for index in range(7)]

    decisions = decide(rows, Policy(max_per_run=5), NOW)

    rotated = [decision.key for decision in decisions if decision.action == "rotate"]
    capped = [decision for decision in decisions if decision.check == "cap"]
    assert rotated == [f"agent:main:s{index}" for index in (6, 5, 4, 3, 2)]
    assert [decision.key for decision in capped] == ["agent:main:s1", "agent:main:s0"]
    assert all(decision.wanted and decision.action == "skip" for decision in capped)
    assert capped[0].reason.endswith("per-run cap of 5 reached: next run")


def test_decide_fullness_is_relative_to_each_sessions_limit():
    small_window = row("agent:main:small", totalTokens=110_000, contextTokens=128_000)
    big = row("agent:main:big", totalTokens=160_000)

    decisions = decide([big, small_window], Policy(max_per_run=1), NOW)

    assert [decisions[0].key, decisions[0].action] == ["agent:main:small", "rotate"]
    assert decisions[1].check == "cap"


def test_decide_every_row_gets_exactly_one_decision():
    rows = [
        row("agent:main:main", totalTokens=160_000),
        row("agent:main:cron:x", totalTokens=160_000),
        row("agent:main:telegram:direct:1", totalTokens=10),
    ]

    decisions = decide(rows, Policy(), NOW)

    assert sorted(decision.key for decision in decisions) == sorted(r.key for r in rows)
    assert all(decision.reason for decision in decisions)


def test_needs_confirmation_lists_only_eligible_stale_or_unknown_rows():
    rows = [
        row("agent:main:main", totalTokens=5, totalTokensFresh=False),
        row("agent:main:imported", totalTokens=None),
        row("agent:main:cron:x", totalTokens=5, totalTokensFresh=False),
        row("agent:main:fresh", totalTokens=5),
    ]

    keys = [found.key for found in needs_confirmation(rows, Policy())]

    assert keys == ["agent:main:main", "agent:main:imported"]


def test_policy_from_config_command_line_overrides_win():
    policy = Policy.from_config(defaults(), threshold_tokens=90_000, max_per_run=2)

    assert (policy.threshold_tokens, policy.context_ratio, policy.max_per_run) == (90_000, 0.75, 2)
    assert policy.quiet_seconds == 120


def _entries(*lines):
    return [parse_entry(line) for line in lines]


ASSISTANT = {
    "type": "message",
    "id": "a1",
    "message": {
        "role": "assistant",
        "content": "hi",
        "usage": {"input": 170_000, "cacheRead": 500},
    },
}


USER = {"type": "message", "id": "u1", "message": {"role": "user", "content": "x"}}
# A reply the gateway aborted carries a usage of zeros (OpenClaw's createYieldAbortedResponse).
ABORTED = {
    "type": "message",
    "id": "a2",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": ""}],
        "stopReason": "aborted",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
    },
}
HEADER = {"type": "session", "version": 3, "id": "s2", "timestamp": "2026-11-20T10:00:00.000Z"}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ((USER, ASSISTANT), (170_500, "prompt")),  # the last call's prompt: input + cache
        (
            (ASSISTANT, {"type": "compaction", "id": "c1", "summary": "s", "tokensAfter": 9_000}),
            (9_000, "compaction"),
        ),
        ((ASSISTANT, {"type": "reset", "id": "r", "reason": "new"}), (0, "reset")),
        ((USER,), None),  # no usage: unknown
        ((USER, ASSISTANT, USER, ABORTED), (170_500, "prompt")),  # the gateway's zeros: no measure
        ((USER, ASSISTANT, HEADER, USER), (0, "reset")),  # a file-era reset: a new session's header
        ((HEADER, USER), None),  # the transcript's own first line
    ],
    ids=[
        "prompt",
        "compaction after it",
        "reset after it",
        "no usage",
        "aborted reply after it",
        "header after messages",
        "header first",
    ],
)
def test_transcript_context_is_the_last_measure_in_the_transcript(lines, expected):
    assert transcript_context(_entries(*lines)) == expected
