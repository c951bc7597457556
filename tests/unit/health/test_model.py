"""What a check reports, as --json shows it."""

from __future__ import annotations

import orjson

from memwarden.health.model import CheckResult, Status


def test_check_result_to_json_shows_every_field_but_masks_in_a_fixed_order():
    result = CheckResult(
        "gateway.live", Status.CRITICAL, "down", 3, 2, {"port": 18789}, masks=("gateway.ready",)
    )

    assert orjson.dumps(result.to_json()) == (
        b'{"key":"gateway.live","status":"critical","message":"down","value":3,"threshold":2,'
        b'"details":{"port":18789}}'
    )
