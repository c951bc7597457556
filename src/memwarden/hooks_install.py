"""Install and remove memwarden's gateway hooks (`memwarden install hooks` / `uninstall hooks`).

Install copies `hooks/memory-index-inject/` and `hooks/session-summary/` into the gateway's managed
hooks folder `<state>/hooks/`, writes `session-summary/memwarden.json` (the memwarden executable
and its --config / --state-dir, so the hook can start it), then enables both in the gateway
config (`hooks_switch`: edited in place, comments kept, a copy first in memwarden's storage), or
prints the exact steps. Running it again changes nothing. A folder of that name that is not
memwarden's hook stops the install before it writes anything; a hook file changed since
memwarden wrote it is copied to `<storage>/hook-backups/` before it is replaced. Uninstall undoes
the install: the config as it was before (byte for byte while nobody changed it since; else only
memwarden's keys), the files install wrote and nobody changed (an edited one only with
`--force`; another file never), the folders when empty, and `<state>/hooks/` when install
created it and it is empty again.
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
from memwarden.files import atomic_write, ensure_dir
from memwarden.hooks_record import load_record
from memwarden.hooks_switch import (
    HooksPlan,
    enable,
    forget,
    recorded_dirs,
    remember_files,
    restore,
)
from memwarden.maintenance.config_backup import backup_name
from memwarden.openclaw.paths import resolve_config_path
from memwarden.runtime import JobContext, JobResult
from memwarden.scheduling.manifest import sha256_bytes

HOOK_NAMES = ("memory-index-inject", "session-summary")
HOOK_FILES = ("HOOK.md", "handler.js")
SETTINGS_FILE = "memwarden.json"
NEEDS_SETTINGS = ("session-summary",)
BACKUP_DIR = "hook-backups"
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
    for name in HOOK_NAMES:
        _refuse_foreign_folder(plan.hooks_dir / name, name)
    known = _recorded_files(plan)
    created = [] if plan.hooks_dir.exists() or dry_run else [plan.hooks_dir]
    copied = []
    for name in HOOK_NAMES:
        files = {file: (plan.source / name / file).read_bytes() for file in HOOK_FILES}
        if name in NEEDS_SETTINGS:
            files[SETTINGS_FILE] = settings
        copied.append(_copy_hook(plan, name, files, known, dry_run))
    enabled = enable(plan, created, dry_run)
    if enabled == "manual" and not dry_run:
        remember_files(plan, created)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "executable": orjson.loads(settings)["executable"],
        "hooks": copied,
        "enabled_by": enabled,
    }
    return _result(plan, data)


def uninstall_hooks(context: JobContext, dry_run: bool, force: bool = False) -> JobResult:
    """Put the gateway config back as it was, and remove from `<state>/hooks/` the hook files
    install wrote (an edited one only with `force`), each hook's folder once empty, and that
    folder when install created it and nothing else is in it."""
    plan = _plan(context, source=None, need_source=False)
    created = recorded_dirs(plan)
    known = _recorded_files(plan)
    disabled = restore(plan, dry_run)
    removed = [_remove_hook(plan, name, known, dry_run, force) for name in HOOK_NAMES]
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
    """Return session-summary's memwarden.json: the executable, --config, --state-dir and the
    environment the timers get (`pinned_environment`: never a secret), so a run the hook starts
    uses the storage, secrets file and folders the timers use."""
    from memwarden.scheduling.host import pinned_environment

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


def _refuse_foreign_folder(folder: Path, name: str) -> None:
    """Raise UsageError if `folder` exists and is not memwarden's hook `name` (before any write)."""
    if not folder.is_symlink() and not folder.exists():
        return
    if folder.is_symlink() or not folder.is_dir():
        problem = "is a symlink or a file, not memwarden's hook folder"
    elif not _is_memwarden_hook(folder, name):
        problem = f"is not memwarden's {name} hook"
    else:
        return
    raise UsageError(
        f"{folder}: {problem}; move or rename it, then run `memwarden install hooks` again "
        "(nothing was changed)"
    )


def _is_memwarden_hook(folder: Path, name: str) -> bool:
    hook_md = _current_bytes(folder / "HOOK.md")
    text = hook_md.decode("utf-8", "replace") if hook_md is not None else ""
    return f"name: {name}" in text and "memwarden" in text


def _recorded_files(plan: HooksPlan) -> dict[str, str]:
    record = load_record(plan.storage_dir)
    return dict(record.files) if record else {}


