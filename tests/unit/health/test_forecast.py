"""The bootstrap budget forecast: the growth rate of a file over its recorded lengths, the days
until the gateway cuts it, the set's budget, and how the check grades and words them."""

from __future__ import annotations

import pytest

from memwarden.health.checks.bootstrap_budget import (
    grade_budget,
    points_of,
    rewind_times,
    summarize,
)
from memwarden.health.forecast import (
    DAY,
    FileBudget,
    Growth,
    growth,
    total_budget,
)
from memwarden.health.model import Status

NOW = 1_800_000_000.0


def day(offset: float) -> float:
    return NOW + offset * DAY


def test_growth_steady_file_is_net_change_over_the_window():
    points = [(day(-10), 1_000), (day(-6), 2_000), (day(-3), 3_000), (day(0), 4_500)]
    measured = growth(points, NOW, window_days=7)
    # in force at the window's start (7 days ago): 1,000 (recorded 10 days ago)
    assert measured.rate == pytest.approx((4_500 - 1_000) / 7)
    assert measured.days == pytest.approx(7)


def test_growth_history_shorter_than_the_window_spans_what_there_is():
    points = [(day(-2), 1_000), (day(-1), 1_500), (day(0), 2_000)]
    measured = growth(points, NOW, window_days=7)
    assert measured.rate == pytest.approx(500)
    assert measured.days == pytest.approx(2)


def test_growth_is_not_biased_by_many_snapshots_in_one_busy_hour():
    busy = [(day(-0.5) + minute * 60, 2_000 + minute * 10) for minute in range(60)]
    points = [(day(-7), 1_000), *busy, (day(0), 2_600)]
    measured = growth(points, NOW, window_days=7)
    assert measured.rate == pytest.approx(1_600 / 7)


def test_growth_of_a_stable_file_is_zero():
    points = [(day(-20), 3_000), (day(-4), 3_000), (day(0), 3_000)]
    assert growth(points, NOW, window_days=7).rate == 0


def test_growth_with_one_snapshot_and_no_change_is_zero_after_a_day():
    assert growth([(day(-2), 3_000), (day(0), 3_000)], NOW, 7).rate == 0


@pytest.mark.parametrize(
    "points",
    [
        [(day(0), 3_000)],  # only the current length
        [(day(-0.2), 1_000), (day(0), 3_000)],  # a few hours of history
    ],
)
def test_growth_with_less_than_a_day_of_history_is_unknown(points):
    measured = growth(points, NOW, window_days=7)
    assert measured.rate is None
    assert measured.reason == "less than 1 day of history"


def test_growth_restarts_after_the_file_shrank_by_more_than_a_fifth():
    points = [(day(-6), 10_000), (day(-4), 18_000), (day(-3), 5_000), (day(0), 8_000)]
    measured = growth(points, NOW, window_days=7)
    assert measured.rate == pytest.approx(1_000)  # 3,000 in the 3 days since the trim
    assert measured.days == pytest.approx(3)


def test_growth_keeps_small_shrinks_in_the_net_change():
    points = [(day(-7), 10_000), (day(-5), 12_000), (day(-4), 11_000), (day(0), 13_000)]
    assert growth(points, NOW, window_days=7).rate == pytest.approx(3_000 / 7)


def test_growth_just_after_a_trim_is_unknown_rather_than_extrapolated_from_minutes():
    points = [(day(-6), 18_000), (day(-0.01), 4_000), (day(0), 4_500)]
    measured = growth(points, NOW, window_days=7)
    assert measured.rate is None
    assert measured.reason == "less than 1 day since it was created, trimmed or rewound"


def test_growth_restarts_when_the_file_appeared():
    points = [(day(-9), None), (day(-3), 2_000), (day(0), 5_000)]
    assert growth(points, NOW, window_days=7).rate == pytest.approx(1_000)


def test_growth_restarts_after_a_rewind_even_to_a_longer_version():
    # rewound two days ago to a version 6,000 characters longer: not growth
    points = [(day(-6), 4_000), (day(-2.5), 5_000), (day(-1.9), 11_000), (day(0), 11_950)]
    measured = growth(points, NOW, window_days=7, resets=[day(-2)])
    assert measured.rate == pytest.approx(950 / 1.9)


def test_growth_restarts_after_the_point_a_rewind_restored_not_at_its_pre_rewind_snapshot():
    points = [(day(-6), 4_000), (day(-2), 5_000), (day(-1.5), 11_000), (day(0), 12_500)]
    measured = growth(points, NOW, window_days=7, resets=[day(-2)])  # pre-rewind at day(-2)
    assert measured.rate == pytest.approx(1_500 / 1.5)


