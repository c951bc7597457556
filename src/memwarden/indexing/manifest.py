"""The bootstrap manifest: what the memory-index-inject hook injects for a workspace.

`memory/.memwarden-bootstrap.json` is refreshed by `memwarden checkpoint` (after it writes a
handoff), `memwarden rotate` (before it resets a session), `memwarden index` and `maintain`, at
any memory size. The hook only reads it: every decision (which files, the cap, which sessions)
is made here. Paths are relative to the workspace.

    {"version": 3, "generator": "memwarden", "agents": ["main"],
     "maxChars": 20000, "totalMaxChars": 60000, "groupChats": false,
     "files": [{"name": "memory/ACTIVE_CONTEXT.md", "path": "memory/ACTIVE_CONTEXT.md",
                "session": "agent:main:main"},
               {"name": "memory/sessions/main.telegram.direct.42.md", "path": …,
                "session": "agent:main:telegram:direct:42"},
               {"name": "memory/INDEX.md", "path": "memory/INDEX.md", "chars": 8123}]}

A file with a `session` (a conversation's handoff) is injected only into that session, and only
while the file itself names that session in its provenance line: the hook reads it there when it
injects, so a handoff rewritten after the manifest is injected as it is now, and a file that came
to hold another conversation is injected nowhere. Nothing in the manifest changes when a handoff
is rewritten, so it is rewritten only when a conversation gains or loses its handoff (or
INDEX.md changes). INDEX.md is listed only when the index job keeps one (the pool passes
`index.threshold_kb`). Handoffs come first: the gateway cuts the files injected last when the
bootstrap passes its total cap, and the handoff is what the next turn resumes from. Version 3
dropped the digests of version 2; a hook of another version refuses the manifest.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import orjson

from memwarden.agent_memory.handoff_files import ACTIVE_CONTEXT, HandoffFile, is_file_of
from memwarden.openclaw.bootstrap import js_length

if TYPE_CHECKING:
    from memwarden.indexing.targets import Target

MANIFEST_NAME = ".memwarden-bootstrap.json"
MANIFEST_VERSION = 3
GENERATOR = "memwarden"
MEMORY_FOLDER = "memory"
INDEX_PATH = f"{MEMORY_FOLDER}/INDEX.md"
ACTIVE_CONTEXT_PATH = f"{MEMORY_FOLDER}/{ACTIVE_CONTEXT}"


class InjectedFile(NamedTuple):
    """A file for the hook; one with a `session` (a handoff) goes only to that session, while
    the file names it. `chars` is its length as the gateway counts it (in the manifest for
    INDEX.md only)."""

    path: str
    session: str | None = None
    chars: int | None = None


def choose_handoffs(
    found: Sequence[HandoffFile], keeping_main_file: Collection[str], workspace: Path
) -> tuple[list[InjectedFile], list[str]]:
    """Given the candidate files of a workspace's memory folder and the agents whose main
    session has ACTIVE_CONTEXT.md, return the handoffs to inject (each file that names its
    session and is the file that session is written to) and why others are left out, one line
    each; a file of `sessions/` that names no session is someone else's, passed over silently.
    """
    injected, left_out = [], []
    for handoff in found:
        path = f"{MEMORY_FOLDER}/{handoff.name}"
        if handoff.session is not None and is_file_of(
            handoff.name, handoff.session, keeping_main_file
        ):
            injected.append(InjectedFile(path, handoff.session, js_length(handoff.text)))
        elif handoff.session is not None:
            left_out.append(
                f"{workspace / path}: holds session `{handoff.session}`, whose handoff is "
                "another file (written by an earlier memwarden, or moved): not injected into "
                "any session"
            )
        elif handoff.name == ACTIVE_CONTEXT:
            left_out.append(
                f'{workspace / path}: names no session (no "> - session: `KEY`" line at its '
                "top, as the checkpoint writes it): the bootstrap hook will not inject it"
            )
    return injected, left_out


def build_manifest(target: Target, group_chats: bool, files: Sequence[InjectedFile]) -> bytes:
    """Given a workspace's target, whether to inject into group chats and the files, return the
    manifest's bytes (stable key order, so an unchanged manifest is not rewritten)."""
    manifest = {
        "version": MANIFEST_VERSION,
        "generator": GENERATOR,
        "agents": list(target.agents),
        "maxChars": target.max_chars,
        "totalMaxChars": target.total_max_chars,
        "groupChats": group_chats,
        "files": [_file_entry(file) for file in files],
    }
    return orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"


def _file_entry(file: InjectedFile) -> dict[str, object]:
    if file.session is not None:
        return {"name": file.path, "path": file.path, "session": file.session}
    return {"name": file.path, "path": file.path, "chars": file.chars}
