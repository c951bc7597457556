"""The bootstrap budget: each agent's bootstrap files against the gateway's caps, their growth
over the memory history, and the days until the gateway cuts them at that rate.

The gateway cuts a bootstrap file longer than `bootstrapMaxChars` in the middle, and the files
it loads last once all of them pass `bootstrapTotalMaxChars`, without telling the agent. This
check warns `health.bootstrap_forecast_days` ahead and names the file to trim or index. A file
or a set cut already is a warning too, worded as happening now: it is the severity memwarden
gives a cap overrun everywhere (doctor, the index job, the MemwardenBootstrapFileTruncated rule),
a loss the operator fixes at their pace; critical would fail the health timer's unit and page
like an outage for as long as the file stays long.
The lengths are read from the workspace; their growth from the lengths each history snapshot
recorded (one query of the state database, no git); the rule is in `memwarden.health.forecast`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memwarden.health.checks import HealthInputs
from memwarden.health.forecast import (
    DAY,
    FileBudget,
    Growth,
    Point,
    TotalBudget,
    growth,
    total_budget,
)
from memwarden.health.model import CheckResult, ok, warning
from memwarden.history.bootstrap_sizes import series
from memwarden.openclaw.bootstrap import GATEWAY_BOOTSTRAP

KEY = "bootstrap.budget"
REWIND_EVENT = "rewind.done"
INDEXED_FILE = "MEMORY.md"


def check_bootstrap_budget(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return a `bootstrap.budget:<agent>` warning for every agent with a
    bootstrap file or set cut now or within the forecast days, and one `bootstrap.budget` (ok)
    for the others (a fleet's hundred agents are one line). The details carry the figures of
    every file and set, for the metrics and --json."""
    settings = inputs.health
    now = inputs.now.timestamp()
    window = settings.bootstrap_growth_days
    since = now - window * DAY
    recorded = series(inputs.state, since)
    events = inputs.state.events(types=[REWIND_EVENT], since=since, limit=10_000)
    rewound = rewind_times(events)
    results = []
    for agent_id, lengths in inputs.bootstrap_lengths.items():
        # an agent whose workspace is missing has none: history.snapshot:<agent> says so
        max_chars, total_max_chars = inputs.deployment.bootstrap_caps(agent_id)
        history = recorded.get(agent_id, [])
        files = [
            FileBudget(
                path,
                chars,
                max_chars,
                growth(
                    [*points_of(history, path), (now, chars)],
                    now,
                    window,
                    rewound.get((agent_id, path), ()),
                ),
            )
            for path, chars in lengths.items()
            if path in GATEWAY_BOOTSTRAP
        ]
        others = {path: chars for path, chars in lengths.items() if path not in GATEWAY_BOOTSTRAP}
        total = total_budget(files, others, max_chars, total_max_chars)
        results.append(grade_budget(agent_id, files, total, settings.bootstrap_forecast_days))
    return [result for result in results if result.status.is_bad] + summarize(
        [result for result in results if not result.status.is_bad],
        settings.bootstrap_forecast_days,
    )


def summarize(fine: Sequence[CheckResult], forecast_days: int) -> list[CheckResult]:
    """Given the ok results of the agents within budget, return one `bootstrap.budget` for
    them all (none when there are none): one agent's own line, or how many and the nearest
    truncation date among them. Its details list each agent's figures under `agents`."""
    if not fine:
        return []
    agents = [result.details for result in fine]
    days = [result.value for result in fine if result.value is not None]
    if len(fine) == 1:
        message = fine[0].message
    else:
        nearest = min(fine, key=lambda r: math.inf if r.value is None else r.value)
        message = (
            f"{len(fine)} agents: no bootstrap file cut within {forecast_days} days at its rate"
            + (f"; nearest: {nearest.message}" if nearest.value is not None else "")
        )
    return [ok(KEY, message, min(days, default=None), forecast_days, agents=agents)]


def points_of(history: Iterable[tuple[float, Mapping[str, int]]], path: str) -> list[Point]:
    """Given an agent's recorded lengths over time, return one file's (None where absent)."""
    return [(when, lengths.get(path)) for when, lengths in history]