def test_growth_is_unknown_when_nothing_was_recorded_since_a_rewind():
    points = [(day(-6), 4_000), (day(-1), 5_000), (day(0), 11_000)]
    assert growth(points, NOW, window_days=7, resets=[day(-0.5)]).rate is None


def test_growth_of_an_absent_file_is_unknown():
    assert growth([(day(-3), 1_000), (day(0), None)], NOW, 7).rate is None


def test_growth_ignores_points_after_now():
    points = [(day(-2), 1_000), (day(0), 2_000), (day(1), 50_000)]
    assert growth(points, NOW, window_days=7).rate == pytest.approx(500)


def budget(path="MEMORY.md", chars=10_000, cap=20_000, rate=500.0, days=7.0):
    measured = Growth(rate, days if rate is not None else None, None if rate else "no history")
    return FileBudget(path, chars, cap, measured)


def test_days_left_at_the_rate():
    assert budget(chars=17_000, rate=500).days_left == pytest.approx(6)


def test_days_left_over_the_cap_is_zero_and_at_the_cap_fits():
    assert budget(chars=20_001).days_left == 0
    assert budget(chars=20_000, rate=0).days_left is None


@pytest.mark.parametrize("rate", [None, 0.0, -200.0])
def test_days_left_without_growth_is_none(rate):
    assert budget(rate=rate).days_left is None


def test_total_counts_each_file_up_to_the_per_file_cap_and_sums_the_rates():
    files = [
        budget("AGENTS.md", 5_000, rate=0.0),
        budget("MEMORY.md", 25_000, rate=900.0),  # over its cap: adds nothing more
        budget("USER.md", 4_000, rate=100.0),
    ]
    total = total_budget(files, {"memory/INDEX.md": 6_000}, 20_000, 60_000)
    assert total.chars == 5_000 + 20_000 + 4_000 + 6_000
    assert total.rate == pytest.approx(100)
    assert total.grower is files[2]
    # USER.md can add 16,000 more before its own cap: 51,000, never the total cap.
    assert total.days_left is None


def test_total_reaches_its_cap_with_each_file_stopping_at_its_own():
    files = [
        budget("MEMORY.md", 10_000, rate=1_000.0),
        budget("AGENTS.md", 19_000, rate=500.0),  # reaches its cap after 2 days
        budget("USER.md", 17_000, rate=0.0),
        budget("SOUL.md", 12_000, rate=0.0),
    ]
    assert total_budget(files, {}, 20_000, 60_000).days_left == pytest.approx(4 / 3)
    files[1] = budget("AGENTS.md", 19_000, rate=-500.0)  # shrinking meanwhile
    assert total_budget(files, {}, 20_000, 60_000).days_left == pytest.approx(4.0)
    files = [
        budget("MEMORY.md", 19_000, rate=1_000.0),  # its cap in a day: the set stops at 55,000
        budget("AGENTS.md", 18_000, rate=0.0),
        budget("USER.md", 17_000, rate=0.0),
    ]
    assert total_budget(files, {}, 20_000, 60_000).days_left is None


def test_total_over_its_cap_has_no_days_left_whatever_the_rates():
    files = [budget("MEMORY.md", 19_000, rate=None), budget("AGENTS.md", 19_000, rate=-500.0)]
    total = total_budget(files, {"USER.md": 19_000}, 20_000, 50_000)
    assert total.truncated and total.days_left == 0


def test_total_rate_is_unknown_when_no_file_rate_is():
    total = total_budget([budget(rate=None)], {}, 20_000, 60_000)
    assert total.rate is None and total.days_left is None


def test_grade_names_the_file_its_size_rate_days_and_fix():
    files = [budget("MEMORY.md", 17_000, rate=500.0), budget("USER.md", 1_000, rate=0.0)]
    total = total_budget(files, {}, 20_000, 60_000)
    result = grade_budget("main", files, total, forecast_days=14)
    assert (result.key, result.status) == ("bootstrap.budget:main", Status.WARNING)
    assert result.message == (
        "agent main: MEMORY.md will be cut at bootstrap in 6 days: 17,000 of 20,000 characters "
        "(bootstrapMaxChars), +500/day over the last 7 day(s); trim it, or move older entries "
        "into files under memory/ (memwarden index catalogs them in INDEX.md for the agent to "
        "read on demand), or raise bootstrapMaxChars"
    )
    assert (result.value, result.threshold) == (6, 14)
    assert result.details["file"] == "MEMORY.md" and result.details["agent"] == "main"
    memory = result.details["files"][0]
    assert memory == {
        "file": "MEMORY.md",
        "chars": 17_000,
        "cap": 20_000,
        "growth_per_day": 500,
        "growth_days": 7,
        "days_left": 6,
        "no_rate": None,
    }


