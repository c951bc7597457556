"""Helpers shared by the memory-history tests."""

from __future__ import annotations

from pathlib import Path


def config_with(overrides: dict):
    """Return the default Config where the given dotted keys (already validated values) win."""
    from memwarden.settings.config import Config, defaults

    base = defaults()
    values = base.values | overrides
    return Config(values, base.sources | {key: "command line" for key in overrides})


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


def context_with_failing_fast_import(state_dir: Path, folder: Path, fast_import: str):
    """Return a JobContext for `state_dir` whose git runs the shell `fast_import` instead of
    `git fast-import` (every other git command is the real one)."""
    import os

    from memwarden.process.runtime import JobContext

    wrapper = folder / "git-whose-fast-import-fails"
    wrapper.write_text(
        f'#!/bin/sh\nif [ "$1" = fast-import ]; then {fast_import}; fi\nexec git "$@"\n'
    )
    wrapper.chmod(0o700)
    config = config_with({"history.git": str(wrapper)})
    return JobContext(config=config, env=dict(os.environ), state_dir_override=state_dir)
