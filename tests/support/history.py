"""Helpers shared by the memory-history tests."""

from __future__ import annotations

from pathlib import Path


def write_tree(memory: Path, files: dict[str, bytes]) -> None:
    """Write `files` (relative path -> bytes) under `memory`, creating folders."""
    for name, data in files.items():
        (memory / name).parent.mkdir(parents=True, exist_ok=True)
        (memory / name).write_bytes(data)
