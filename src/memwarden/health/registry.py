"""Every health check, in the order people read them (gateway first).

Apart from `memwarden.health.checks`, whose modules import what they share from it.
"""

from __future__ import annotations

from memwarden.health.checks import (
    Check,
    bootstrap_budget,
    compactions,
    config_drift,
    context,
    cron,
    deliveries,
    disk,
    gateway,
    jobs,
    memory_files,
    memory_rewrite,
    process,
    state_dir,
    volume,
)


def registry() -> list[Check]:
    """Return every check, in the order people read them (gateway first)."""
    return [
        Check(state_dir.KEY, state_dir.check_state_dir),
        Check("gateway", gateway.check_gateway),
        Check("gateway.process", process.check_process),
        Check("disk", disk.check_disk),
        Check("transcripts.volume", volume.check_volume),
        Check("memory.oversized", memory_files.check_memory_files),
        Check("memory.rewrite", memory_rewrite.check_memory_rewrite),
        Check(compactions.KEY, compactions.check_compactions),
        Check(bootstrap_budget.KEY, bootstrap_budget.check_bootstrap_budget),
        Check(deliveries.KEY, deliveries.check_deliveries),
        Check("cron.errors", cron.check_cron),
        Check("jobs", jobs.check_jobs),
        Check("context.pressure", context.check_context),
        Check("config.drift", config_drift.check_config_drift),
    ]
