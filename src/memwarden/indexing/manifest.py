"""The bootstrap manifest: what the memory-index-inject hook injects for a workspace.

`memory/.memwarden-bootstrap.json` is written by `memwarden index` when the memory pool passes the
threshold, and removed when it no longer does. The hook only reads it: every decision (threshold,
which files, the cap) is made here. Paths are relative to the workspace.

    {"version": 1, "generator": "memwarden index", "agents": ["main"],
     "maxChars": 20000, "totalMaxChars": 60000, "groupChats": false,
     "files": [{"name": "memory/INDEX.md", "path": "memory/INDEX.md", "chars": 8123}, ...]}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

MANIFEST_NAME = ".memwarden-bootstrap.json"
MANIFEST_VERSION = 1
INDEX_PATH = "memory/INDEX.md"
ACTIVE_CONTEXT_PATH = "memory/ACTIVE_CONTEXT.md"


@dataclass(frozen=True)
class InjectedFile:
    path: str
    chars: int | None


def build_manifest(
    *,
    agents: Sequence[str],
    max_chars: int,
    total_max_chars: int,
    group_chats: bool,
    files: Sequence[InjectedFile],
) -> bytes:
    """Return the manifest's bytes (stable key order, so an unchanged manifest is not rewritten)."""
    manifest = {
        "version": MANIFEST_VERSION,
        "generator": "memwarden index",
        "agents": list(agents),
        "maxChars": max_chars,
        "totalMaxChars": total_max_chars,
        "groupChats": group_chats,
        "files": [{"name": file.path, "path": file.path, "chars": file.chars} for file in files],
    }
    return orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
