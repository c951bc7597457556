"""The Prometheus textfile: valid exposition format, escaped labels, every family present."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memwarden.health.checks.context import KEY as CONTEXT_KEY
from memwarden.health.metrics import escape_label, render_metrics
from memwarden.health.model import critical, ok, warning

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SAMPLE = re.compile(r'^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)+\})? -?[0-9.e+]+$')


def test_render_metrics_one_sample_per_check_session_and_job():
    ratios = [
        {"agent": "main", "session": "agent:main:main", "ratio": 0.5},
        {"agent": "main", "session": 'agent:main:telegram:direct:"x"', "ratio": 0.95},
    ]
    results = [
        ok("gateway.live", "live"),
        warning("disk:/", "88%"),
        critical("jobs.stale:checkpoint", "late"),
        ok(CONTEXT_KEY, "fine", ratios=ratios),
    ]
    text = render_metrics(results, {"checkpoint": 1795000000.5, "index": None}, 2, 1, NOW)
    lines = text.splitlines()
    samples = [line for line in lines if not line.startswith("#")]
    assert all(SAMPLE.match(line) for line in samples), samples
    assert 'memwarden_health_check_status{check="gateway.live"} 0' in lines
    assert 'memwarden_health_check_status{check="disk:/"} 1' in lines
    assert 'memwarden_health_check_status{check="jobs.stale:checkpoint"} 2' in lines
    quoted = 'session="agent:main:telegram:direct:\\"x\\""'
    assert f'memwarden_session_context_ratio{{agent="main",{quoted}}} 0.95' in lines
    assert 'memwarden_job_last_success_timestamp_seconds{job="checkpoint"} 1795000000.5' in lines
    assert not any('job="index"' in line for line in lines), "never succeeded: no sample"
    assert "memwarden_alerts_open 2" in lines
    assert "memwarden_alerts_undelivered 1" in lines
    assert f"memwarden_health_last_run_timestamp_seconds {NOW.timestamp()!r}" in lines
    families = {line.split()[2] for line in lines if line.startswith("# TYPE")}
    assert len(families) == 6
    assert text.endswith("\n")


def test_escape_label_backslash_quote_newline():
    assert escape_label('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
