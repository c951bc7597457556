"""Write a workspace's bootstrap manifest: its conversations' handoffs and, when kept, INDEX.md.

The last stage of indexing a workspace, and all that a checkpoint, a rotation or an archived
handoff needs redone: read the handoff files (ACTIVE_CONTEXT.md, memory/sessions/*.md), keep
those that are the files of the sessions they name, and write the manifest when it changed.
With nothing to inject, an existing manifest is removed and none is created.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.agent_memory.handoff_files import read_handoffs
from memwarden.fs.files import atomic_write, ensure_dir, read_text_if_exists
from memwarden.indexing.manifest import (
    INDEX_PATH,
    MANIFEST_NAME,
    InjectedFile,
    build_manifest,
    choose_handoffs,
)

if TYPE_CHECKING:
    from memwarden.indexing.targets import Target
    from memwarden.process.runtime import JobContext


def refresh_manifest(
    context: JobContext,
    target: Target,
    index_chars: int | None,
    keeping_main_file: Collection[str],
    *,
    dry_run: bool,
) -> tuple[str, list[InjectedFile], list[str]]:
    """Given a workspace, the length of its INDEX.md (None: INDEX.md is not injected) and the
    agents whose main session has ACTIVE_CONTEXT.md, write its manifest when its content
    changed. Return what was done (written, would_write, unchanged, removed, would_remove or
    none), the handoffs it lists and why other handoff files are left out. Raise OSError if a
    handoff cannot be read."""
    memory = target.workspace / "memory"
    found = read_handoffs(memory, target.agents) if memory.is_dir() else []
    injected, left_out = choose_handoffs(found, keeping_main_file, target.workspace)
    handoffs = injected if context.config.index.inject_active_context else []
    files = list(handoffs)
    if index_chars is not None:
        files.append(InjectedFile(INDEX_PATH, index_chars))
    path = memory / MANIFEST_NAME
    current = read_text_if_exists(path)
    if not files:
        return _remove(path, current, dry_run), [], left_out
    payload = build_manifest(
        agents=target.agents,
        max_chars=target.max_chars,
        total_max_chars=target.total_max_chars,
        group_chats=context.config.index.inject_in_group_chats,
        files=files,
    )
    if current is not None and current.encode() == payload:
        return "unchanged", handoffs, left_out
    if dry_run:
        return "would_write", handoffs, left_out
    if not memory.is_dir():  # else the write's own check covers the folder on the way
        ensure_dir(memory, root=target.workspace)
    atomic_write(path, payload, root=target.workspace, real_root=Path(target.real))
    return "written", handoffs, left_out


def _remove(path: Path, current: str | None, dry_run: bool) -> str:
    if current is None:
        return "none"
    if not dry_run:
        path.unlink()
    return "would_remove" if dry_run else "removed"