def _copy_hook(
    plan: HooksPlan,
    name: str,
    files: Mapping[str, bytes],
    known: Mapping[str, str],
    dry_run: bool,
) -> dict:
    folder = plan.hooks_dir / name
    current = {file: _current_bytes(folder / file) for file in files}
    changed = [file for file, payload in files.items() if current[file] != payload]
    replaced = {
        file: _origin(current[file], known.get(f"{name}/{file}"))
        for file in changed
        if current[file] is not None
    }
    replaced = {file: origin for file, origin in replaced.items() if origin != "installed"}
    status = "unchanged" if not changed else "would_copy" if dry_run else "copied"
    kept_in = plan.storage_dir / BACKUP_DIR / backup_name(name, plan.now)
    if changed and not dry_run:
        for file in replaced:
            ensure_dir(kept_in, root=plan.storage_dir)
            atomic_write(kept_in / file, current[file], root=plan.storage_dir)
        ensure_dir(folder, root=plan.state_dir)
        for file in changed:
            atomic_write(folder / file, files[file], root=plan.state_dir)
    if not dry_run:
        for file, payload in files.items():
            plan.written_files[f"{name}/{file}"] = sha256_bytes(payload)
    verb = {"unchanged": "already installed", "would_copy": "would copy", "copied": "copied"}
    detail = f" ({', '.join(changed)})" if changed else ""
    plan.lines.append(f"hook {name}: {verb[status]} in {folder}{detail}")
    _report_replaced(plan, folder, replaced, kept_in, dry_run)
    return {
        "name": name,
        "path": str(folder),
        "files": status,
        "changed": changed,
        "edited": sorted(file for file, origin in replaced.items() if origin == "edited"),
        "kept_in": str(kept_in) if replaced else None,
    }


def _origin(current: bytes, recorded_sha256: str | None) -> str:
    """Whether a hook file on disk is the one memwarden `installed`, one `edited` since, or one
    of `unknown` origin (no record: installed by a memwarden that kept none)."""
    if recorded_sha256 is None:
        return "unknown"
    return "installed" if sha256_bytes(current) == recorded_sha256 else "edited"


def _report_replaced(
    plan: HooksPlan, folder: Path, replaced: Mapping[str, str], kept_in: Path, dry_run: bool
) -> None:
    if not replaced:
        return
    where = f"{'would keep' if dry_run else 'kept'} a copy in {kept_in}"
    edited = [file for file, origin in replaced.items() if origin == "edited"]
    unknown = [file for file, origin in replaced.items() if origin == "unknown"]
    if edited:
        plan.problems.append(
            f"{folder}: {', '.join(edited)} changed since memwarden installed it; replaced, {where}"
        )
    if unknown:
        plan.lines.append(f"hook {folder.name}: {where} of what it replaced ({', '.join(unknown)})")


def _remove_hook(
    plan: HooksPlan, name: str, known: Mapping[str, str], dry_run: bool, force: bool
) -> dict:
    folder = plan.hooks_dir / name
    entry = {"name": name, "path": str(folder)}
    if not folder.is_symlink() and not (folder / "HOOK.md").is_file():
        plan.lines.append(f"hook {name}: not installed in {plan.hooks_dir}")
        return entry | {"files": "absent"}
    if folder.is_symlink() or not _is_memwarden_hook(folder, name):
        plan.problems.append(f"{folder}: not memwarden's {name} hook; left in place")
        return entry | {"files": "foreign"}
    shipped = _shipped_files(name)
    ours = [file for file in (*HOOK_FILES, SETTINGS_FILE) if _current_bytes(folder / file)]
    edited = [
        file
        for file in ours
        if not _unchanged(folder / file, known.get(f"{name}/{file}"), shipped.get(file))
    ]
    if edited and not force:
        plan.problems.append(
            f"{folder}: {', '.join(edited)} {_edited_since(known, name)}; the hook is "
            "kept (`memwarden uninstall hooks --force` removes memwarden's files)"
        )
        return entry | {"files": "kept", "edited": edited}
    not_ours = sorted(path.name for path in folder.iterdir() if path.name not in ours)
    if not dry_run:
        for file in ours:
            (folder / file).unlink(missing_ok=True)
        if not not_ours:
            folder.rmdir()
    verb = "would remove" if dry_run else "removed"
    if not_ours:
        plan.lines.append(
            f"hook {name}: {verb} {', '.join(ours)} from {folder}; kept {', '.join(not_ours)}: "
            "not memwarden's"
        )
    else:
        plan.lines.append(f"hook {name}: {verb} {folder}")
    return entry | {"files": "would_remove" if dry_run else "removed", "kept": not_ours}


def _edited_since(known: Mapping[str, str], name: str) -> str:
    """How an uninstall words a hook file it keeps: changed since install, when install recorded
    what it wrote; else (an earlier memwarden recorded nothing) only that it differs."""
    if any(key.startswith(f"{name}/") for key in known):
        return "changed since memwarden installed it"
    return "differs from this memwarden's (installed by an earlier one, or edited)"


def _unchanged(path: Path, recorded_sha256: str | None, shipped: bytes | None) -> bool:
    """Whether a hook file is as memwarden wrote it: its recorded SHA-256, else (an install that
    recorded none) the file this memwarden ships; memwarden.json is memwarden's own either way."""
    current = _current_bytes(path)
    if current is None:
        return False
    if recorded_sha256 is not None:
        return sha256_bytes(current) == recorded_sha256
    return shipped is None or current == shipped


def _shipped_files(name: str) -> dict[str, bytes]:
    try:
        folder = hook_sources() / name
    except UsageError:
        return {}
    return {file: (folder / file).read_bytes() for file in HOOK_FILES}


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
    refused = any(
        hook["files"] in ("foreign", "kept") or hook.get("edited") for hook in data["hooks"]
    )
    return JobResult(
        JOB,
        data={"summary": {"hooks": len(data["hooks"])}, **data},
        lines=plan.lines,
        problems=plan.problems,
        exit_code=1 if manual or refused else 0,
    )
