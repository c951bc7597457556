"""Where an agent's history lives: `<storage_dir>/history/<agent id>/` (git store and manifest)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memwarden.history.git import SNAPSHOT_REFS, GitStore
from memwarden.history.locking import memory_lock
from memwarden.runtime import JobContext


@dataclass(frozen=True)
class AgentHistory:
    """One agent's history folder: the bare repository and the stat manifest."""

    agent_id: str
    root: Path
    git: GitStore

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"


def agent_history(context: JobContext, agent_id: str) -> AgentHistory:
    root = context.storage_dir / "history" / agent_id
    git = GitStore(root / "repo.git", context.config.history.git, context.env.get("PATH"))
    return AgentHistory(agent_id, root, git)


def snapshot_ref(snapshot_id: str) -> str:
    return SNAPSHOT_REFS + snapshot_id


@contextmanager
def locked_memory(context: JobContext, agent_id: str) -> Iterator[None]:
    """Hold the agent's memory lock, waiting up to `history.lock_wait_seconds`."""
    wait = context.config.history.lock_wait_seconds
    with memory_lock(context.storage_dir / "locks", agent_id, wait):
        yield
