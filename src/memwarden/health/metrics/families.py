"""Every metric memwarden writes: its name, type, help, and how its samples are collected from
what they read (`MetricSources`).

A family's `collect(sources)` yields `(labels, value)` pairs; the `gateway` label is added to
each by the exposition. Names and labels follow Prometheus's conventions (base units in the
name, `_total` for counters, no `job` or `instance` label, which belong to the scrape).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from operator import attrgetter
from typing import Any

from memwarden import __version__
from memwarden.alerts import alertmanager_destination
from memwarden.compactions.ledger import totals
from memwarden.health import store
from memwarden.health.checks import HealthInputs
from memwarden.health.checks.bootstrap_budget import KEY as BUDGET_KEY
from memwarden.health.checks.context import KEY as CONTEXT_KEY
from memwarden.health.checks.memory_files import KB
from memwarden.health.checks.memory_files import KEY as MEMORY_KEY
from memwarden.health.deliveries import FOLDER, Delivery, Receipt, read_receipts
from memwarden.health.forecast import DAY
from memwarden.health.model import CheckResult, Status
from memwarden.process.errors import MemwardenError

Sample = tuple[dict[str, str], float]


@dataclass
class MetricSources:
    """The inputs of one textfile: the health run's `inputs` (settings, state, the gateway's
    layout, loaded at most once: a GatewayConfigError leaves the families that need it without
    samples; `now`, the time of the run), this run's `results`, and `gateway`, which names this
    gateway in every sample."""

    inputs: HealthInputs
    results: Sequence[CheckResult]
    gateway: str

    def result(self, key: str) -> CheckResult | None:
        """Return this run's result under `key` (None when the check did not run)."""
        return next((result for result in self.results if result.key == key), None)

    def detail_rows(self, key: str, name: str) -> list[dict[str, Any]]:
        """Return the rows a result carries in its details under `name` (none when the check
        did not run, or failed)."""
        result = self.result(key)
        return result.details.get(name, []) if result else []

    @cached_property
    def compaction_totals(self) -> dict[str, tuple[int, int, int]]:
        """The ledger's totals per agent, and 0 for every other agent of the gateway: a counter
        that first appears above 0 has no increase for Prometheus, so an agent's first lossy
        compaction would raise no alert."""
        try:
            agents = self.inputs.deployment.agents
        except MemwardenError:  # an unreadable gateway config: the ledger's agents only
            agents = []
        return {agent.id: (0, 0, 0) for agent in agents} | totals(self.inputs.state)

    @cached_property
    def receipts(self) -> list[Receipt]:
        """The handoff delivery receipts (none when memwarden's state folder is not known)."""
        folder = self.inputs.storage_dir
        return [] if folder is None else list(read_receipts(folder / FOLDER))


@dataclass(frozen=True)
class Family:
    """One metric: `kind` is `gauge` or `counter`."""

    name: str
    help: str
    collect: Callable[[MetricSources], Iterable[Sample]]
    kind: str = "gauge"


def _build_info(sources: MetricSources) -> Iterator[Sample]:
    yield {"version": __version__}, 1


def _check_status(sources: MetricSources) -> Iterator[Sample]:
    for result in sources.results:
        yield {"check": result.key}, result.status.rank


def _alerts_open(sources: MetricSources) -> Iterator[Sample]:
    for status in (Status.WARNING, Status.CRITICAL):
        yield {"severity": status.value}, sum(r.status is status for r in sources.results)


def _undelivered(sources: MetricSources) -> Iterator[Sample]:
    yield {"sink": "slack"}, len(store.undelivered(sources.inputs.state))
    if alertmanager_destination(sources.inputs.config.alertmanager):
        yield {"sink": "alertmanager"}, len(store.feed_pending(sources.inputs.state))


def _health_last_run(sources: MetricSources) -> Iterator[Sample]:
    yield {}, sources.inputs.now.timestamp()


def _last_success(sources: MetricSources) -> Iterator[Sample]:
    # This run's own: it completed its checks and writes this file.
    yield {"memwarden_job": "health"}, sources.inputs.now.timestamp()
    for job in sources.inputs.state.recorded_jobs():
        run = sources.inputs.state.last_success(job) if job != "health" else None
        if run is not None and run.finished_at is not None:
            yield {"memwarden_job": job}, run.finished_at


def _interval(sources: MetricSources) -> Iterator[Sample]:
    schedule = sources.inputs.config.schedule  # install.jobs admits only jobs it times
    for job in dict.fromkeys(sources.inputs.config.install.jobs):
        yield {"memwarden_job": job}, getattr(schedule, f"{job}_minutes") * 60


def _context(field: str, sources: MetricSources) -> Iterator[Sample]:
    for row in sources.detail_rows(CONTEXT_KEY, "ratios"):
        if row.get(field) is not None:
            yield {"agent": str(row["agent"]), "session": str(row["session"])}, row[field]


