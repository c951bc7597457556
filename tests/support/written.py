"""What memwarden wrote, as bytes, for tests that look for what must never be there.

files = written_files(workspace / "memory", storage_dir)
everything = b"".join(files.values()) + history_objects(storage_dir)
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path


def written_files(*roots: Path) -> dict[Path, bytes]:
    """Return every file under `roots` with its bytes, except git's object files (compressed:
    read them with `history_objects`)."""
    return {
        path: path.read_bytes()
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and "objects" not in path.parts
    }


def history_objects(storage: Path) -> bytes:
    """Return every object of every git repository under `storage`, decompressed."""
    contents = b""
    for head in storage.rglob("HEAD"):
        if (head.parent / "objects").is_dir():
            contents += subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(head.parent),
                    "cat-file",
                    "--batch-all-objects",
                    "--batch",
                ],
                capture_output=True,
                check=True,
            ).stdout
    return contents


def is_private(path: Path) -> bool:
    """Return True when only the owner may read or write `path`."""
    return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
