"""The bootstrap budget forecast through real health runs: each run's own scan snapshots the
workspace (recording the bootstrap files' lengths), and the check reads their growth back."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from memwarden.indexing import bootstrap_files
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_sqlite_era_state, write_json5_config
from support.health import T0, HealthRunner

DAY = timedelta(days=1)


def text_of(chars: int) -> bytes:
    """A MEMORY.md the gateway counts as exactly `chars` characters."""
    body = ("- [FACT] something worth remembering\n" * (chars // 37 + 1))[: chars - 1]
    return (body + ".\n").encode()


def budget_of(result, agent: str = "main") -> dict:
    """The agent's result: its own warning, else the summary of the agents within budget
    (`bootstrap.budget`) with its figures as `details`."""
    checks = [c for c in result.data["checks"] if c["key"].startswith("bootstrap.budget")]
    own = [c for c in checks if c["key"] == f"bootstrap.budget:{agent}"]
    if own:
        return own[0]
    (summary,) = [c for c in checks if c["key"] == "bootstrap.budget"]
    (details,) = [d for d in summary["details"]["agents"] if d["agent"] == agent]
    return {**summary, "details": details}


def file_row(check: dict, name: str) -> dict:
    (row,) = [row for row in check["details"]["files"] if row["file"] == name]
    return row


@pytest.fixture
def state(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    (state.workspace / "USER.md").write_bytes(b"# User\n\n- Sam, prefers short answers\n")
    return state


def run_days(state, sizes, runner=None, start=T0):
    """Write MEMORY.md at each size and run health a day apart; return the last result."""
    runner = runner or HealthRunner(state.state_dir)
    result = None
    for number, chars in enumerate(sizes):
        (state.workspace / "MEMORY.md").write_bytes(text_of(chars))
        result = runner.run(at=start + number * DAY, no_alert=True)
    return result


def test_growing_memory_md_warns_with_the_file_its_size_rate_and_days_left(state, tmp_path):
    metrics = tmp_path / "metrics" / "memwarden.prom"
    metrics.parent.mkdir()
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_METRICS_FILE": str(metrics)})

    result = run_days(state, [10_000, 11_000, 12_000, 13_000, 14_000], runner)

    check = budget_of(result)
    assert check["status"] == "warning"
    assert check["message"].startswith(
        "agent main: MEMORY.md will be cut at bootstrap in 6 days: 14,000 of 20,000 characters "
        "(bootstrapMaxChars), +1,000/day over the last 4 day(s); trim it, or move older entries "
        "into files under memory/"
    )
    assert (check["value"], check["threshold"]) == (6, 14)
    assert check["details"]["file"] == "MEMORY.md"
    assert file_row(check, "MEMORY.md") == {
        "file": "MEMORY.md",
        "chars": 14_000,
        "cap": 20_000,
        "growth_per_day": 1_000,
        "growth_days": 4,
        "days_left": 6,
        "no_rate": None,
    }
    user = file_row(check, "USER.md")
    assert (user["growth_per_day"], user["days_left"]) == (0, None)

    samples = parse(metrics.read_text())
    memory = {"agent": "main", "file": "MEMORY.md"}
    assert samples["memwarden_bootstrap_file_seconds_until_truncation", memory] == 6 * 86_400
    assert samples["memwarden_bootstrap_file_growth_chars_per_second", memory] == pytest.approx(
        1_000 / 86_400, rel=1e-4
    )
    user = {"agent": "main", "file": "USER.md"}
    assert samples["memwarden_bootstrap_file_growth_chars_per_second", user] == 0
    assert ("memwarden_bootstrap_file_seconds_until_truncation", user) not in samples
    # MEMORY.md stops counting at its 20,000 cap: the set (14,036 now) never reaches 60,000.
    assert ("memwarden_bootstrap_total_seconds_until_truncation", {"agent": "main"}) not in samples
    assert samples["memwarden_bootstrap_forecast_horizon_seconds", {}] == 14 * 86_400


class Samples(dict):
    """{(metric name, labels without `gateway`): value}, looked up with a labels dict."""

    def __getitem__(self, key):
        name, labels = key
        return super().__getitem__((name, frozenset(labels.items())))

    def __contains__(self, key):
        name, labels = key
        return super().__contains__((name, frozenset(labels.items())))


def parse(text: str) -> Samples:
    from prometheus_client.parser import text_string_to_metric_families

    samples = Samples()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = {k: v for k, v in sample.labels.items() if k != "gateway"}
            dict.__setitem__(samples, (sample.name, frozenset(labels.items())), sample.value)
    return samples


def test_stable_bootstrap_files_do_not_warn(state):
    result = run_days(state, [12_000] * 5)
    check = budget_of(result)
    assert check["status"] == "ok"
    assert check["message"].startswith("agent main: bootstrap files use ")
    assert "none cut within 14 days at their rate" in check["message"]
    assert file_row(check, "MEMORY.md")["growth_per_day"] == 0


def test_slow_growth_beyond_the_forecast_days_does_not_warn(state):
    result = run_days(state, [10_000, 10_100, 10_200, 10_300])
    check = budget_of(result)
    assert check["status"] == "ok"
    assert "(MEMORY.md 10,300 of 20,000, +100/day, cut in 97 days)" in check["message"]


def test_the_forecast_days_setting_moves_the_warning(state):
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_BOOTSTRAP_FORECAST_DAYS": "3"})
    check = budget_of(run_days(state, [10_000, 11_000, 12_000, 13_000, 14_000], runner))
    assert check["status"] == "ok"


def test_memory_md_trimmed_is_not_extrapolated_until_a_day_has_passed(state):
    runner = HealthRunner(state.state_dir)
    run_days(state, [10_000, 13_000, 16_000], runner)
    (state.workspace / "MEMORY.md").write_bytes(text_of(6_000))
    trimmed = runner.run(at=T0 + 2.5 * DAY, no_alert=True)
    check = budget_of(trimmed)
    assert check["status"] == "ok"
    row = file_row(check, "MEMORY.md")
    assert row["growth_per_day"] is None
    assert row["no_rate"] == "less than 1 day since it was created, trimmed or rewound"

    (state.workspace / "MEMORY.md").write_bytes(text_of(6_600))
    later = runner.run(at=T0 + 4.5 * DAY, no_alert=True)
    assert file_row(budget_of(later), "MEMORY.md")["growth_per_day"] == 300  # since the trim


def test_memory_md_over_the_cap_warns_that_it_is_cut_now(state):
    check = budget_of(run_days(state, [21_000, 21_500]))
    assert (check["status"], check["value"]) == ("warning", 0)
    assert check["message"].startswith(
        "agent main: MEMORY.md is cut in the middle at bootstrap now: 21,500 of 20,000 "
        "characters (bootstrapMaxChars), +500/day over the last 1 day(s); trim it"
    )


def test_the_agent_cap_from_the_gateway_config_is_used(state):
    import json5

    config = json5.loads(state.config_path.read_text())
    config.setdefault("agents", {}).setdefault("defaults", {})["bootstrapMaxChars"] = 16_000
    write_json5_config(state.config_path, config)
    check = budget_of(run_days(state, [10_000, 11_000, 12_000]))
    assert check["status"] == "warning"
    assert (
        "MEMORY.md will be cut at bootstrap in 4 days: 12,000 of 16,000 characters"
        in (check["message"])
    )


def test_health_json_carries_the_figures(state, capsys, monkeypatch):
    run_days(state, [10_000, 11_000, 12_000])
    monkeypatch.setattr(JobContext, "now", lambda self: T0 + 2 * DAY)
    result = run_cli(
        capsys, "--state-dir", state.state_dir, "--json", "health", "--dry-run", "--no-alert"
    )
    data = result.json()
    (check,) = [c for c in data["checks"] if c["key"] == "bootstrap.budget:main"]
    assert check["status"] == "warning"
    assert file_row(check, "MEMORY.md")["days_left"] == 8
    total = check["details"]["total"]
    assert total["cap"] == 60_000 and total["growth_per_day"] == 1_000
    assert total["grower"] == "MEMORY.md"


def test_health_without_history_reports_the_sizes_and_no_rate(state):
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HISTORY_ENABLED": "false"})
    check = budget_of(run_days(state, [10_000, 15_000, 19_000], runner))
    assert check["status"] == "ok"
    assert file_row(check, "MEMORY.md")["chars"] == 19_000
    assert file_row(check, "MEMORY.md")["growth_per_day"] is None


def test_a_rewind_to_a_longer_memory_md_is_not_taken_for_growth(state, capsys, monkeypatch):
    from memwarden.history import records

    runner = HealthRunner(state.state_dir)
    run_days(state, [16_000, 6_000, 6_500], runner)  # trimmed on day 1
    context = runner.context()
    try:
        first = records.snapshots(context.state, "main")[-1]
    finally:
        context.close()
    ticks = itertools.count()  # the rewind's moments follow each other, as on a real clock
    with monkeypatch.context() as patched:
        patched.setattr(
            JobContext, "now", lambda self: T0 + 2.2 * DAY + timedelta(milliseconds=next(ticks))
        )
        rewound = run_cli(
            capsys, "--state-dir", state.state_dir, "history", "rewind", first.id, "--path",
            "MEMORY.md",
        )  # fmt: skip
    assert rewound.exit_code == 0, rewound.stderr
    assert len((state.workspace / "MEMORY.md").read_text().rstrip()) == 16_000

    after = budget_of(runner.run(at=T0 + 3.5 * DAY, no_alert=True))
    row = file_row(after, "MEMORY.md")
    # from the trim, 6,000 -> 16,000 in 2.5 days would be +4,000/day, cut within a day; from
    # the rewind's snapshot of the restored file (day 2.2), it has not grown
    assert (after["status"], row["growth_per_day"], row["growth_days"]) == ("ok", 0, 1.3)

    (state.workspace / "MEMORY.md").write_bytes(text_of(16_100))
    later = file_row(budget_of(runner.run(at=T0 + 4.5 * DAY, no_alert=True)), "MEMORY.md")
    # measured from the rewind's own snapshot of the restored file (16,000 at day 2.2)
    assert later["growth_per_day"] == pytest.approx(100 / 2.3, abs=0.01), later


def test_a_fleet_is_one_line_for_the_agents_within_budget_and_one_warning_per_agent_at_risk(
    state, tmp_path
):
    import json5

    ops = tmp_path / "workspace-ops"
    ops.mkdir()
    (ops / "MEMORY.md").write_bytes(text_of(5_000))
    config = json5.loads(state.config_path.read_text())
    config["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(ops)},
    ]
    write_json5_config(state.config_path, config)
    metrics = tmp_path / "memwarden.prom"
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_METRICS_FILE": str(metrics)})

    result = run_days(state, [10_000, 12_000, 14_000], runner)

    checks = {c["key"]: c for c in result.data["checks"] if c["key"].startswith("bootstrap.")}
    assert {key: check["status"] for key, check in checks.items()} == {
        "bootstrap.budget:main": "warning",
        "bootstrap.budget": "ok",
    }
    assert checks["bootstrap.budget"]["message"].startswith("agent ops: bootstrap files use ")
    assert [a["agent"] for a in checks["bootstrap.budget"]["details"]["agents"]] == ["ops"]
    samples = parse(metrics.read_text())
    for agent in ("main", "ops"):
        labels = {"agent": agent, "file": "MEMORY.md"}
        assert ("memwarden_bootstrap_file_growth_chars_per_second", labels) in samples
    assert (
        samples[
            "memwarden_bootstrap_file_growth_chars_per_second",
            {"agent": "ops", "file": "MEMORY.md"},
        ]
        == 0
    )

    (state.workspace / "MEMORY.md").write_bytes(text_of(4_000))  # trimmed
    after = runner.run(at=T0 + 3 * DAY)
    (summary,) = [c for c in after.data["checks"] if c["key"].startswith("bootstrap.")]
    assert summary["key"] == "bootstrap.budget"
    assert summary["message"] == "2 agents: no bootstrap file cut within 14 days at its rate"


def test_a_run_reads_each_workspace_s_bootstrap_files_once_for_the_check_and_the_metrics(
    state, tmp_path, monkeypatch
):
    import json5

    # Two agents share the workspace: its files are still read once a run.
    config = json5.loads(state.config_path.read_text())
    config["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "ops", "workspace": str(state.workspace)},
    ]
    write_json5_config(state.config_path, config)
    opened = []
    read = bootstrap_files.read_text_if_exists

    def counted(path):
        opened.append(path.name)
        return read(path)

    monkeypatch.setattr(bootstrap_files, "read_text_if_exists", counted)
    metrics = tmp_path / "memwarden.prom"
    runner = HealthRunner(state.state_dir, env={"MEMWARDEN_HEALTH_METRICS_FILE": str(metrics)})

    result = run_days(state, [12_000], runner)

    assert opened.count("MEMORY.md") == 1
    assert file_row(budget_of(result), "MEMORY.md")["chars"] == 12_000
    samples = parse(metrics.read_text())
    for agent in ("main", "ops"):
        assert samples["memwarden_bootstrap_file_chars", {"agent": agent, "file": "MEMORY.md"}] == (
            12_000
        )
