"""Install and remove memwarden's gateway hooks (`memwarden install hooks` / `uninstall hooks`).

Install copies `hooks/memory-index-inject/` and `hooks/session-summary/` into the gateway's managed
hooks folder `<state>/hooks/`, writes `session-summary/memwarden.json` (the memwarden executable
and its --config / --state-dir, so the hook can start it), then enables both in the gateway
config (`hooks_switch`: edited in place, comments kept, a copy first in memwarden's storage), or
prints the exact steps. Running it again changes nothing. Uninstall undoes it: the config as it
was before (byte for byte while nobody changed it since; else only memwarden's keys), the two
folders, and `<state>/hooks/` when install created it and it is empty again.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import orjson

import memwarden
from memwarden.errors import UsageError
from memwarden.files import atomic_write, ensure_dir, read_text_if_exists
from memwarden.hooks_switch import HooksPlan, enable, forget, recorded_dirs, restore
from memwarden.openclaw.paths import resolve_config_path
from memwarden.runtime import JobContext, JobResult

HOOK_NAMES = ("memory-index-inject", "session-summary")
HOOK_FILES = ("HOOK.md", "handler.js")
SETTINGS_FILE = "memwarden.json"
NEEDS_SETTINGS = ("session-summary",)
JOB = "install"


def install_hooks(
    context: JobContext,
    dry_run: bool,
    *,
    executable: str | None = None,
    source: Path | None = None,
) -> JobResult:
    """Copy both hooks into `<state>/hooks/` and enable them; return what was (or would be) done.

    `executable` overrides the memwarden the hook starts (default `install.executable`, else the
    one running). Raise UsageError if the hook sources or the executable cannot be found.
    """
    plan = _plan(context, source)
    settings = hook_settings(context, resolve_executable(context, executable))
    created = [] if plan.hooks_dir.exists() or dry_run else [plan.hooks_dir]
    copied = []
    for name in HOOK_NAMES:
        files = {file: (plan.source / name / file).read_bytes() for file in HOOK_FILES}
        if name in NEEDS_SETTINGS:
            files[SETTINGS_FILE] = settings
        copied.append(_copy_hook(plan, name, files, dry_run))
    enabled = enable(plan, created, dry_run)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "executable": orjson.loads(settings)["executable"],
        "hooks": copied,
        "enabled_by": enabled,
    }
    return _result(plan, data)


def uninstall_hooks(context: JobContext, dry_run: bool) -> JobResult:
    """Put the gateway config back as it was, and remove the hooks' folders from
    `<state>/hooks/` (and that folder when install created it and nothing else is in it)."""
    plan = _plan(context, source=None, need_source=False)
    created = recorded_dirs(plan)
    disabled = restore(plan, dry_run)
    removed = [_remove_hook(plan, name, dry_run) for name in HOOK_NAMES]
    if not dry_run and disabled != "manual":
        for folder in created:
            _remove_if_empty(plan, folder)
        forget(plan)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "hooks": removed,
        "disabled_by": disabled,
    }
    return _result(plan, data)


# --- locating things ------------------------------------------------------------------------


def hook_sources(source: Path | None = None) -> Path:
    """Return the folder holding the hooks: `hooks/` of the memwarden checkout, else the copy a
    wheel install puts in `<prefix>/share/memwarden/hooks`.

    Raise UsageError if it does not hold both hooks.
    """
    checkout = Path(memwarden.__file__).resolve().parents[2] / "hooks"
    installed = Path(sys.prefix) / "share" / "memwarden" / "hooks"
    folder = source or (checkout if checkout.is_dir() else installed)
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


def resolve_executable(context: JobContext, override: str | None = None) -> Path:
    """Return the absolute path of the memwarden executable the hooks will start.

    Order: `override`, `install.executable`, the console script running now, the one next to
    this Python, the one on PATH. Raise UsageError if none is an executable file.
    """
    candidates = [override, context.config.install.executable]
    running = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if running is not None and running.name == "memwarden":
        candidates.append(str(running))
    candidates.append(str(Path(sys.executable).parent / "memwarden"))
    candidates.append(shutil.which("memwarden", path=context.env.get("PATH")))
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(candidate).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        if candidate in (override, context.config.install.executable):
            raise UsageError(f"{candidate}: not an executable file (install.executable)")
    raise UsageError(
        "cannot find the memwarden executable; set install.executable to its absolute path"
    )


def hook_settings(context: JobContext, executable: Path) -> bytes:
    """Return session-summary's memwarden.json: the executable, --config and --state-dir."""
    settings = {
        "executable": str(executable),
        "config": str(context.config.path.resolve()) if context.config.path else None,
        "stateDir": str(context.gateway_state_dir),
    }
    return orjson.dumps(settings, option=orjson.OPT_INDENT_2) + b"\n"