def rewind_times(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """Given `rewind.done` events, return when each (agent, file) was restored."""
    times: dict[tuple[str, str], list[float]] = {}
    for event in events:
        for path in (event.get("data") or {}).get("restored") or []:
            times.setdefault((event.get("agent_id") or "?", str(path)), []).append(event["ts"])
    return times


def grade_budget(
    agent_id: str, files: Sequence[FileBudget], total: TotalBudget, forecast_days: int
) -> CheckResult:
    """Given an agent's file budgets, its set's budget and how many days ahead to warn, return
    `bootstrap.budget:<agent>`: a warning when a file or the set is cut now or will be within
    `forecast_days` at its rate (those cut now first), else ok. The message names each file at
    risk, its length against the cap, its rate, the days left and what to do."""
    found: list[tuple[float, str, str]] = []
    for budget in files:
        if _at_risk(budget.days_left, forecast_days):
            found.append((budget.days_left or 0.0, budget.path, _file_line(budget)))
    if _at_risk(total.days_left, forecast_days):
        found.append((total.days_left or 0.0, "total", _total_line(total, files)))
    details = {
        "agent": agent_id,
        "files": [budget.to_json() for budget in files],
        "total": total.to_json(),
    }
    if not found:
        days = [d for d in (*(b.days_left for b in files), total.days_left) if d is not None]
        return ok(
            f"{KEY}:{agent_id}",  # summarize() reports it under KEY with the other agents
            f"agent {agent_id}: {_ok_line(files, total, forecast_days)}",
            round(min(days), 2) if days else None,
            forecast_days,
            **details,
        )
    found.sort(key=lambda item: item[0])
    worst_days, worst_file, _ = found[0]
    return warning(
        f"{KEY}:{agent_id}",
        f"agent {agent_id}: " + "; ".join(line for *_, line in found),
        round(worst_days, 2),
        forecast_days,
        **details,
        file=worst_file,
    )


def _at_risk(days_left: float | None, forecast_days: int) -> bool:
    return days_left is not None and days_left <= forecast_days


def _file_line(budget: FileBudget) -> str:
    size = f"{budget.chars:,} of {budget.cap:,} characters (bootstrapMaxChars)"
    cut = f"will be cut at bootstrap {_when(budget.days_left)}"
    if budget.truncated:
        cut = "is cut in the middle at bootstrap now"
    return f"{budget.path} {cut}: {size}{_rate(budget.growth)}; {_fix(budget.path)}"


def _total_line(total: TotalBudget, files: Sequence[FileBudget]) -> str:
    size = f"{total.chars:,} of {total.cap:,} characters (bootstrapTotalMaxChars)"
    target = total.grower or max(files, key=lambda b: min(b.chars, b.cap), default=None)
    fix = f"trim or index {target.path}" if target else "trim the bootstrap files"
    grows = ""
    if total.rate is not None and total.rate > 0 and total.grower is not None:
        grows = f", growing {total.rate:,.0f}/day ({total.grower.path} {_per_day(total.grower)})"
    cut, loss = f"will pass the total cap {_when(total.days_left)}", ""
    if total.truncated:
        cut = "are cut at bootstrap now"
        loss = ": the files loaded last (MEMORY.md, then INDEX.md and the handoff) lose their end"
    return f"the bootstrap files together {cut}: {size}{grows}{loss}; {fix}"


def _ok_line(files: Sequence[FileBudget], total: TotalBudget, forecast_days: int) -> str:
    head = (
        f"bootstrap files use {total.chars:,} of {total.cap:,} characters, none cut within "
        f"{forecast_days} days at their rate"
    )
    fastest = total.grower  # no file is cut: the set's grower is the fastest file
    if fastest is not None:
        return (
            f"{head} ({fastest.path} {fastest.chars:,} of {fastest.cap:,}, "
            f"{_per_day(fastest)}, cut {_when(fastest.days_left)})"
        )
    if files and all(b.growth.rate is None for b in files):
        return f"{head} (growth unknown: {files[0].growth.reason})"
    return head


def _rate(measured: Growth) -> str:
    if measured.rate is None:
        return f", growth unknown ({measured.reason})"
    return f", {measured.rate:+,.0f}/day over the last {measured.days:.0f} day(s)"


def _per_day(budget: FileBudget) -> str:
    return f"{budget.growth.rate or 0.0:+,.0f}/day"


def _when(days_left: float | None) -> str:
    if days_left is None:
        return "never at this rate"
    if days_left < 1:
        return "within a day"
    whole = math.floor(days_left)
    return f"in {whole} day{'s' if whole != 1 else ''}"


def _fix(path: str) -> str:
    if path == INDEXED_FILE:
        return (
            "trim it, or move older entries into files under memory/ (memwarden index catalogs "
            "them in INDEX.md for the agent to read on demand), or raise bootstrapMaxChars"
        )
    return f"trim {path}, or raise bootstrapMaxChars"
