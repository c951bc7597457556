"""The Prometheus textfile: valid exposition format, escaped labels, the gateway on every sample,
and a family that fails left out without stopping the others."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memwarden.health.checks import HealthInputs
from memwarden.health.checks.context import KEY as CONTEXT_KEY
from memwarden.health.checks.memory_files import KEY as MEMORY_KEY
from memwarden.health.metrics.exposition import (
    escape_label,
    format_labels,
    format_value,
    render_metrics,
)
from memwarden.health.metrics.families import FAMILIES, Family, MetricSources
from memwarden.health.model import critical, ok, warning

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SAMPLE = re.compile(r'^[a-z_]+\{([a-z_]+="([^"\\]|\\.)*",?)+\} -?[0-9.e+]+$')
PURE = {  # the families that read this run's results alone
    "memwarden_health_check_status",
    "memwarden_alerts_open",
    "memwarden_health_last_run_timestamp_seconds",
    "memwarden_session_context_tokens",
    "memwarden_session_context_ratio",
    "memwarden_memory_bytes",
    "memwarden_memory_largest_file_bytes",
}


def sources(results) -> MetricSources:
    inputs = HealthInputs(config=None, deployment_loader=None, state=None, now=NOW)
    return MetricSources(inputs, results, "box:18789")


def test_render_metrics_one_sample_per_check_session_and_agent_each_with_the_gateway():
    ratios = [
        {"agent": "main", "session": "agent:main:main", "ratio": 0.5, "tokens": 100_000},
        {"agent": "main", "session": 'agent:main:telegram:direct:"x"', "ratio": 0.95},
    ]
    pools = [{"agent": "main", "files": 3, "bytes": 70_000, "largest": 60_000}]
    results = [
        ok("gateway.live", "live"),
        warning("disk:/", "88%"),
        critical("jobs.stale:checkpoint", "late"),
        ok(CONTEXT_KEY, "fine", ratios=ratios),
        warning(MEMORY_KEY, "big", agents=pools),
    ]
    families = [family for family in FAMILIES if family.name in PURE]
    text, problems = render_metrics(families, sources(results))
    assert problems == []
    lines = text.splitlines()
    samples = [line for line in lines if not line.startswith("#")]
    assert all(SAMPLE.match(line) for line in samples), samples
    gateway = 'gateway="box:18789"'
    assert f'memwarden_health_check_status{{{gateway},check="gateway.live"}} 0' in lines
    assert f'memwarden_health_check_status{{{gateway},check="disk:/"}} 1' in lines
    assert f'memwarden_health_check_status{{{gateway},check="jobs.stale:checkpoint"}} 2' in lines
    quoted = 'session="agent:main:telegram:direct:\\"x\\""'
    assert f'memwarden_session_context_ratio{{{gateway},agent="main",{quoted}}} 0.95' in lines
    main = f'{gateway},agent="main",session="agent:main:main"'
    assert f"memwarden_session_context_tokens{{{main}}} 100000" in lines
    assert sum("memwarden_session_context_tokens{" in line for line in lines) == 1, "unknown"
    assert f'memwarden_alerts_open{{{gateway},severity="warning"}} 2' in lines
    assert f'memwarden_alerts_open{{{gateway},severity="critical"}} 1' in lines
    assert f'memwarden_memory_bytes{{{gateway},agent="main"}} 70000' in lines
    assert f"memwarden_health_last_run_timestamp_seconds{{{gateway}}} {NOW.timestamp()!r}" in lines
    families_written = [line.split()[2] for line in lines if line.startswith("# TYPE")]
    assert families_written == [family.name for family in families]
    assert text.endswith("\n")


def test_render_metrics_failing_family_is_left_out_and_named():
    def broken(_sources):
        raise ValueError("no such table")

    families = [
        Family("memwarden_broken", "Broken.", broken),
        next(family for family in FAMILIES if family.name == "memwarden_alerts_open"),
    ]
    text, problems = render_metrics(families, sources([ok("gateway.live", "live")]))
    assert problems == ["metrics: memwarden_broken left out: ValueError: no such table"]
    assert "memwarden_broken" not in text
    assert 'memwarden_alerts_open{gateway="box:18789",severity="critical"} 0' in text


def test_family_names_follow_prometheus_conventions():
    names = [family.name for family in FAMILIES]
    assert len(names) == len(set(names))
    for family in FAMILIES:
        assert re.fullmatch(r"memwarden_[a-z0-9_]+", family.name)
        assert family.kind in ("gauge", "counter")
        assert family.name.endswith("_total") == (family.kind == "counter"), family.name
        assert family.help.endswith(".") and "\n" not in family.help


def test_escape_label_backslash_quote_newline():
    assert escape_label('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
    assert format_labels({}) == ""
    assert format_labels({"a": 'x"y'}) == '{a="x\\"y"}'


def test_format_value_integers_plain_floats_rounded():
    assert format_value(3) == "3"
    assert format_value(True) == "1"
    assert format_value(0.123456789) == "0.123457"
    assert format_value(1795000000.5) == "1795000000.5"
