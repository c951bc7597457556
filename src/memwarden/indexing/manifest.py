"""The bootstrap manifest: what the memory-index-inject hook injects for a workspace.

`memory/.memwarden-bootstrap.json` is written by `memwarden index` when the memory pool passes the
threshold, and removed when it no longer does. The hook only reads it: every decision (threshold,
which files, the cap, which sessions) is made here. Paths are relative to the workspace.

    {"version": 2, "generator": "memwarden index", "agents": ["main"],
     "maxChars": 20000, "totalMaxChars": 60000, "groupChats": false,
     "files": [{"name": "memory/INDEX.md", "path": "memory/INDEX.md", "chars": 8123},
               {"name": "memory/ACTIVE_CONTEXT.md", "path": "memory/ACTIVE_CONTEXT.md",
                "chars": 2410, "session": "agent:main:main", "sha256": "9f86d0…"}]}

A file with a `session` is injected only into that session (never when it is null), and only
while its bytes are the ones the manifest describes (`sha256`): ACTIVE_CONTEXT.md holds one
conversation, which must not reach another peer's session, and a checkpoint may rewrite it from
another session before the manifest catches up. Version 2 added both; a hook of version 1
refuses the manifest (injects nothing) rather than inject ACTIVE_CONTEXT.md everywhere.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

MANIFEST_NAME = ".memwarden-bootstrap.json"
MANIFEST_VERSION = 2
INDEX_PATH = "memory/INDEX.md"
ACTIVE_CONTEXT_PATH = "memory/ACTIVE_CONTEXT.md"
# The provenance line of templates/checkpoint/active_context.md.j2: "> - session: `KEY` (id …".
_PROVENANCE_SESSION = re.compile(r"^> - session: `([^`\s]+)`")
_UNSCOPED_MAIN = "main"


@dataclass(frozen=True)
class InjectedFile:
    """A file for the hook; `private` ones go only to `session` (to none when it is None), and
    only while the file's SHA-256 is `sha256`."""

    path: str
    chars: int | None
    private: bool = False
    session: str | None = None
    sha256: str | None = None


def text_sha256(text: str) -> str:
    """Return the hex SHA-256 of `text` as UTF-8: the file's own bytes when it was valid UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def active_context_session(text: str, agents: Sequence[str]) -> str | None:
    """Given ACTIVE_CONTEXT.md and the agents sharing its workspace, return its session key.

    The key is the one of the provenance block checkpoint writes at the top of the file
    (`> - session: `agent:main:main` (id …`), lower-cased; a legacy unscoped `main` becomes
    `agent:<id>:main` when one agent uses the workspace. Only the first quoted block before the
    first section counts (the rest of the file quotes conversations). Return None when there is
    no such line (a template of one's own without it).
    """
    quoted = False
    for number, line in enumerate(text.splitlines()):
        if line.startswith(">"):
            quoted = True
            match = _PROVENANCE_SESSION.match(line)
            if match:
                key = match[1].lower()
                if key == _UNSCOPED_MAIN and len(agents) == 1:
                    return f"agent:{agents[0].lower()}:main"
                return key
        elif quoted or (number > 0 and line.startswith("#")):
            return None
    return None


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
        "files": [_file_entry(file) for file in files],
    }
    return orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"


def _file_entry(file: InjectedFile) -> dict[str, object]:
    entry: dict[str, object] = {"name": file.path, "path": file.path, "chars": file.chars}
    if file.private:
        entry["session"] = file.session
        entry["sha256"] = file.sha256
    return entry
