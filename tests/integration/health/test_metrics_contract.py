"""The metrics textfile read by prometheus_client's own parser (the Python client of the
Prometheus project): every family, sample and label value comes back as memwarden meant it,
hostile label values included."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memwarden.health.checks import HealthInputs
from memwarden.health.metrics.exposition import render_metrics
from memwarden.health.metrics.families import FAMILIES, MetricSources
from memwarden.health.model import critical, ok, warning
from memwarden.settings import config as config_module
from memwarden.store.state import MEMORY, StateDB
from support.textfile import build_textfile

HOSTILE = [
    'disk:/mnt/a "quoted" b',
    "disk:/mnt/back\\slash",
    "disk:/mnt/new\nline",
    "disk:/mnt/ünïcode ✓",
    "disk:/mnt/{braces},=commas",
]


@pytest.fixture(scope="module")
def textfile(tmp_path_factory):
    return build_textfile(tmp_path_factory.mktemp("textfile"))


def test_the_real_textfile_parses_with_prometheus_client(textfile):
    families = {family.name: family for family in text_string_to_metric_families(textfile.text)}
    written = {family.name for family in FAMILIES}
    # prometheus_client names a counter family without its `_total` suffix
    parsed = {name if name in written else f"{name}_total" for name in families}
    assert parsed == written
    for family in families.values():
        for sample in family.samples:
            assert sample.labels.get("gateway"), sample
            assert sample.value == sample.value  # not NaN


def test_hostile_label_values_come_back_exactly():
    results = [critical(HOSTILE[0], "x"), warning(HOSTILE[1], "y")] + [
        ok(key, "fine") for key in HOSTILE[2:]
    ]
    inputs = HealthInputs(
        now=datetime(2026, 11, 22, 12, tzinfo=UTC),
        config=config_module.load(None),
        state=StateDB(Path(MEMORY)),
        deployment_loader=lambda: (_ for _ in ()).throw(RuntimeError("no gateway here")),
    )
    sources = MetricSources(inputs, results, gateway='gw "one"\\two')
    text, _problems = render_metrics(FAMILIES, sources)

    families = {family.name: family for family in text_string_to_metric_families(text)}
    checks = {
        sample.labels["check"]: sample.value
        for sample in families["memwarden_health_check_status"].samples
    }
    assert checks == {HOSTILE[0]: 2, HOSTILE[1]: 1, **dict.fromkeys(HOSTILE[2:], 0)}
    for family in families.values():
        for sample in family.samples:
            assert sample.labels["gateway"] == 'gw "one"\\two'
