"""openclaw.json edited to select memwarden's hooks at install and put back at uninstall.

In place and minimally (`json5_text`), after a copy to `<storage>/config-backups/` (never a file
in the gateway's state dir); a dry run prints the change as a diff; a config that cannot be
edited is left alone and the steps are printed (`manual`). Uninstall writes back the text
install recorded, byte for byte, while the config is exactly as install left it; when it changed
since (the operator, or the gateway rewriting it as JSON), only memwarden's keys.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

import orjson

from memwarden.fs.files import atomic_write
from memwarden.gateway_hooks.json5_text import changes, edit
from memwarden.gateway_hooks.plan import HooksPlan
from memwarden.gateway_hooks.record import HooksRecord
from memwarden.gateway_hooks.selection import restored, selected
from memwarden.gateway_hooks.shipped import HOOK_NAMES
from memwarden.openclaw.config_file import load_gateway_config, parse_json5
from memwarden.openclaw.gateway_settings import hook_selection
from memwarden.process.errors import MemwardenError
from memwarden.store.storage import CONFIG_BACKUPS_DIR, write_config_backup

Texts = tuple[str | None, str | None]  # the config's text before and after (None: no file)


def enable(plan: HooksPlan, record: HooksRecord | None, dry_run: bool) -> tuple[str, Texts | None]:
    """Select the hooks in the gateway config; return how (`already`, `config`: edited, or
    `manual`: the steps are printed) and the config's text before and after (None: unreadable).

    The keys an earlier install set are put back first, so that an upgrade drops what an earlier
    memwarden set and this one does not (`hooks.internal.enabled: true`).
    """
    path = plan.config_path
    try:
        config = load_gateway_config(path)
        original = _read(path)
    except (MemwardenError, OSError, ValueError) as error:
        plan.problems.append(str(error))
        return _manual(plan, enable=True), _readable(path)
    unchanged = (original, original)
    before = _config_before(plan, record)
    target = selected(restored(config, before, HOOK_NAMES)[0] if before else config, HOOK_NAMES)
    off = [
        why for loaded, why in (hook_selection(target, name) for name in HOOK_NAMES) if not loaded
    ]
    if off:  # hooks.internal.enabled is false
        plan.problems.append(
            f"{path}: {off[0]}; memwarden does not turn internal hooks on: remove that key (the "
            "gateway then loads the hooks named in hooks.internal.entries) and run "
            "`memwarden install hooks` again"
        )
        return "manual", unchanged
    if target == config:
        plan.lines.append(f"hooks: already enabled in {path}")
        return "already", unchanged
    written = _edited(plan, original, config, target)
    if written is None:
        return _manual(plan, enable=True), unchanged
    if dry_run:
        if original is not None:
            plan.lines.append(
                f"hooks: would back up {path} to {plan.storage_dir / CONFIG_BACKUPS_DIR}/"
            )
        plan.lines.append(f"hooks: would enable {', '.join(HOOK_NAMES)} in {path}")
        plan.lines += _diff_lines(path, original, written)
        return "config", None
    if not _write(plan, original, written, "enabled " + ", ".join(HOOK_NAMES)):
        return _manual(plan, enable=True), unchanged
    return "config", (original, written)


def restore(plan: HooksPlan, record: HooksRecord | None, dry_run: bool) -> str:
    """Put the gateway config back as it was before the install; return how: `restored` (byte
    for byte), `config` (memwarden's keys only), `already` (nothing to do) or `manual`."""
    path = plan.config_path
    try:
        current = _read(path)
        if record and record.left_as_installed(path):
            return _restore_exactly(plan, record.config_before, current, dry_run)
        config = load_gateway_config(path)
    except (MemwardenError, OSError, ValueError) as error:
        plan.problems.append(str(error))
        return _manual(plan, enable=False)
    before = _config_before(plan, record)
    target, notes = restored(config, before, HOOK_NAMES)
    keys = ", ".join(".".join(key) for key, _value in changes(config, target))
    if not keys:
        plan.lines.append(f"hooks: nothing of memwarden's left in {path}")
        return "already"
    written = _edited(plan, current, config, target)
    if written is None:
        return _manual(plan, enable=False)
    if before is None:
        plan.lines.append(
            "hooks: no record of the install (hooks installed by an earlier memwarden?): "
            f"{'would remove' if dry_run else 'removed'} memwarden's entries from {path} ({keys})"
        )
    else:
        plan.lines.append(
            f"hooks: {path} changed since install, so only memwarden's keys "
            f"{'would be' if dry_run else 'were'} put back ({keys}); your other changes are kept"
        )
    plan.lines += [f"hooks: {note}" for note in notes]
    if not dry_run and not _write(plan, current, written, "removed memwarden's keys"):
        return _manual(plan, enable=False)
    return "config"


def _restore_exactly(
    plan: HooksPlan, before: str | None, current: str | None, dry_run: bool
) -> str:
    path = plan.config_path
    if before == current:
        plan.lines.append(f"hooks: {path} is as it was before the install; nothing to change")
        return "already"
    if dry_run:
        plan.lines.append(f"hooks: would restore {path} as it was before the install")
    elif not _write(plan, current, before, "restored as it was before the install"):
        return _manual(plan, enable=False)
    return "restored"


def _config_before(plan: HooksPlan, record: HooksRecord | None) -> dict | None:
    """The config before the install the record tells of; None without a record of this
    config, or when the text it recorded does not parse (a config that was broken)."""
    if record is None or record.config_path != str(plan.config_path):
        return None
    try:
        value = parse_json5(record.config_before.encode()) if record.config_before else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else {}


def _edited(plan: HooksPlan, original: str | None, config: dict, target: dict) -> str | None:
    """The config's text with `target`'s changes made in place, or None (a problem said)."""
    try:
        return edit(original or "", config, target)
    except ValueError as error:
        plan.problems.append(f"{plan.config_path}: cannot be edited in place ({error})")
        return None


def _write(plan: HooksPlan, current: str | None, new: str | None, what: str) -> bool:
    """Back the config up into memwarden's storage, then write `new` (None: remove the file),
    keeping the file's mode. Return False (a problem said) when it cannot be done."""
    path = plan.config_path
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if current is not None else 0o600
        if current is not None:
            backup = write_config_backup(plan.storage_dir, path.name, current, plan.now)
            plan.lines.append(f"hooks: backed up {path} to {backup}")
        if new is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, new, root=path.parent)
            os.chmod(path, mode)
    except (MemwardenError, OSError) as error:
        plan.problems.append(f"{path}: cannot be edited ({error})")
        return False
    plan.lines.append(f"hooks: {path}: {what}")
    return True


def _diff_lines(path: Path, before: str | None, after: str) -> list[str]:
    """The change to the gateway config as a unified diff, indented, for a dry run."""
    old, new = (before or "").splitlines(), after.splitlines()
    diff = difflib.unified_diff(old, new, f"{path} (now)", f"{path} (after)", lineterm="")
    return [f"    {line}" for line in diff]


def _read(path: Path) -> str | None:
    """The config's text as on disk (None: no file). Raise OSError or UnicodeDecodeError."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None


def _readable(path: Path) -> Texts | None:
    try:
        text = _read(path)
    except (OSError, ValueError):
        return None
    return text, text


def _manual(plan: HooksPlan, enable: bool) -> str:
    if enable:
        plan.problems.append(
            f"enable the hooks yourself: merge {orjson.dumps(selected({}, HOOK_NAMES)).decode()} "
            f"into {plan.config_path} (not with `openclaw hooks enable`: it also sets "
            "hooks.internal.enabled, and 2026.7.x then loads every bundled hook)"
        )
    else:
        keys = ", ".join(f"hooks.internal.entries.{name}" for name in HOOK_NAMES)
        plan.problems.append(f"remove {keys} from {plan.config_path} yourself")
    return "manual"
