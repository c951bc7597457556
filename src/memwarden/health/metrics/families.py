"""Every metric memwarden writes: its name, type, help, and how its samples are collected.

A family's `collect(sources)` yields `(labels, value)` pairs; the `gateway` label is added to
each by the exposition. Names and labels follow Prometheus's conventions (base units in the
name, `_total` for counters, no `job` or `instance` label, which belong to the scrape).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from memwarden import __version__
from memwarden.alerts import alertmanager_destination
from memwarden.compactions.ledger import totals
from memwarden.health import feed_store, store
from memwarden.health.checks.bootstrap_budget import KEY as BUDGET_KEY
from memwarden.health.checks.context import KEY as CONTEXT_KEY
from memwarden.health.checks.memory_files import KB
from memwarden.health.checks.memory_files import KEY as MEMORY_KEY
from memwarden.health.deliveries import FOLDER, read_receipts
from memwarden.health.forecast import DAY
from memwarden.health.metrics.sources import MetricSources
from memwarden.health.model import Status
from memwarden.indexing.bootstrap_files import bootstrap_lengths

Sample = tuple[dict[str, str], float]


@dataclass(frozen=True)
class Family:
    """One metric: `kind` is `gauge` or `counter`."""

    name: str
    kind: str
    help: str
    collect: Callable[[MetricSources], Iterable[Sample]]


def _build_info(sources: MetricSources) -> Iterator[Sample]:
    yield {"version": __version__}, 1


def _check_status(sources: MetricSources) -> Iterator[Sample]:
    for result in sources.results:
        yield {"check": result.key}, result.status.rank


def _alerts_open(sources: MetricSources) -> Iterator[Sample]:
    for status in (Status.WARNING, Status.CRITICAL):
        yield {"severity": status.value}, sum(r.status is status for r in sources.results)


def _undelivered(sources: MetricSources) -> Iterator[Sample]:
    yield {"sink": "slack"}, len(store.undelivered(sources.state))
    if alertmanager_destination(sources.config.alertmanager):
        yield {"sink": "alertmanager"}, len(feed_store.pending(sources.state))


def _health_last_run(sources: MetricSources) -> Iterator[Sample]:
    yield {}, sources.now.timestamp()


def _last_success(sources: MetricSources) -> Iterator[Sample]:
    # This run's own: it completed its checks and writes this file.
    yield {"memwarden_job": "health"}, sources.now.timestamp()
    for job in sources.state.recorded_jobs():
        run = sources.state.last_success(job) if job != "health" else None
        if run is not None and run.finished_at is not None:
            yield {"memwarden_job": job}, run.finished_at


def _interval(sources: MetricSources) -> Iterator[Sample]:
    for job in dict.fromkeys(sources.config.install.jobs):
        minutes = getattr(sources.config.schedule, f"{job}_minutes", None)
        if minutes is not None:
            yield {"memwarden_job": job}, minutes * 60


def _context(field: str) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        for row in sources.detail_rows(CONTEXT_KEY, "ratios"):
            if row.get(field) is not None:
                yield {"agent": str(row["agent"]), "session": str(row["session"])}, row[field]

    return collect


def _memory(field: str) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        for row in sources.detail_rows(MEMORY_KEY, "agents"):
            yield {"agent": str(row["agent"])}, row[field]

    return collect


def _memory_limit(sources: MetricSources) -> Iterator[Sample]:
    if sources.result(MEMORY_KEY) is not None:
        yield {}, sources.config.health.memory_file_warning_kb * KB


def _bootstrap_files(sources: MetricSources) -> Iterator[Sample]:
    for agent_id, lengths, _caps in _bootstrap(sources):
        for name, length in lengths.items():
            yield {"agent": agent_id, "file": name}, length


def _bootstrap_total(sources: MetricSources) -> Iterator[Sample]:
    for agent_id, lengths, (max_chars, _total) in _bootstrap(sources):
        yield {"agent": agent_id}, sum(min(length, max_chars) for length in lengths.values())


def _bootstrap_cap(index: int) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        for agent_id, _lengths, caps in _bootstrap(sources):
            yield {"agent": agent_id}, caps[index]

    return collect


def _bootstrap(sources: MetricSources) -> list[tuple[str, dict[str, int], tuple[int, int]]]:
    """Each agent's bootstrap file lengths and caps, read once per textfile."""

    def read() -> list[tuple[str, dict[str, int], tuple[int, int]]]:
        deployment = sources.deployment
        return [
            (
                agent.id,
                bootstrap_lengths(agent.workspace) if agent.workspace.is_dir() else {},
                deployment.bootstrap_caps(agent.id),
            )
            for agent in deployment.agents
        ]

    return sources.memo("bootstrap", read)


