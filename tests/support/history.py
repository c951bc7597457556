"""Helpers shared by the memory-history tests."""

from __future__ import annotations

from pathlib import Path


def write_tree(memory: Path, files: dict[str, bytes]) -> None:
    """Write `files` (relative path -> bytes) under `memory`, creating folders."""
    for name, data in files.items():
        (memory / name).parent.mkdir(parents=True, exist_ok=True)
        (memory / name).write_bytes(data)


def snapshot_contents(context, snap) -> dict[str, bytes]:
    """Return the files a snapshot holds, {workspace-relative path: bytes}, read from its store."""
    from memwarden.history.store import snapshot_tree, store_of

    tree = snapshot_tree(context, snap)
    blobs = store_of(context, snap).blobs(tree.values())
    return {path: blobs[sha] for path, sha in tree.items()}


def memory_paths(files: dict[str, bytes]) -> dict[str, bytes]:
    """Given files relative to memory/, return them relative to the workspace."""
    return {f"memory/{name}": data for name, data in files.items()}
