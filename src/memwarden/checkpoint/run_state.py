"""What every session of a run shares, built once from the job's context."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.agent_memory.handoff_files import handoff_name, main_file_agents
from memwarden.checkpoint.commit.positions import file_owners, load_agent_records, load_stored
from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.checkpoint.read.unchanged import settings_key
from memwarden.checkpoint.records import AgentRecord, StoredSession

if TYPE_CHECKING:
    from types import SimpleNamespace

    from memwarden.checkpoint.commit.staging import AgentFiles, Writer
    from memwarden.checkpoint.digest.redact import Redactor
    from memwarden.openclaw.agents import Agent
    from memwarden.process.runtime import JobContext


@dataclass
class RunState:
    """What every session of one run shares."""

    settings: SimpleNamespace  # the `checkpoint.*` options (`config.checkpoint`)
    redactor: Redactor
    zone: tzinfo | None
    now: datetime
    stored: dict[tuple[str, str], StoredSession]
    owners: dict[tuple[str, str], tuple[str, str]]
    # The agents whose main session is written to ACTIVE_CONTEXT.md; see
    # handoff_files.main_file_agents.
    main_file_agents: frozenset[str]
    # memwarden's state database, where each conversation's memory is loaded from.
    state_path: Path
    # What the last runs recorded per agent, and the digest of the settings they ran with.
    agent_records: dict[str, AgentRecord] = field(default_factory=dict)
    settings_key: str = ""
    dry_run: bool = False
    trigger: str = "run"
    # The run's temp files (None in a dry run), and the writes staged for the agent at hand.
    writer: Writer | None = None
    files: AgentFiles | None = None
    # The gateway's bootstrap caps per agent id: (bootstrapMaxChars, bootstrapTotalMaxChars).
    bootstrap_caps: dict[str, tuple[int, int]] = field(default_factory=dict)

    def watches(self, agent_id: str) -> bool:
        """Return True when an earlier run checkpointed the agent: a conversation of it that no
        run has read yet began since, and is read from its first line."""
        return agent_id in self.agent_records or any(
            stored.agent_id == agent_id for stored in self.stored.values()
        )

    def staged_files(self) -> AgentFiles:
        """Return the writes staged for the agent at hand. Raise RuntimeError outside an agent's
        checkpoint (a caller that forgot `AgentFiles`): nothing would be written."""
        if self.files is None:
            raise RuntimeError("checkpoint: no AgentFiles for this agent's writes")
        return self.files

    @property
    def generated_at(self) -> str:
        return self.now.isoformat(timespec="seconds").replace("+00:00", "Z")

    def handoff_name(self, agent: Agent, session_key: str) -> str:
        """Return the file (relative to memory/) the agent's session `session_key` is written to."""
        return handoff_name(session_key, keeps_main_file=agent.id in self.main_file_agents)


def build_run_state(
    context: JobContext, *, dry_run: bool, trigger: str, writer: Writer | None = None
) -> RunState:
    """Return what every session of a run shares: settings, redactor, zone, stored rows.

    Raise ConfigError if the redaction patterns or the time zone are invalid.
    """
    section = context.config.checkpoint
    stored = load_stored(context.state)
    timezone = context.config.general.timezone
    return RunState(
        settings=section,
        redactor=build_redactor(section.redact_patterns, enabled=section.redact),
        zone=context.zone,
        now=context.now(),
        stored=stored,
        owners=file_owners(stored.values()),
        agent_records=load_agent_records(context.state),
        settings_key=settings_key({**vars(section), "general.timezone": timezone}),
        dry_run=dry_run,
        trigger=trigger,
        main_file_agents=main_file_agents(context.deployment.agents),
        writer=None if dry_run else writer,
        state_path=context.state.path,
        bootstrap_caps={
            agent.id: context.deployment.bootstrap_caps(agent.id)
            for agent in context.deployment.agents
        },
    )