# The bootstrap budget forecast (check bootstrap.budget:<agent>): rates per second, time left
# in seconds; a figure the check could not work out (no rate, not growing) has no sample.
def _budget_files(field: str, scale: float) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        for details in _budgets(sources):
            for row in details.get("files") or []:
                if row.get(field) is not None:
                    yield {"agent": details["agent"], "file": row["file"]}, row[field] * scale

    return collect


def _budget_total(field: str, scale: float) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        for details in _budgets(sources):
            value = (details.get("total") or {}).get(field)
            if value is not None:
                yield {"agent": details["agent"]}, value * scale

    return collect


def _budget_horizon(sources: MetricSources) -> Iterator[Sample]:
    if _budgets(sources):
        yield {}, sources.config.health.bootstrap_forecast_days * DAY


def _budgets(sources: MetricSources) -> list[dict]:
    """Each agent's figures: from its own warning, or from the summary of the others."""
    found = sources.detail_rows(BUDGET_KEY, "agents")
    found += [r.details for r in sources.results if r.key.startswith(BUDGET_KEY + ":")]
    return [details for details in found if isinstance(details.get("agent"), str)]


def _rotations(sources: MetricSources) -> Iterator[Sample]:

    try:
        rows = dict(
            sources.state.connection.execute(
                "SELECT outcome, count(*) FROM rotations GROUP BY outcome"
            ).fetchall()
        )
    except sqlite3.OperationalError:  # no `rotations` table: rotate never ran here
        rows = {}
    for outcome in ("rotated", "failed"):
        yield {"outcome": outcome}, rows.get(outcome, 0)


def _rotate_last_run(sources: MetricSources) -> Iterator[Sample]:
    runs = sources.state.last_runs("rotate", limit=1)
    if not runs or runs[0].finished_at is None:
        return
    summary = runs[0].summary
    for outcome in ("rotated", "failed", "postponed", "skipped"):
        value = summary.get(outcome)
        if isinstance(value, int):
            yield {"outcome": outcome}, value


def _compactions(index: int) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        counts = sources.memo("compactions", lambda: totals(sources.state))
        for agent_id, values in sorted(counts.items()):
            yield {"agent": agent_id}, values[index]

    return collect


def _deliveries(field: str) -> Callable[[MetricSources], Iterator[Sample]]:
    def collect(sources: MetricSources) -> Iterator[Sample]:
        folder = sources.storage_dir
        if folder is None:
            return
        receipts = sources.memo("deliveries", lambda: list(read_receipts(folder / FOLDER)))
        for receipt in receipts:
            last = receipt.last
            if last is None:
                continue
            labels = {"agent": receipt.agent_id or "", "session": receipt.session_key}
            if field == "at":
                yield labels, last.at
            elif field == "whole":
                yield labels, 1 if last.handoff == "whole" else 0
            elif last.handoff_chars is not None:
                yield labels, last.handoff_chars

    return collect


