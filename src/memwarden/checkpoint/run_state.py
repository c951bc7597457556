"""Build what every session of a run shares, from the job's context."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memwarden.checkpoint.session import RunState
    from memwarden.runtime import JobContext


def build_run_state(context: JobContext, *, dry_run: bool, trigger: str) -> RunState:
    """Return what every session of a run shares: settings, redactor, zone, stored rows.

    Raise ConfigError if the redaction patterns or the time zone are invalid.
    """
    from memwarden.checkpoint.daily_log import resolve_timezone
    from memwarden.checkpoint.handoff_files import main_file_agents
    from memwarden.checkpoint.outcome import Settings
    from memwarden.checkpoint.positions import file_owners, load_agent_records, load_stored
    from memwarden.checkpoint.redact import build_redactor
    from memwarden.checkpoint.session import RunState
    from memwarden.checkpoint.unchanged import settings_key

    section = context.config.checkpoint
    stored = load_stored(context.state)
    timezone = context.config.general.timezone
    lock_folder = context.storage_dir / "locks"
    wait = context.config.history.lock_wait_seconds

    def memory_lock(agent_id: str):
        from memwarden.history.locking import memory_lock as history_lock

        return history_lock(lock_folder, agent_id, wait)

    return RunState(
        settings=Settings.from_config(section),
        redactor=build_redactor(section.redact_patterns, enabled=section.redact),
        zone=resolve_timezone(timezone),
        now=context.now(),
        stored=stored,
        owners=file_owners(stored.values()),
        agent_records=load_agent_records(context.state),
        settings_key=settings_key({**section.values, "general.timezone": timezone}),
        dry_run=dry_run,
        trigger=trigger,
        memory_lock=memory_lock,
        main_file_agents=main_file_agents(context.deployment.agents),
    )
