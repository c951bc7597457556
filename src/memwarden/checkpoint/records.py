"""What a checkpoint run reads from the state DB and commits to it, as plain data.

`StoredSession` is the row a previous run left for one session key (consumer "checkpoint" in
`read_positions`); `PositionUpdate` the row a run writes for it; `EventRecord` a timeline event;
`AgentRecord` what a run read for one agent and concluded for its sessions (see `unchanged`).
Loaded and saved by `positions`, as is each conversation's accumulated memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from memwarden.openclaw.transcripts import ReadPosition

# [inode, size, mtime in ns] of a file, or None when it does not exist (see `unchanged`).
Signature = list[int] | None
# The fields of an AgentRecord kept as its JSON data.
_RECORD_DATA = ("era", "settings", "signatures", "sessions", "reason")


class StoredSession(NamedTuple):
    """The row a previous run left for one session key."""

    agent_id: str
    session_key: str
    session_id: str
    position_json: str | None
    last_entry_at: float | None
    data: Mapping[str, Any]
    # When the row was last written: a run commits a session only if it is still the same.
    updated_at: float | None = None

    @property
    def position(self) -> ReadPosition | None:
        """The stored read position, or None when the row holds none that is valid."""
        # lazy: the fast skip reads no position
        from memwarden.openclaw.transcripts import ReadPosition

        try:
            return ReadPosition.from_json(self.position_json) if self.position_json else None
        except ValueError:
            return None


class PositionUpdate(NamedTuple):
    """A row to write for one session at the end of a run."""

    agent_id: str
    session_key: str
    session_id: str
    position: dict[str, int] | None
    last_entry_at: float | None
    data: dict[str, Any]
    # What the conversation holds (`Conversation.to_json`), written with the position; None
    # leaves the stored one as it is.
    conversation: dict[str, Any] | None = None


class EventRecord(NamedTuple):
    """A timeline event to record at the end of a run."""

    type: str
    agent_id: str
    session_key: str | None
    session_id: str | None
    data: dict[str, Any]


class AgentRecord(NamedTuple):
    """What the last run read for one agent and what it concluded for each chosen session."""

    agent_id: str
    era: str
    settings: str
    signatures: dict[str, Signature]
    sessions: list[dict[str, str]]
    reason: str = ""
    valid_until: float | None = None
    recorded_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The record's data as kept (its id and times are columns of their own)."""
        return {name: getattr(self, name) for name in _RECORD_DATA}

    @classmethod
    def from_row(
        cls, agent_id: str, data: Mapping[str, Any], valid_until: float | None, updated_at: float
    ) -> AgentRecord:
        return cls(
            agent_id,
            str(data.get("era", "")),
            str(data.get("settings", "")),
            dict(data.get("signatures") or {}),
            list(data.get("sessions") or []),
            str(data.get("reason", "")),
            valid_until,
            updated_at,
        )
