"""The stat manifest: what each file looked like when the last snapshot hashed it.

It lets a snapshot of an unchanged folder end after one directory walk, without reading a file or
starting git. A file is trusted unchanged only when its stat matches and it was last modified
well before it was hashed (as git does for "racily clean" index entries): on a file system with
coarse timestamps a write in the same tick as the hashing would otherwise go unseen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from memwarden.files import atomic_write
from memwarden.history.scan import FileStat

VERSION = 1
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


def load_manifest(path: Path) -> Manifest | None:
    """Return the manifest at `path`, or None when missing, unreadable or of another format."""
    try:
        raw = orjson.loads(path.read_bytes())
        if raw.get("version") != VERSION:
            return None
        files = {name: (FileStat(*values[:4]), values[4]) for name, values in raw["files"].items()}
        return Manifest(raw["snapshot_id"], raw["commit"], int(raw["hashed_at_ns"]), files)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


def save_manifest(path: Path, manifest: Manifest) -> None:
    """Write the manifest atomically (0600)."""
    document = {
        "version": VERSION,
        "snapshot_id": manifest.snapshot_id,
        "commit": manifest.commit,
        "hashed_at_ns": manifest.hashed_at_ns,
        "files": {
            name: [stat.size, stat.mtime_ns, stat.ctime_ns, stat.inode, sha]
            for name, (stat, sha) in sorted(manifest.files.items())
        },
    }
    atomic_write(path, orjson.dumps(document))
