"""The gateway's session stores on disk, as rotation needs them: the record of a session to
checkpoint, and the context size of a session whose gateway count is stale."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from memwarden.process.errors import MemwardenError, StoreError
from memwarden.rotation.policy import transcript_context

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent
    from memwarden.openclaw.gateway import SessionRow
    from memwarden.openclaw.layout import Deployment
    from memwarden.openclaw.sessions import SessionRecord
    from memwarden.rotation.policy import Decision, TranscriptContext

log = logging.getLogger("memwarden.rotate")

CONFIRM_TAIL_ENTRIES = 50


class SessionStores:
    """Each agent's session store, read once per run."""

    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment
        self._records: dict[str, dict[str, SessionRecord]] = {}

    def session(self, decision: Decision) -> tuple[Agent, SessionRecord]:
        """Given a decision, return the agent and the store record of its session.

        Raise MemwardenError if the agent or the session is not in the state dir, StoreError
        if the store cannot be read.
        """
        agent = self.deployment.agent(decision.agent_id or "")
        if agent is None:
            raise MemwardenError(
                f"agent {decision.agent_id!r} is not in {self.deployment.state_dir}: "
                "is --state-dir the gateway's state dir?"
            )
        record = self._by_key(agent).get(decision.key.lower())
        if record is None:
            raise MemwardenError(
                f"{decision.key} is not in {agent.id}'s session store: cannot checkpoint it"
            )
        return agent, record

    def confirm_tokens(self, row: SessionRow) -> TranscriptContext | None:
        """Given a row with a stale count, return the context size its transcript shows, or None.

        None also when the session is not on disk, moved to another id, or cannot be read (a
        warning is logged).
        """
        # lazy: a transcript is read only for a stale count or a reset
        from memwarden.openclaw.transcripts import read_tail

        agent = self.deployment.agent(row.agent_id or "")
        try:
            record = self._by_key(agent).get(row.key.lower()) if agent else None
            if record is None or record.transcript is None or record.session_id != row.session_id:
                return None
            tail = read_tail(record.transcript, CONFIRM_TAIL_ENTRIES)
        except (StoreError, OSError) as error:
            log.warning("%s: cannot read its transcript to confirm tokens: %s", row.key, error)
            return None
        return transcript_context(tail.entries)  # a reset line among them: 0

    def _by_key(self, agent: Agent) -> dict[str, SessionRecord]:
        # lazy: a store is read only for a stale count or a reset
        from memwarden.openclaw.sessions import load_sessions

        if agent.id not in self._records:
            records = load_sessions(agent)
            self._records[agent.id] = {record.key.lower(): record for record in records}
        return self._records[agent.id]
