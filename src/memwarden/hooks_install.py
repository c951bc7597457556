"""Install and remove memwarden's gateway hooks (`memwarden install hooks` / `uninstall hooks`).

Install copies `hooks/memory-index-inject/` and `hooks/session-summary/` into the gateway's managed
hooks folder `<state>/hooks/`, writes `session-summary/memwarden.json` (the memwarden executable
and its --config / --state-dir, so the hook can start it), then enables both: with
`openclaw hooks enable <name>` when the CLI is on PATH, else by setting
`hooks.internal.entries.<name>.enabled` in the gateway config (after a timestamped 0600 backup,
written back as plain JSON as the gateway itself does), else by printing the exact steps.
Running it again changes nothing. Uninstall disables the hooks the same way (as
`openclaw hooks disable` does: an entry set to false, so other hooks' selection is unchanged)
and removes the folders.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

import memwarden
from memwarden.errors import MemwardenError, UsageError
from memwarden.files import atomic_write, ensure_dir, read_text_if_exists
from memwarden.openclaw.config_file import load_gateway_config
from memwarden.openclaw.fields import mapping
from memwarden.openclaw.gateway_settings import managed_hooks_dir
from memwarden.openclaw.paths import resolve_config_path
from memwarden.runtime import JobContext, JobResult

HOOK_NAMES = ("memory-index-inject", "session-summary")
HOOK_FILES = ("HOOK.md", "handler.js")
SETTINGS_FILE = "memwarden.json"
NEEDS_SETTINGS = ("session-summary",)
CLI_TIMEOUT_SECONDS = 120
JOB = "install"


@dataclass
class HooksPlan:
    """Where things are for one install or uninstall."""

    source: Path
    state_dir: Path
    config_path: Path
    env: Mapping[str, str]
    openclaw: str | None
    now: datetime
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def hooks_dir(self) -> Path:
        return managed_hooks_dir(self.state_dir)


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
    copied = []
    for name in HOOK_NAMES:
        files = {file: (plan.source / name / file).read_bytes() for file in HOOK_FILES}
        if name in NEEDS_SETTINGS:
            files[SETTINGS_FILE] = settings
        copied.append(_copy_hook(plan, name, files, dry_run))
    enabled = _switch(plan, enable=True, dry_run=dry_run)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "executable": orjson.loads(settings)["executable"],
        "hooks": copied,
        "enabled_by": enabled,
    }
    return _result(plan, data)


def uninstall_hooks(context: JobContext, dry_run: bool) -> JobResult:
    """Disable both hooks and remove their folders from `<state>/hooks/`."""
    plan = _plan(context, source=None, need_source=False)
    disabled = _switch(plan, enable=False, dry_run=dry_run)
    removed = [_remove_hook(plan, name, dry_run) for name in HOOK_NAMES]
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
        env=context.env,
        openclaw=shutil.which("openclaw", path=context.env.get("PATH")),
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


# --- enabling -------------------------------------------------------------------------------


def hooks_switched(config: Mapping[str, Any], names: Sequence[str], enable: bool) -> dict:
    """Given the gateway config, return a copy with the hooks enabled (or disabled).

    Enabling sets `hooks.internal.enabled` and each `hooks.internal.entries.<name>.enabled`;
    disabling sets the entries' `enabled` to false and leaves the rest alone, as
    `openclaw hooks enable|disable` do.
    """
    updated = copy.deepcopy(dict(config))
    hooks = updated.setdefault("hooks", {})
    internal = hooks.setdefault("internal", {})
    if enable:
        internal["enabled"] = True
    entries = internal.setdefault("entries", {})
    for name in names:
        entry = entries.get(name) if isinstance(entries.get(name), dict) else {}
        if not enable and not entry:
            continue
        entries[name] = {**entry, "enabled": enable}
    return updated


def is_switched(config: Mapping[str, Any], names: Sequence[str], enable: bool) -> bool:
    """Return True when the config already has the hooks enabled (or not enabled)."""
    internal = mapping(mapping(config.get("hooks")).get("internal"))
    entries = mapping(internal.get("entries"))
    states = [mapping(entries.get(name)).get("enabled") is True for name in names]
    if enable:
        return internal.get("enabled") is True and all(states)
    return not any(states)


def _switch(plan: HooksPlan, enable: bool, dry_run: bool) -> str:
    """Enable or disable both hooks; return how: already, cli, config or manual."""
    verb = "enable" if enable else "disable"
    try:
        config = load_gateway_config(plan.config_path)
    except MemwardenError as error:
        plan.problems.append(str(error))
        return _manual(plan, enable)
    if is_switched(config, HOOK_NAMES, enable):
        plan.lines.append(f"hooks: already {verb}d in {plan.config_path}")
        return "already"
    if enable and _opens_selection(config):
        plan.problems.append(
            f"{plan.config_path}: hooks.internal lists no entries, so the gateway loads every "
            "hook it finds; once memwarden's are listed only listed hooks load: enable the "
            "others you use with `openclaw hooks enable <name>`"
        )
    if plan.openclaw:
        commands = [[plan.openclaw, "hooks", verb, name] for name in HOOK_NAMES]
        if dry_run:
            plan.lines += [f"hooks: would run {' '.join(command)}" for command in commands]
            return "cli"
        if _run_cli(plan, commands):
            return "cli"
    return _edit_config(plan, config, enable, dry_run)


def _run_cli(plan: HooksPlan, commands: list[list[str]]) -> bool:
    env = {
        **plan.env,
        "OPENCLAW_STATE_DIR": str(plan.state_dir),
        "OPENCLAW_CONFIG_PATH": str(plan.config_path),
    }
    for command in commands:
        try:
            completed = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            plan.problems.append(f"{' '.join(command)}: {error}; editing the config instead")
            return False
        if completed.returncode != 0:
            reason = (completed.stderr or completed.stdout).strip().splitlines()
            plan.problems.append(
                f"{' '.join(command)} exited {completed.returncode}"
                f"{': ' + reason[-1] if reason else ''}; editing the config instead"
            )
            return False
        plan.lines.append(f"hooks: ran {' '.join(command)}")
    return True


def _edit_config(plan: HooksPlan, config: dict, enable: bool, dry_run: bool) -> str:
    path = plan.config_path
    backup = _free_backup_path(path, plan.now)
    updated = hooks_switched(config, HOOK_NAMES, enable)
    action = "enable" if enable else "disable"
    if dry_run:
        if path.exists():
            plan.lines.append(f"hooks: would back up {path} to {backup}")
        plan.lines.append(f"hooks: would {action} {', '.join(HOOK_NAMES)} in {path}")
        return "config"
    try:
        original = path.read_bytes() if path.exists() else None
        if original is not None:
            atomic_write(backup, original, root=path.parent)
            plan.lines.append(f"hooks: backed up {path} to {backup}")
        atomic_write(
            path, orjson.dumps(updated, option=orjson.OPT_INDENT_2) + b"\n", root=path.parent
        )
    except (MemwardenError, OSError) as error:
        plan.problems.append(f"{path}: cannot be edited ({error})")
        return _manual(plan, enable)
    plan.lines.append(f"hooks: {action}d {', '.join(HOOK_NAMES)} in {path}")
    return "config"


def _free_backup_path(path: Path, now: datetime) -> Path:
    """Return `<config>.memwarden-<UTC stamp>.bak`, numbered when taken: never overwrite one."""
    stem = f"{path.name}.memwarden-{now:%Y%m%dT%H%M%SZ}"
    candidate, number = path.with_name(f"{stem}.bak"), 2
    while candidate.exists() or candidate.is_symlink():
        candidate, number = path.with_name(f"{stem}-{number}.bak"), number + 1
    return candidate


def _manual(plan: HooksPlan, enable: bool) -> str:
    verb = "enable" if enable else "disable"
    snippet = orjson.dumps(hooks_switched({}, HOOK_NAMES, enable)).decode()
    plan.problems.append(
        f"{verb} the hooks yourself: "
        + " && ".join(f"openclaw hooks {verb} {name}" for name in HOOK_NAMES)
        + f"; or merge {snippet} into {plan.config_path}"
    )
    return "manual"


def _opens_selection(config: Mapping[str, Any]) -> bool:
    internal = mapping(mapping(config.get("hooks")).get("internal"))
    return internal.get("enabled") is True and not mapping(internal.get("entries"))


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
