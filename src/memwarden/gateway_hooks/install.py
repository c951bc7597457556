"""`memwarden install hooks` and `memwarden uninstall hooks`: the steps in order, and the result.

Install copies `hooks/memory-index-inject/` and `hooks/session-summary/` into the gateway's
managed hooks folder `<state>/hooks/` with a `memwarden.json` beside each (`folders`), selects
both in the gateway config (`config`), and records what it did (`record`). Running it again
changes nothing. Uninstall undoes it: the config as it was, the files install wrote and nobody
changed, the folders when empty, and `<state>/hooks/` when install created it and it is empty.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from memwarden.fs.files import sha256_bytes
from memwarden.gateway_hooks import folders
from memwarden.gateway_hooks.config import enable, restore
from memwarden.gateway_hooks.plan import HooksPlan
from memwarden.gateway_hooks.record import load_record, record_path, save_record
from memwarden.gateway_hooks.shipped import HOOK_NAMES, SETTINGS_FILE, hook_files, hook_settings
from memwarden.health.deliveries import FOLDER, begin_receipts
from memwarden.openclaw.paths import resolve_config_path
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.host import resolve_executable
from memwarden.scheduling.plan import dirs_to_remove


def install_hooks(
    context: JobContext,
    dry_run: bool,
    *,
    source: Path | None = None,
) -> JobResult:
    """Copy both hooks into `<state>/hooks/` and select them; return what was (or would be) done.

    The hooks start `install.executable`, else the memwarden running. Raise UsageError if the
    hook sources or the executable cannot be found, or a hook folder there is not memwarden's.
    """
    shipped = {name: hook_files(name, source) for name in HOOK_NAMES}
    plan = _plan(context)
    runs = resolve_executable(context.config.install.executable, context.env)
    settings = hook_settings(context, runs)
    for name in HOOK_NAMES:
        folders.refuse_foreign_folder(plan.hooks_dir / name, name)
    record = load_record(plan.storage_dir)
    known = record.files if record else {}
    created = [] if plan.hooks_dir.exists() or dry_run else [plan.hooks_dir]
    payloads = {name: files | {SETTINGS_FILE: settings} for name, files in shipped.items()}
    copied = [
        folders.copy_hook(plan, name, files, known, dry_run) for name, files in payloads.items()
    ]
    enabled_by, config = enable(plan, record, dry_run)
    if not dry_run:
        written = {
            f"{name}/{file}": sha256_bytes(payload)
            for name, files in payloads.items()
            for file, payload in files.items()
        }
        save_record(plan, record, config, enabled_by == "manual", created, written)
        begin_receipts(plan.storage_dir / FOLDER, plan.now)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "executable": str(runs),
        "hooks": copied,
        "enabled_by": enabled_by,
    }
    return _result(plan, data)


def uninstall_hooks(context: JobContext, dry_run: bool, force: bool = False) -> JobResult:
    """Put the gateway config back as it was, and remove from `<state>/hooks/` the hook files
    install wrote (an edited one only with `force`), each hook's folder once empty, and that
    folder when install created it and nothing else is in it."""
    plan = _plan(context)
    record = load_record(plan.storage_dir)
    known = record.files if record else {}
    disabled_by = restore(plan, record, dry_run)
    removed = [folders.remove_hook(plan, name, known, dry_run, force) for name in HOOK_NAMES]
    if not dry_run and disabled_by != "manual":
        for folder in dirs_to_remove(record.created_dirs if record else []):
            with suppress(OSError):  # something else lives there now
                folder.rmdir()
                plan.lines.append(f"hooks: removed {folder} (install created it)")
        record_path(plan.storage_dir).unlink(missing_ok=True)
    data = {
        "dry_run": dry_run,
        "hooks_dir": str(plan.hooks_dir),
        "hooks": removed,
        "disabled_by": disabled_by,
    }
    return _result(plan, data)


def _plan(context: JobContext) -> HooksPlan:
    return HooksPlan(
        state_dir=context.gateway_state_dir,
        config_path=resolve_config_path(context.gateway_state_dir, context.env),
        storage_dir=context.storage_dir,
        now=context.now(),
    )


def _result(plan: HooksPlan, data: dict) -> JobResult:
    manual = "manual" in (data.get("enabled_by"), data.get("disabled_by"))
    refused = any(
        hook["files"] in ("foreign", "kept") or hook.get("edited") for hook in data["hooks"]
    )
    return JobResult(
        "install",
        data={"summary": {"hooks": len(data["hooks"])}, **data},
        lines=plan.lines,
        problems=plan.problems,
        exit_code=1 if manual or refused else 0,
    )