def _memory(field: str, sources: MetricSources) -> Iterator[Sample]:
    for row in sources.detail_rows(MEMORY_KEY, "agents"):
        yield {"agent": str(row["agent"])}, row[field]


def _memory_limit(sources: MetricSources) -> Iterator[Sample]:
    if sources.result(MEMORY_KEY) is not None:
        yield {}, sources.inputs.config.health.memory_file_warning_kb * KB


def _bootstrap_files(sources: MetricSources) -> Iterator[Sample]:
    for agent_id, lengths, _caps in _bootstrap(sources):
        for name, length in lengths.items():
            yield {"agent": agent_id, "file": name}, length


def _bootstrap_total(sources: MetricSources) -> Iterator[Sample]:
    for agent_id, lengths, (max_chars, _total) in _bootstrap(sources):
        yield {"agent": agent_id}, sum(min(length, max_chars) for length in lengths.values())


def _bootstrap_cap(index: int, sources: MetricSources) -> Iterator[Sample]:
    for agent_id, _lengths, caps in _bootstrap(sources):
        yield {"agent": agent_id}, caps[index]


def _bootstrap(sources: MetricSources) -> Iterator[tuple[str, dict[str, int], tuple[int, int]]]:
    """Each agent's bootstrap file lengths (the run's, read once) and caps."""
    deployment, lengths = sources.inputs.deployment, sources.inputs.bootstrap_lengths
    for agent in deployment.agents:
        yield agent.id, lengths.get(agent.id, {}), deployment.bootstrap_caps(agent.id)


# The bootstrap budget forecast (check bootstrap.budget:<agent>): rates per second, time left
# in seconds; a figure the check could not work out (no rate, not growing) has no sample.
def _budget_files(field: str, scale: float, sources: MetricSources) -> Iterator[Sample]:
    for details in _budgets(sources):
        for row in details["files"]:
            if row.get(field) is not None:
                yield {"agent": details["agent"], "file": row["file"]}, row[field] * scale


def _budget_total(field: str, scale: float, sources: MetricSources) -> Iterator[Sample]:
    for details in _budgets(sources):
        value = details["total"][field]
        if value is not None:
            yield {"agent": details["agent"]}, value * scale


def _budget_horizon(sources: MetricSources) -> Iterator[Sample]:
    if _budgets(sources):
        yield {}, sources.inputs.config.health.bootstrap_forecast_days * DAY


def _budgets(sources: MetricSources) -> list[dict]:
    """Each agent's figures: from its own warning, or from the summary of the others."""
    found = sources.detail_rows(BUDGET_KEY, "agents")
    return found + [r.details for r in sources.results if r.key.startswith(BUDGET_KEY + ":")]


def _rotations(sources: MetricSources) -> Iterator[Sample]:
    rows = dict(
        sources.inputs.state.connection.execute(
            "SELECT outcome, count(*) FROM rotations GROUP BY outcome"
        ).fetchall()
    )
    for outcome in ("rotated", "failed"):
        yield {"outcome": outcome}, rows.get(outcome, 0)


def _rotate_last_run(sources: MetricSources) -> Iterator[Sample]:
    runs = sources.inputs.state.last_runs("rotate", limit=1)
    if not runs or runs[0].finished_at is None:
        return
    summary = runs[0].summary
    for outcome in ("rotated", "failed", "postponed", "skipped"):
        value = summary.get(outcome)
        if isinstance(value, int):
            yield {"outcome": outcome}, value


def _compactions(index: int, sources: MetricSources) -> Iterator[Sample]:
    for agent_id, values in sorted(sources.compaction_totals.items()):
        yield {"agent": agent_id}, values[index]


def _deliveries(
    value: Callable[[Delivery], float | None], sources: MetricSources
) -> Iterator[Sample]:
    for receipt in sources.receipts:
        if receipt.last is not None and (sample := value(receipt.last)) is not None:
            yield {"agent": receipt.agent_id or "", "session": receipt.session_key}, sample