def test_grade_beyond_the_forecast_days_is_ok_and_says_the_fastest_grower():
    files = [budget("MEMORY.md", 10_000, rate=100.0), budget("USER.md", 1_000, rate=0.0)]
    total = total_budget(files, {}, 20_000, 60_000)
    result = grade_budget("main", files, total, forecast_days=14)
    assert result.status is Status.OK
    assert result.message == (
        "agent main: bootstrap files use 11,000 of 60,000 characters, none cut within 14 days "
        "at their rate (MEMORY.md 10,000 of 20,000, +100/day, cut in 100 days)"
    )
    assert result.value == 100


def test_grade_a_file_cut_now_is_a_warning_and_comes_first():
    files = [
        budget("USER.md", 19_500, rate=100.0),
        budget("AGENTS.md", 21_000, rate=None),
    ]
    total = total_budget(files, {}, 20_000, 60_000)
    result = grade_budget("ops", files, total, forecast_days=14)
    assert result.status is Status.WARNING and result.value == 0
    assert result.details["file"] == "AGENTS.md"
    assert result.message.startswith(
        "agent ops: AGENTS.md is cut in the middle at bootstrap now: 21,000 of 20,000 characters "
        "(bootstrapMaxChars), growth unknown (no history); trim AGENTS.md, or raise "
        "bootstrapMaxChars; USER.md will be cut at bootstrap in 5 days"
    )


def test_grade_the_set_heading_for_the_total_cap_names_the_grower():
    files = [budget(f"{name}.md", 15_000, rate=rate) for name, rate in [("AGENTS", 0.0)]]
    files += [budget("MEMORY.md", 15_000, rate=300.0), budget("USER.md", 15_000, rate=100.0)]
    total = total_budget(files, {"memory/INDEX.md": 12_000}, 20_000, 60_000)
    result = grade_budget("main", files, total, forecast_days=14)
    assert result.status is Status.WARNING
    assert result.details["file"] == "total"
    assert result.message == (
        "agent main: the bootstrap files together will pass the total cap in 7 days: 57,000 of "
        "60,000 characters (bootstrapTotalMaxChars), growing 400/day (MEMORY.md +300/day); "
        "trim or index MEMORY.md"
    )


def test_grade_the_set_over_the_total_cap_is_cut_now():
    files = [budget(f"{n}.md", 18_000, rate=0.0) for n in ("AGENTS", "SOUL", "MEMORY", "USER")]
    total = total_budget(files, {}, 20_000, 60_000)
    result = grade_budget("main", files, total, forecast_days=14)
    assert result.status is Status.WARNING and result.value == 0
    assert "the bootstrap files together are cut at bootstrap now: 72,000 of 60,000" in (
        result.message
    )


def test_grade_without_history_is_ok_and_says_the_growth_is_unknown():
    files = [budget("MEMORY.md", 3_000, rate=None)]
    result = grade_budget("main", files, total_budget(files, {}, 20_000, 60_000), 14)
    assert result.status is Status.OK
    assert result.message.endswith("(growth unknown: no history)")
    assert result.value is None


def test_points_of_a_file_absent_from_some_snapshots():
    history = [(day(-3), {"USER.md": 10}), (day(-1), {"USER.md": 12, "MEMORY.md": 40})]
    assert points_of(history, "MEMORY.md") == [(day(-3), None), (day(-1), 40)]


def test_rewind_times_by_agent_and_file():
    events = [
        {"agent_id": "main", "ts": 5.0, "data": {"restored": ["MEMORY.md", "memory/a.md"]}},
        {"agent_id": "main", "ts": 9.0, "data": {"restored": ["MEMORY.md"]}},
        {"agent_id": "ops", "ts": 7.0, "data": {"restored": []}},
    ]
    assert rewind_times(events) == {
        ("main", "MEMORY.md"): [5.0, 9.0],
        ("main", "memory/a.md"): [5.0],
    }


def test_summarize_the_agents_within_budget_names_the_nearest_date():
    slow = [budget("MEMORY.md", 10_000, rate=100.0)]
    stable = [budget("MEMORY.md", 3_000, rate=0.0)]
    fine = [
        grade_budget("main", slow, total_budget(slow, {}, 20_000, 60_000), 14),
        grade_budget("ops", stable, total_budget(stable, {}, 20_000, 60_000), 14),
    ]
    (summary,) = summarize(fine, 14)
    assert (summary.key, summary.status, summary.value) == ("bootstrap.budget", Status.OK, 100)
    assert summary.message.startswith(
        "2 agents: no bootstrap file cut within 14 days at its rate; nearest: agent main: "
    )
    assert [agent["agent"] for agent in summary.details["agents"]] == ["main", "ops"]
    assert summarize([], 14) == []
