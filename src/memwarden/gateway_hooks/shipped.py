"""The hooks this memwarden ships, and the settings file install writes beside each of them."""

from __future__ import annotations

from pathlib import Path

import orjson

from memwarden.fs.resources import shipped
from memwarden.health.deliveries import FOLDER
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext
from memwarden.scheduling.host import pinned_environment

HOOK_NAMES = ("memory-index-inject", "session-summary")
HOOK_FILES = ("HOOK.md", "handler.js")
SETTINGS_FILE = "memwarden.json"
STARTS_EXECUTABLE = ("session-summary",)  # the hooks that run the settings' executable


def hook_sources(source: Path | None = None) -> Path:
    """Return the folder holding the hooks: `hooks/` of the memwarden checkout, else the copy a
    wheel install puts in `<prefix>/share/memwarden/hooks`.

    Raise UsageError if it does not hold both hooks.
    """
    folder = source or shipped("hooks", "memwarden/hooks")
    missing = [
        str(folder / name / file)
        for name in HOOK_NAMES
        for file in HOOK_FILES
        if not (folder / name / file).is_file()
    ]
    if missing:
        raise UsageError(
            f"hook sources not found: {', '.join(missing)}; reinstall memwarden "
            "(pip install . or pip install -e . from its repository)"
        )
    return folder


def hook_files(name: str, source: Path | None = None) -> dict[str, bytes]:
    """Return the files of the hook `name` this memwarden ships, by file name. Raise
    UsageError as `hook_sources` does."""
    folder = hook_sources(source) / name
    return {file: (folder / file).read_bytes() for file in HOOK_FILES}


def hook_settings(context: JobContext, executable: Path) -> bytes:
    """Return memwarden.json: the executable, --config, --state-dir and the environment the
    timers get (`pinned_environment`: never a secret), so a run a hook starts uses the storage,
    secrets file and folders the timers use; and the folder of the bootstrap hook's delivery
    receipts, `<storage>/deliveries`, which health reads."""
    environment = pinned_environment(
        context.env,
        storage_dir=context.storage.root,
        config_file=context.config.path,
        gateway_state_dir=context.gateway_state_dir,
    )
    settings = {
        "executable": str(executable),
        "config": str(context.config.path.resolve()) if context.config.path else None,
        "stateDir": str(context.gateway_state_dir),
        "environment": dict(environment),
        "deliveries": str(context.storage_dir / FOLDER),
    }
    return orjson.dumps(settings, option=orjson.OPT_INDENT_2) + b"\n"


def shipped_files(name: str) -> dict[str, bytes]:
    """Return `hook_files(name)`; none when this install holds no hook sources (`memwarden
    install hooks` says so)."""
    try:
        return hook_files(name)
    except UsageError:
        return {}


def installed_setting(folder: Path, key: str) -> str | None:
    """Return a text an installed hook's memwarden.json sets (`executable`, the memwarden it
    starts; `deliveries`, the folder of its delivery receipts), if it sets one."""
    raw = current_bytes(folder / SETTINGS_FILE)
    try:
        settings = orjson.loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        return None
    value = settings.get(key) if isinstance(settings, dict) else None
    return value if isinstance(value, str) and value else None


def current_bytes(path: Path) -> bytes | None:
    """Return a file's bytes; None when it is missing, unreadable or a symlink."""
    try:
        return path.read_bytes() if not path.is_symlink() else None
    except OSError:
        return None
