"""The stat manifest: what each file looked like when the agent's last snapshot hashed it.

It lets a snapshot of an unchanged workspace end after one directory walk, without reading a
file or starting git. A file is trusted unchanged only when its stat matches and it was last
modified well before it was hashed (as git does for "racily clean" index entries): on a file
system with coarse timestamps a write in the same tick as the hashing would otherwise go unseen.
Manifests live in the state database (table `history_manifests`), written in the transaction
that records the snapshot, so they never disagree with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import orjson

from memwarden.history.scan import FileStat
from memwarden.store.state import StateDB

# Coarsest timestamp granularity of common file systems (FAT: 2 s).
RACY_MARGIN_NS = 2_000_000_000


@dataclass
class Manifest:
    """The last snapshot's id and commit, when it hashed, and {path: (stat, blob id)}."""

    snapshot_id: str | None
    commit: str | None
    hashed_at_ns: int
    files: dict[str, tuple[FileStat, str]] = field(default_factory=dict)

    def shas(self) -> dict[str, str]:
        return {path: sha for path, (_, sha) in self.files.items()}


def trusted_shas(current: Mapping[str, FileStat], manifest: Manifest | None) -> dict[str, str]:
    """Given the scanned files and the manifest, return {path: blob id} for the unchanged ones."""
    if manifest is None:
        return {}
    trusted = {}
    for path, now in current.items():
        recorded = manifest.files.get(path)
        if recorded is None or recorded[0] != now:
            continue
        if now.mtime_ns + RACY_MARGIN_NS >= manifest.hashed_at_ns:
            continue
        trusted[path] = recorded[1]
    return trusted


def load_manifests(state: StateDB, agent_ids: Iterable[str]) -> dict[str, Manifest]:
    """Return the manifests of these agents that exist, by agent id."""
    wanted = set(agent_ids)
    rows = state.connection.execute(
        "SELECT agent_id, snapshot_id, commit_sha, hashed_at_ns, files_json FROM history_manifests"
    )
    return {
        agent_id: Manifest(snapshot_id, commit, hashed_at_ns, _files(files_json))
        for agent_id, snapshot_id, commit, hashed_at_ns, files_json in rows
        if agent_id in wanted
    }


def save_manifests(connection: sqlite3.Connection, manifests: Mapping[str, Manifest]) -> None:
    """Write the manifests, {agent id: manifest} (in the caller's transaction)."""
    connection.executemany(
        "INSERT INTO history_manifests VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE "
        "SET snapshot_id = excluded.snapshot_id, commit_sha = excluded.commit_sha, "
        "hashed_at_ns = excluded.hashed_at_ns, files_json = excluded.files_json",
        [
            (
                agent_id,
                manifest.snapshot_id,
                manifest.commit,
                manifest.hashed_at_ns,
                orjson.dumps(
                    {name: [*stat, sha] for name, (stat, sha) in sorted(manifest.files.items())}
                ).decode(),
            )
            for agent_id, manifest in manifests.items()
        ],
    )


def _files(files_json: str) -> dict[str, tuple[FileStat, str]]:
    """Given `files_json` as `save_manifests` wrote it ({path: [size, mtime_ns, ctime_ns, inode,
    blob id]}), return {path: (stat, blob id)}."""
    # Plain tuples compare equal to FileStat and cost less to build, thousands at a time.
    raw = orjson.loads(files_json)
    return {name: (tuple(values[:4]), values[4]) for name, values in raw.items()}
