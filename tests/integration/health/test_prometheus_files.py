"""What Prometheus and Grafana read, checked with the real tools against the real textfile.

The textfile comes from real runs of the jobs (support.textfile): `promtool check metrics` must
pass it, and every metric family must have samples in it. The shipped rules pass `promtool check
rules` and their unit tests (one or more per alert). Every metric a rule or a dashboard queries
is one memwarden writes, and every dashboard query, run by promtool over that textfile's series,
returns data.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from memwarden.health.metrics.families import FAMILIES
from support.prometheus import run_tool, tool
from support.textfile import GATEWAY, Textfile, build_textfile

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "prometheus" / "memwarden.rules.yml"
RULE_TESTS = REPO / "prometheus" / "tests" / "memwarden.rules.test.yml"
DASHBOARDS = sorted((REPO / "grafana").glob("*.json"))
METRIC = re.compile(r"\bmemwarden_[a-z0-9_]+\b")
LABELS = {"memwarden_job"}  # label names that look like metric names


@pytest.fixture(scope="module")
def textfile(tmp_path_factory) -> Textfile:
    return build_textfile(tmp_path_factory.mktemp("textfile"))


def dashboard_queries(board: dict) -> list[str]:
    """Every PromQL query of a dashboard: panel targets and query variables."""
    queries = [
        target["expr"]
        for panel in board["panels"]
        for target in panel.get("targets", [])
        if "expr" in target
    ]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def concrete(query: str) -> str:
    """A dashboard query with Grafana's variables replaced by values of the textfile."""
    return query.replace("$gateway", GATEWAY).replace("$__rate_interval", "5m")


def test_textfile_of_real_runs_has_every_family(textfile):
    assert textfile.runs == dict.fromkeys(textfile.runs, 0), textfile.runs
    missing = [family.name for family in FAMILIES if family.name not in textfile.metric_names]
    assert missing == []


def test_textfile_passes_promtool_check_metrics(textfile):
    checked = subprocess.run(
        [tool("promtool"), "check", "metrics"],
        input=textfile.text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout + checked.stderr == ""


def test_rules_pass_promtool_check_rules():
    checked = run_tool("promtool", "check", "rules", RULES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 10 rules found" in checked.stdout


def test_rules_unit_tests_pass():
    tested = run_tool("promtool", "test", "rules", RULE_TESTS)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_every_rule_has_unit_tests_that_expect_it_to_fire():
    rules = set(re.findall(r"^\s*- alert: (\w+)", RULES.read_text(), re.MULTILINE))
    tests = RULE_TESTS.read_text()
    firing = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels:", tests))
    assert rules == firing
    assert len(rules) == 10


def test_rules_query_only_metrics_memwarden_writes(textfile):
    queried = set(METRIC.findall(RULES.read_text())) - LABELS
    assert queried, "the rules query memwarden's metrics"
    assert queried - textfile.metric_names == set()


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_dashboard_is_importable_json(path):
    board = json.loads(path.read_text())
    assert board["uid"] in ("memwarden-gateway", "memwarden-fleet")
    assert board["title"].startswith("memwarden: ")
    assert isinstance(board["schemaVersion"], int)
    variables = {variable["name"]: variable for variable in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        assert all(target["datasource"] == panel["datasource"] for target in panel["targets"])


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_dashboard_queries_only_metrics_memwarden_writes(path, textfile):
    for query in dashboard_queries(json.loads(path.read_text())):
        queried = set(METRIC.findall(query)) - LABELS
        assert queried, f"{path.name}: {query} queries no memwarden metric"
        assert queried - textfile.metric_names == set(), f"{path.name}: {query}"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_dashboard_queries_return_data_over_the_real_textfile(path, textfile, tmp_path):
    """promtool evaluates each query (its variables filled in) over the textfile's series,
    scraped every minute for an hour as node_exporter would expose them."""
    queries = [
        concrete(query)
        for query in dashboard_queries(json.loads(path.read_text()))
        if not query.startswith("label_values(")
    ]
    series = [
        {"series": _scraped(line), "values": f"{line.rsplit(' ', 1)[1]}+0x60"}
        for line in textfile.text.splitlines()
        if line and not line.startswith("#")
    ]
    expectations = [
        {"expr": f"count({query}) > bool 0", "eval_time": "60m", "exp_samples": [{"value": 1}]}
        for query in queries
    ]
    document = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": expectations}],
    }
    test_file = tmp_path / "dashboard.test.yml"
    test_file.write_text(json.dumps(document))  # JSON is YAML
    tested = run_tool("promtool", "test", "rules", test_file)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def _scraped(sample: str) -> str:
    """A textfile sample line's series, with the labels a scrape of node_exporter adds."""
    series = sample.rsplit(" ", 1)[0]
    return series[:-1] + ',instance="host:9100",job="node"}'
