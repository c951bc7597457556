"""Handoff deliveries: the bootstrap hook's receipts as memwarden reads them, and the verdict on
the first bootstrap after a conversation's reset or compaction."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from memwarden.health.checks.deliveries import Break, judge
from memwarden.health.deliveries import Delivery, Receipt, read_receipt, read_receipts, receipt_name

RESET_AT = datetime(2026, 11, 28, 10, 0, tzinfo=UTC).timestamp()
KEY = "agent:main:telegram:direct:42"


def delivery(minutes: float, handoff: str = "whole") -> Delivery:
    return Delivery(RESET_AT + 60 * minutes, "s-1", handoff, 1234)


def receipt(*deliveries: Delivery) -> Receipt:
    return Receipt(KEY, "main", deliveries)


def reset(request_after: float | None = 2.0, kind: str = "reset") -> Break:
    request_at = RESET_AT + 60 * request_after if request_after is not None else None
    return Break("main", KEY, kind, RESET_AT, request_at)


def test_receipt_name_is_the_hooks_sha256_of_the_lower_cased_key():
    expected = hashlib.sha256(KEY.encode()).hexdigest()[:32] + ".json"
    assert receipt_name(KEY.upper()) == expected


def test_first_bootstrap_after_the_break_with_the_handoff_whole_is_ok():
    problem, handoff = judge(
        reset(), receipt(delivery(-30, "none"), delivery(2), delivery(5, "cut"))
    )

    assert (problem, handoff) == (None, "whole")


@pytest.mark.parametrize(
    ("handoff", "says"),
    [
        ("cut", "cut by the gateway's bootstrap caps"),
        ("left out", "bootstrap total cap was already spent"),
        ("none", "the bootstrap manifest names no handoff for it"),
    ],
)
def test_first_bootstrap_after_the_break_without_the_whole_handoff_says_why(handoff, says):
    problem, carried = judge(reset(kind="compaction"), receipt(delivery(2, handoff), delivery(3)))

    assert carried == handoff
    assert "after the compaction at 2026-11-28 10:00 UTC" in problem
    assert says in problem


@pytest.mark.parametrize("found", [None, receipt(delivery(-10))])
def test_no_receipt_since_the_break_says_the_hook_did_not_run(found):
    problem, handoff = judge(reset(), found)

    assert handoff == "no receipt"
    assert problem.startswith("no bootstrap since the reset at 2026-11-28 10:00 UTC")
    assert "though a request came at 2026-11-28 10:02 UTC" in problem


def write(folder: Path, name: str, data: object) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(orjson.dumps(data))


def test_read_receipt_takes_what_the_hook_writes_and_skips_what_it_cannot_read(tmp_path: Path):
    good = {
        "version": 1,
        "sessionKey": KEY,
        "agentId": "main",
        "workspace": "/w",
        "deliveries": [
            {"at": "2026-11-28T10:02:00.000Z", "sessionId": "s-1", "handoff": "whole",
             "files": [{"path": "memory/x.md", "handoff": True, "chars": 1234, "cut": False}]},
            {"at": "not a time", "handoff": "whole", "files": []},
            "junk",
        ],
    }  # fmt: skip
    write(tmp_path, receipt_name(KEY), good)
    write(tmp_path, "0" * 32 + ".json", {"version": 2, "sessionKey": "agent:x:main"})
    (tmp_path / ("1" * 32 + ".json")).write_text("{not json")

    found = read_receipt(tmp_path, KEY)

    assert found == Receipt(KEY, "main", (delivery(2),))
    assert list(read_receipts(tmp_path)) == [found]
    assert read_receipt(tmp_path, "agent:main:main") is None
    assert list(read_receipts(tmp_path / "missing")) == []