def _plan(context: JobContext, source: Path | None, need_source: bool = True) -> HooksPlan:
    state_dir = context.gateway_state_dir
    return HooksPlan(
        source=hook_sources(source) if need_source else Path(),
        state_dir=state_dir,
        config_path=resolve_config_path(state_dir, context.env),
        storage_dir=context.storage_dir,
        names=HOOK_NAMES,
        now=context.now(),
    )


def outdated_files(folder: Path, name: str, source: Path | None = None) -> list[str]:
    """Return the files of the hook `name` installed in `folder` that differ from the ones this
    memwarden ships: memwarden was upgraded without `memwarden install hooks`."""
    shipped = hook_sources(source) / name
    return [
        file
        for file in HOOK_FILES
        if _current_bytes(folder / file) != (shipped / file).read_bytes()
    ]


def settings_executable(folder: Path) -> str | None:
    """Return the memwarden executable an installed hook's memwarden.json starts, if it has one."""
    raw = _current_bytes(folder / SETTINGS_FILE)
    try:
        settings = orjson.loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        return None
    executable = settings.get("executable") if isinstance(settings, dict) else None
    return executable if isinstance(executable, str) and executable else None


# --- files ----------------------------------------------------------------------------------


def _copy_hook(plan: HooksPlan, name: str, files: Mapping[str, bytes], dry_run: bool) -> dict:
    folder = plan.hooks_dir / name
    changed = [file for file, payload in files.items() if _current_bytes(folder / file) != payload]
    status = "unchanged" if not changed else "would_copy" if dry_run else "copied"
    if changed and not dry_run:
        ensure_dir(folder, root=plan.state_dir)
        for file in changed:
            atomic_write(folder / file, files[file], root=plan.state_dir)
    verb = {"unchanged": "already installed", "would_copy": "would copy", "copied": "copied"}
    detail = f" ({', '.join(changed)})" if changed else ""
    plan.lines.append(f"hook {name}: {verb[status]} in {folder}{detail}")
    return {"name": name, "path": str(folder), "files": status, "changed": changed}


def _remove_hook(plan: HooksPlan, name: str, dry_run: bool) -> dict:
    folder = plan.hooks_dir / name
    hook_md = read_text_if_exists(folder / "HOOK.md") if folder.is_dir() else None
    if hook_md is None:
        plan.lines.append(f"hook {name}: not installed in {plan.hooks_dir}")
        return {"name": name, "path": str(folder), "files": "absent"}
    if f"name: {name}" not in hook_md or "memwarden" not in hook_md:
        plan.problems.append(f"{folder}: not memwarden's {name} hook; left in place")
        return {"name": name, "path": str(folder), "files": "foreign"}
    if not dry_run:
        shutil.rmtree(folder)
    plan.lines.append(f"hook {name}: {'would remove' if dry_run else 'removed'} {folder}")
    return {"name": name, "path": str(folder), "files": "would_remove" if dry_run else "removed"}


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if not path.is_symlink() else None
    except OSError:
        return None


def _remove_if_empty(plan: HooksPlan, folder: Path) -> None:
    try:
        folder.rmdir()
    except FileNotFoundError:
        return
    except OSError:
        return  # not empty: something else lives there now
    plan.lines.append(f"hooks: removed {folder} (install created it)")


def _result(plan: HooksPlan, data: dict) -> JobResult:
    manual = "manual" in (data.get("enabled_by"), data.get("disabled_by"))
    foreign = any(hook.get("files") == "foreign" for hook in data["hooks"])
    return JobResult(
        JOB,
        data={"summary": {"hooks": len(data["hooks"])}, **data},
        lines=plan.lines,
        problems=plan.problems,
        exit_code=1 if manual or foreign else 0,
    )