FAMILIES: tuple[Family, ...] = (
    Family("memwarden_build_info", "gauge", "memwarden's version (always 1).", _build_info),
    Family(
        "memwarden_health_check_status",
        "gauge",
        "Status of each health check: 0 ok, 1 warning, 2 critical.",
        _check_status,
    ),
    Family(
        "memwarden_alerts_open",
        "gauge",
        "Health checks not ok in this run, by severity.",
        _alerts_open,
    ),
    Family(
        "memwarden_alerts_undelivered",
        "gauge",
        "Alerts waiting for delivery, by sink (Slack messages, Alertmanager alerts).",
        _undelivered,
    ),
    Family(
        "memwarden_health_last_run_timestamp_seconds",
        "gauge",
        "When this health run finished its checks (Unix time).",
        _health_last_run,
    ),
    Family(
        "memwarden_job_last_success_timestamp_seconds",
        "gauge",
        "When each memwarden job last succeeded (Unix time); for health, this run.",
        _last_success,
    ),
    Family(
        "memwarden_job_interval_seconds",
        "gauge",
        "How often each scheduled memwarden job runs (schedule.<job>_minutes).",
        _interval,
    ),
    Family(
        "memwarden_session_context_tokens",
        "gauge",
        "Context size of a conversation's last model call, in tokens.",
        _context("tokens"),
    ),
    Family(
        "memwarden_session_context_window_tokens",
        "gauge",
        "Context window of a conversation's model, in tokens.",
        _context("window"),
    ),
    Family(
        "memwarden_session_context_ratio",
        "gauge",
        "Last context size of a conversation over its model's context window.",
        _context("ratio"),
    ),
    Family(
        "memwarden_memory_bytes",
        "gauge",
        "Size of an agent's memory (MEMORY.md and memory/, archive/ excluded), in bytes.",
        _memory("bytes"),
    ),
    Family(
        "memwarden_memory_files",
        "gauge",
        "Number of an agent's memory files (MEMORY.md and memory/, archive/ excluded).",
        _memory("files"),
    ),
    Family(
        "memwarden_memory_largest_file_bytes",
        "gauge",
        "Size of an agent's largest memory file, in bytes.",
        _memory("largest"),
    ),
    Family(
        "memwarden_memory_file_limit_bytes",
        "gauge",
        "Size above which a memory file is oversized (health.memory_file_warning_kb), in bytes.",
        _memory_limit,
    ),
    Family(
        "memwarden_bootstrap_file_chars",
        "gauge",
        "Length of each bootstrap file of an agent's workspace, in characters (UTF-16 units).",
        _bootstrap_files,
    ),
    Family(
        "memwarden_bootstrap_total_chars",
        "gauge",
        "Length of an agent's bootstrap files together, each counted up to the per-file cap.",
        _bootstrap_total,
    ),
    Family(
        "memwarden_bootstrap_max_chars",
        "gauge",
        "The gateway's per-file bootstrap cap of an agent (bootstrapMaxChars).",
        _bootstrap_cap(0),
    ),
    Family(
        "memwarden_bootstrap_total_max_chars",
        "gauge",
        "The gateway's total bootstrap cap of an agent (bootstrapTotalMaxChars).",
        _bootstrap_cap(1),
    ),
    Family(
        "memwarden_bootstrap_file_growth_chars_per_second",
        "gauge",
        "Growth of a gateway bootstrap file of an agent over health.bootstrap_growth_days, in "
        "characters per second (none when unknown: less than a day of history since a break).",
        _budget_files("growth_per_day", 1 / DAY),
    ),
    Family(
        "memwarden_bootstrap_file_seconds_until_truncation",
        "gauge",
        "Time until the gateway cuts a bootstrap file at its growth rate (0: over the per-file "
        "cap now; none when it is not growing).",
        _budget_files("days_left", DAY),
    ),
    Family(
        "memwarden_bootstrap_total_growth_chars_per_second",
        "gauge",
        "Growth of an agent's bootstrap files together (the sum of their rates), in characters "
        "per second.",
        _budget_total("growth_per_day", 1 / DAY),
    ),
    Family(
        "memwarden_bootstrap_total_seconds_until_truncation",
        "gauge",
        "Time until an agent's bootstrap files together pass the total cap at their growth rate "
        "(0: over it now; none when they are not growing).",
        _budget_total("days_left", DAY),
    ),
    Family(
        "memwarden_bootstrap_forecast_horizon_seconds",
        "gauge",
        "How far ahead health warns of a bootstrap truncation (health.bootstrap_forecast_days).",
        _budget_horizon,
    ),
    Family(
        "memwarden_compactions_total",
        "counter",
        "Compactions of an agent's conversations the compaction watch recorded.",
        _compactions(0),
    ),
    Family(
        "memwarden_compactions_lossy_total",
        "counter",
        "Recorded compactions that lost items (marked items, open TODOs, file paths) or left a "
        "near-empty summary.",
        _compactions(1),
    ),
    Family(
        "memwarden_compaction_lost_items_total",
        "counter",
        "Items recorded compactions dropped from the model's context (kept in the daily log).",
        _compactions(2),
    ),
    Family(
        "memwarden_handoff_delivery_timestamp_seconds",
        "gauge",
        "When the bootstrap hook last injected into a conversation (Unix time), by its receipt.",
        _deliveries("at"),
    ),
    Family(
        "memwarden_handoff_delivery_whole",
        "gauge",
        "1 when a conversation's last bootstrap carried its handoff whole, 0 when the handoff "
        "was cut, left out or missing.",
        _deliveries("whole"),
    ),
    Family(
        "memwarden_handoff_delivery_chars",
        "gauge",
        "Length of the handoff a conversation's last bootstrap carried, as the gateway counts it.",
        _deliveries("chars"),
    ),
    Family(
        "memwarden_rotations_total",
        "counter",
        "Rotations memwarden attempted, by outcome (the rotation lineage).",
        _rotations,
    ),
    Family(
        "memwarden_rotate_last_run_sessions",
        "gauge",
        "Sessions of the last rotate run by outcome (postponed: wanted but not done this run).",
        _rotate_last_run,
    ),
)
