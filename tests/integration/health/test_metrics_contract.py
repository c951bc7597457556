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
from memwarden.openclaw.layout import discover
from memwarden.settings import config as config_module
from memwarden.store.state import MEMORY, StateDB
from support.deployments import make_sqlite_era_state
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


def test_compaction_counters_are_zero_for_every_agent_before_its_first_compaction(tmp_path):
    # A counter that first appears above 0 has no increase() for Prometheus: an agent's first
    # lossy compaction would raise no MemwardenCompactionLostItems.
    state = make_sqlite_era_state(tmp_path)
    inputs = HealthInputs(
        now=datetime(2026, 11, 22, 12, tzinfo=UTC),
        config=config_module.load(None, env={"HOME": str(tmp_path)}),
        state=StateDB(tmp_path / "memwarden" / "state.db"),
        deployment_loader=lambda: discover(state.state_dir, env={}),
    )
    agents = {agent.id for agent in inputs.deployment.agents}
    text, problems = render_metrics(FAMILIES, MetricSources(inputs, [], gateway="gw1"))

    assert problems == []
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for name in ("memwarden_compactions", "memwarden_compactions_lossy"):
        samples = families[name].samples
        assert {s.labels["agent"]: s.value for s in samples} == dict.fromkeys(agents, 0), name
    lost = families["memwarden_compaction_lost_items"].samples
    assert {s.labels["agent"]: s.value for s in lost} == dict.fromkeys(agents, 0)
    assert agents
