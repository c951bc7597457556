"""Which context size to trust: the gateway's count unless stale or missing, 0 included."""

from __future__ import annotations

import pytest

from memwarden.openclaw.context_count import gateway_count, gateway_gap, gateway_source


@pytest.mark.parametrize(
    ("total", "fresh", "expected"),
    [
        (0, True, 0),  # right after a reset: a count, not a missing one
        (0, None, 0),
        (12_345, True, 12_345),
        (12_345, None, 12_345),
        (12_345, False, None),  # stale
        (None, True, None),
        (None, None, None),
    ],
)
def test_gateway_count_is_used_unless_stale_or_missing(total, fresh, expected):
    assert gateway_count(total, fresh) == expected


def test_gateway_count_names_say_fresh_stale_or_missing():
    assert gateway_source(True) == "the gateway's count, fresh"
    assert gateway_source(None) == "the gateway's count"
    assert (gateway_gap(False), gateway_gap(None)) == ("stale", "missing")
