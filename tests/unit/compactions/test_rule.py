"""The compaction watch's pure parts: spans, items, the survival rule, the grading."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memwarden.checkpoint.digest.extract import Excerpt
from memwarden.compactions.assessment import (
    Haystack,
    Item,
    assess,
    compacted_spans,
    grade,
    key_words,
    span_items,
    survives,
)
from memwarden.openclaw.entries import parse_entry

MOMENT = "2026-11-22T05:00:00.000Z"
GENERIC = (  # the shape of the gateway's summary when the model answers generically
    "## Decisions\nNo prior history.\n\n## Open TODOs\nNone.\n\n## Constraints/Rules\nNone.\n\n"
    "## Exact identifiers\nNone captured.\n\nHello from the fake LLM."
)


def message(entry_id: str, role: str, text: str) -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "timestamp": MOMENT,
        "message": {"role": role, "content": [{"type": "text", "text": text}]},
    }


def compaction(entry_id: str, first_kept: str | None, summary: str = "summary") -> dict:
    return {
        "type": "compaction",
        "id": entry_id,
        "timestamp": "2026-11-22T05:10:00.000Z",
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": 12000,
        "tokensAfter": 300,
    }


def entries(*lines: dict) -> list:
    return [parse_entry(line) for line in lines]


def ids(found) -> list[str]:
    return [entry.id for entry in found]


def excerpt(text: str, role: str = "user") -> Excerpt:
    return Excerpt(role, text, None)


# spans ------------------------------------------------------------------------------------


def test_span_runs_from_the_start_to_the_first_kept_entry():
    (span,) = compacted_spans(
        entries(
            message("u1", "user", "one"),
            message("a1", "assistant", "two"),
            message("u2", "user", "three"),
            compaction("c1", "u2"),
            message("a2", "assistant", "after"),
        )
    )
    assert span.compaction.id == "c1"
    assert ids(span.span) == ["u1", "a1"]
    assert ids(span.kept) == ["u2"]


def test_second_span_starts_at_the_previous_first_kept_entry():
    first, second = compacted_spans(
        entries(
            message("u1", "user", "one"),
            message("u2", "user", "two"),
            compaction("c1", "u2"),
            message("u3", "user", "three"),
            message("u4", "user", "four"),
            compaction("c2", "u4"),
        )
    )
    assert ids(first.span) == ["u1"]
    assert ids(second.span) == ["u2", "u3"]  # the entries c1 kept, then the ones after it
    assert ids(second.kept) == ["u4"]


def test_span_starts_after_an_in_place_reset():
    (span,) = compacted_spans(
        entries(
            message("u1", "user", "before the reset"),
            {"type": "reset", "id": "r1", "timestamp": MOMENT, "reason": "reset"},
            message("u2", "user", "after"),
            message("u3", "user", "kept"),
            compaction("c1", "u3"),
        )
    )
    assert ids(span.span) == ["u2"]


@pytest.mark.parametrize("first_kept", [None, "missing", "u0"])
def test_span_without_a_first_kept_entry_found_is_the_whole_window(first_kept):
    (span,) = compacted_spans(
        entries(
            {"type": "reset", "id": "u0", "timestamp": MOMENT},
            message("u1", "user", "one"),
            message("u2", "user", "two"),
            compaction("c1", first_kept),
        )
    )
    assert ids(span.span) == ["u1", "u2"]
    assert span.kept == []


def test_no_compaction_no_span():
    assert compacted_spans(entries(message("u1", "user", "one"))) == []


# items ------------------------------------------------------------------------------------


def test_items_are_marked_lines_open_todos_and_paths_each_once():
    items = span_items(
        [
            excerpt(
                "We agreed.\n- [DECISION] store the ledger in PostgreSQL 16\n"
                "- [ ] write the runbook"
            ),
            excerpt("[TODO] rotate the webhook secret; see src/billing/cron.py", "assistant"),
            excerpt("```\n[FACT] inside code is an example\n```\nTODO: call Sam back"),
            excerpt("- [DECISION] store the ledger in PostgreSQL 16"),
            excerpt("- [x] write the runbook"),
        ]
    )
    assert [(item.kind, item.text) for item in items] == [
        ("marker", "[DECISION] store the ledger in PostgreSQL 16"),
        ("marker", "[TODO] rotate the webhook secret; see src/billing/cron.py"),
        ("todo", "call Sam back"),
        ("path", "src/billing/cron.py"),
    ]
    assert items[0].marker == "DECISION"


def test_item_labels():
    assert Item("todo", "call Sam").label() == "TODO: call Sam"
    assert Item("path", "src/a.py").label() == "file: src/a.py"
    assert Item("marker", "[FACT] x", "FACT").label() == "[FACT] x"


# the survival rule ------------------------------------------------------------------------


def test_key_words_leave_out_common_words_markers_and_short_words():
    assert key_words("[DECISION] We use the v2 API for it, and the API is GA") == [
        "v2",
        "api",
    ]


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Decided: ledger goes to PostgreSQL 16.", True),  # every key word
        ("The ledger stays in PostgreSQL.", True),  # 2 of 3 key words (two thirds)
        ("We talked about the ledger.", False),  # 1 of 3
        (GENERIC, False),
        ("", False),
    ],
)
def test_marked_item_survives_with_two_thirds_of_its_key_words(summary, expected):
    item = Item("marker", "[DECISION] store the ledger in PostgreSQL", "DECISION")
    # key words: store, ledger, postgresql
    assert survives(item, Haystack.of([summary])) is expected


def test_item_without_key_words_counts_as_surviving():
    assert survives(Item("marker", "[TODO] do it", "TODO"), Haystack.of([""]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("edited src/billing/cron.py", True),
        ("the cron.py file", True),  # its file name
        ("the billing cron", False),
        ("see webcron.py", False),  # another file that ends with its name
        ("src/billing/cron.pyc", False),
        ("(cron.py)", True),
    ],
)
def test_path_survives_by_its_path_or_file_name(text, expected):
    assert survives(Item("path", "src/billing/cron.py"), Haystack.of([text])) is expected


def test_assess_looks_for_items_in_the_summary_and_the_kept_texts():
    (span,) = compacted_spans(
        entries(
            message("u1", "user", "[DECISION] store the ledger in PostgreSQL"),
            message("u2", "user", "TODO: rotate the webhook secret"),
            message("u3", "user", "[GOTCHA] the cron runs twice at midnight"),
            message("u4", "user", "then: rotate that webhook secret now"),
            compaction("c1", "u4", summary="Decided: ledger goes to PostgreSQL 16."),
        )
    )
    assessment = assess(span, lambda text: text, "c1")
    assert [item.text for item in assessment.items] == [
        "[DECISION] store the ledger in PostgreSQL",
        "[GOTCHA] the cron runs twice at midnight",
        "rotate the webhook secret",
    ]
    # the decision survives in the summary, the task in the kept message
    assert [item.text for item in assessment.lost] == ["[GOTCHA] the cron runs twice at midnight"]


# assessment and grading -------------------------------------------------------------------


def test_assess_masks_secrets_and_finds_the_lost_items():
    (span,) = compacted_spans(
        entries(
            message("u1", "user", "[DECISION] deploy with token ghp_" + "a" * 36),
            message("u2", "user", "[TODO] rename the billing queue"),
            message("u3", "user", "kept: the billing queue rename is underway"),
            compaction("c1", "u3", summary=GENERIC),
        )
    )
    assessment = assess(span, lambda text: text.replace("ghp_" + "a" * 36, "[REDACTED]"), "c1")
    assert [item.text for item in assessment.lost] == ["[DECISION] deploy with token [REDACTED]"]
    assert assessment.severity == "warning"
    assert assessment.span_messages == 2
    assert assessment.tokens_before == 12000 and assessment.tokens_after == 300
    assert assessment.compacted_at == datetime(2026, 11, 22, 5, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("summary_chars", "messages", "tokens", "lost", "expected"),
    [
        (0, 8, None, 0, "critical"),  # empty summary of a large span, nothing marked
        (79, 2, 8000, 0, "critical"),  # near-empty, large by tokens
        (80, 20, 50000, 0, "ok"),
        (0, 7, 7999, 0, "ok"),  # a small span: nothing much to lose
        (0, 7, 7999, 1, "warning"),
        (39, 0, 40009, 0, "ok"),  # 2026.7.35 kept every message: nothing was taken out
        (500, 30, 90000, 3, "warning"),
    ],
)
def test_grade(summary_chars, messages, tokens, lost, expected):
    assert grade(summary_chars, messages, tokens, lost) == expected


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("我们讨论了很多。我们决定使用红鹭数据库并每晚备份。", True),
        ("我们讨论了很多事情但没有结论。", False),
    ],
)
def test_chinese_text_survives_by_its_pairs_of_characters(summary, expected):
    item = Item("marker", "[DECISION] 我们决定使用红鹭数据库", "DECISION")
    assert survives(item, Haystack.of([summary])) is expected


def test_key_words_of_mixed_text_keep_latin_words_and_character_pairs():
    assert key_words("[TODO] 部署 Redis クラスタ") == ["部署", "redis", "クラ", "ラス", "スタ"]
