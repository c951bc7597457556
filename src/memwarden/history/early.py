"""A run's snapshots begun before its last writes: the shared store locked, `git fast-import`
started and the files that changed since the stat manifest sent to it as blobs, so that git
hashes and compresses them while the run refreshes INDEX.md and the bootstrap manifests.
`snapshot_agents(..., early=...)` then takes the snapshots in that same git process and reads
again only the files whose stat moved since they were sent.

Nothing is committed here and no memory lock is held. A file written after it was sent has
another stat (memwarden's atomic writes give it another inode), so the snapshot reads it again.
One rewritten in place within the file system's timestamp granularity, same size, goes unseen
until the next snapshot, which reads it again: the manifest records the time of the sending as
the time of hashing (manifest.py: racy files), as it does today for a write after the read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memwarden.errors import MemwardenError, UnsafePathError
from memwarden.history.git import BatchImport, GitStore, blob_sha
from memwarden.history.manifest import Manifest, load_manifests, trusted_shas
from memwarden.history.model import MEMORY_PREFIX
from memwarden.history.scan import FileStat, read_file, scan_workspace
from memwarden.history.store import start_import
from memwarden.runtime import JobContext

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent


@dataclass(frozen=True)
class SentFiles:
    """One agent's files sent ahead: the time before its scan, {path: (stat, blob id)}, and the
    bytes of the root files among them (bootstrap lengths and the rewrite guard read them)."""

    hashed_at_ns: int
    files: dict[str, tuple[FileStat, str]]
    root_bytes: dict[str, bytes]


class EarlyBatch:
    """The git process of a run's snapshots, started early, and what was sent to it by agent.

    Every failure (the store locked by retention, git missing or failing, a workspace that
    cannot be read) only means less was sent: the snapshots then do it all, and say why.
    """

    def __init__(self, context: JobContext) -> None:
        self.context = context
        self.store: GitStore | None = None
        self.importer: BatchImport | None = None
        self.sent: dict[str, SentFiles] = {}
        self._resources = ExitStack()
        self._given_up = False

    def send(self, agents: Sequence[Agent]) -> None:
        """Send the changed files of the agents' workspaces, in id order; on the first call,
        lock the store (shared, without waiting) and start git. After a failure, nothing more
        is sent."""
        if self._given_up:
            return
        try:
            importer = self.importer or self._start()
            roots = tuple(self.context.config.history.root_files)
            manifests = load_manifests(self.context.state, (agent.id for agent in agents))
            for agent in sorted(agents, key=lambda agent: agent.id):
                sent = _send_agent(importer, agent, roots, manifests.get(agent.id))
                if sent is not None:
                    self.sent[agent.id] = sent
            importer.flush()
        except (MemwardenError, OSError):
            self.close()  # what was sent may be lost with git: the snapshots send it all
            self._given_up = True

    def close(self) -> None:
        """Stop git if nothing committed through it, release the store; forget what was sent."""
        self._resources.close()
        self.importer = None
        self.sent.clear()

    def _start(self) -> BatchImport:
        # Never waits for the store's lock (retention holds it): the snapshots go on alone.
        self.store, self.importer = start_import(self.context, self._resources, wait=False)
        return self.importer


def _send_agent(
    importer: BatchImport, agent: Agent, roots: tuple[str, ...], manifest: Manifest | None
) -> SentFiles | None:
    """Send the files of the agent's workspace that changed since its manifest; return what was
    sent (None when the workspace cannot be read: the snapshot finds it again and says why)."""
    hashed_at_ns = time.time_ns()
    try:
        scan = scan_workspace(agent.workspace, roots)
    except (MemwardenError, OSError):
        return None
    known = trusted_shas(scan.files, manifest)
    # Blobs of the manifest are in the store when its commit is (not an upgraded history).
    stored = manifest.files if manifest is not None and manifest.commit is not None else {}
    files: dict[str, tuple[FileStat, str]] = {}
    root_bytes: dict[str, bytes] = {}
    folder = os.fspath(agent.workspace)
    for path, stat in scan.files.items():
        if path in known:
            continue
        try:
            data = read_file(os.path.join(folder, path))
        except (OSError, UnsafePathError):
            continue  # read again (and reported) by the snapshot
        sha = blob_sha(data)
        if path not in stored or stored[path][1] != sha:
            importer.add_blob(data)  # else named by id: the store has it
        files[path] = (stat, sha)
        if not path.startswith(MEMORY_PREFIX):
            root_bytes[path] = data
    return SentFiles(hashed_at_ns, files, root_bytes)