FAMILIES: tuple[Family, ...] = (
    Family("memwarden_build_info", "memwarden's version (always 1).", _build_info),
    Family(
        "memwarden_health_check_status",
        "Status of each health check: 0 ok, 1 warning, 2 critical.",
        _check_status,
    ),
    Family(
        "memwarden_alerts_open",
        "Health checks not ok in this run, by severity.",
        _alerts_open,
    ),
    Family(
        "memwarden_alerts_undelivered",
        "Alerts waiting for delivery, by sink (Slack messages, Alertmanager alerts).",
        _undelivered,
    ),
    Family(
        "memwarden_health_last_run_timestamp_seconds",
        "When this health run finished its checks (Unix time).",
        _health_last_run,
    ),
    Family(
        "memwarden_job_last_success_timestamp_seconds",
        "When each memwarden job last succeeded (Unix time); for health, this run.",
        _last_success,
    ),
    Family(
        "memwarden_job_interval_seconds",
        "How often each scheduled memwarden job runs (schedule.<job>_minutes).",
        _interval,
    ),
    Family(
        "memwarden_session_context_tokens",
        "Context size of a conversation's last model call, in tokens.",
        partial(_context, "tokens"),
    ),
    Family(
        "memwarden_session_context_window_tokens",
        "Context window of a conversation's model, in tokens.",
        partial(_context, "window"),
    ),
    Family(
        "memwarden_session_context_ratio",
        "Last context size of a conversation over its model's context window.",
        partial(_context, "ratio"),
    ),
    Family(
        "memwarden_memory_bytes",
        "Size of an agent's memory (MEMORY.md and memory/, archive/ excluded), in bytes.",
        partial(_memory, "bytes"),
    ),
    Family(
        "memwarden_memory_files",
        "Number of an agent's memory files (MEMORY.md and memory/, archive/ excluded).",
        partial(_memory, "files"),
    ),
    Family(
        "memwarden_memory_largest_file_bytes",
        "Size of an agent's largest memory file, in bytes.",
        partial(_memory, "largest"),
    ),
    Family(
        "memwarden_memory_file_limit_bytes",
        "Size above which a memory file is oversized (health.memory_file_warning_kb), in bytes.",
        _memory_limit,
    ),
    Family(
        "memwarden_bootstrap_file_chars",
        "Length of each bootstrap file of an agent's workspace, in characters (UTF-16 units).",
        _bootstrap_files,
    ),
    Family(
        "memwarden_bootstrap_total_chars",
        "Length of an agent's bootstrap files together, each counted up to the per-file cap.",
        _bootstrap_total,
    ),
    Family(
        "memwarden_bootstrap_max_chars",
        "The gateway's per-file bootstrap cap of an agent (bootstrapMaxChars).",
        partial(_bootstrap_cap, 0),
    ),
    Family(
        "memwarden_bootstrap_total_max_chars",
        "The gateway's total bootstrap cap of an agent (bootstrapTotalMaxChars).",
        partial(_bootstrap_cap, 1),
    ),
    Family(
        "memwarden_bootstrap_file_growth_chars_per_second",
        "Growth of a gateway bootstrap file of an agent over health.bootstrap_growth_days, in "
        "characters per second (none when unknown: less than a day of history since a break).",
        partial(_budget_files, "growth_per_day", 1 / DAY),
    ),
    Family(
        "memwarden_bootstrap_file_seconds_until_truncation",
        "Time until the gateway cuts a bootstrap file at its growth rate (0: over the per-file "
        "cap now; none when it is not growing).",
        partial(_budget_files, "days_left", DAY),
    ),
    Family(
        "memwarden_bootstrap_total_growth_chars_per_second",
        "Growth of an agent's bootstrap files together (the sum of their rates), in characters "
        "per second.",
        partial(_budget_total, "growth_per_day", 1 / DAY),
    ),
    Family(
        "memwarden_bootstrap_total_seconds_until_truncation",
        "Time until an agent's bootstrap files together pass the total cap at their growth rate "
        "(0: over it now; none when they are not growing).",
        partial(_budget_total, "days_left", DAY),
    ),
    Family(
        "memwarden_bootstrap_forecast_horizon_seconds",
        "How far ahead health warns of a bootstrap truncation (health.bootstrap_forecast_days).",
        _budget_horizon,
    ),
    Family(
        "memwarden_compactions_total",
        "Compactions of an agent's conversations the compaction watch recorded.",
        partial(_compactions, 0),
        "counter",
    ),
    Family(
        "memwarden_compactions_lossy_total",
        "Recorded compactions that lost items (marked items, open TODOs, file paths) or left a "
        "near-empty summary.",
        partial(_compactions, 1),
        "counter",
    ),
    Family(
        "memwarden_compaction_lost_items_total",
        "Items recorded compactions dropped from the model's context (kept in the daily log).",
        partial(_compactions, 2),
        "counter",
    ),
    Family(
        "memwarden_handoff_delivery_timestamp_seconds",
        "When the bootstrap hook last injected into a conversation (Unix time), by its receipt.",
        partial(_deliveries, attrgetter("at")),
    ),
    Family(
        "memwarden_handoff_delivery_whole",
        "1 when a conversation's last bootstrap carried its handoff whole, 0 when the handoff "
        "was cut, left out or missing.",
        partial(_deliveries, lambda last: last.handoff == "whole"),
    ),
    Family(
        "memwarden_handoff_delivery_chars",
        "Length of the handoff a conversation's last bootstrap carried, as the gateway counts it.",
        partial(_deliveries, attrgetter("handoff_chars")),
    ),
    Family(
        "memwarden_rotations_total",
        "Rotations memwarden attempted, by outcome (the rotation lineage).",
        _rotations,
        "counter",
    ),
    Family(
        "memwarden_rotate_last_run_sessions",
        "Sessions of the last rotate run by outcome (postponed: wanted but not done this run).",
        _rotate_last_run,
    ),
)
