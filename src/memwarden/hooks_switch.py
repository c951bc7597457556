"""Turn memwarden's hooks on in the gateway config at install, and put it back at uninstall.

memwarden edits the config itself, in place and minimally (`openclaw.config_edit`): comments,
order and formatting of everything else stay as they are, and nothing is left in the gateway's
state dir (no `.bak` files: every copy goes to `<storage_dir>/config-backups/`, as maintain's do).
Install records the config as it was (`hooks_record`). Uninstall writes that back byte for byte
while the config is still exactly as install left it; when it changed since (the operator, or
the gateway rewriting it as JSON), it restores only memwarden's keys and says so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from memwarden import __version__
from memwarden.errors import MemwardenError
from memwarden.files import atomic_write, ensure_dir
from memwarden.hooks_config import changes, hooks_switched, is_switched, restored
from memwarden.hooks_record import HooksRecord, load_record, record_path, save_record
from memwarden.maintenance.config_backup import backup_name
from memwarden.openclaw.config_edit import ConfigEditError, edit
from memwarden.openclaw.config_file import load_gateway_config, parse_json5
from memwarden.openclaw.fields import mapping
from memwarden.openclaw.gateway_settings import managed_hooks_dir
from memwarden.scheduling.manifest import sha256_file, sha256_text

BACKUP_DIR = "config-backups"


@dataclass
class HooksPlan:
    """Where things are for one install or uninstall, and what it has to say."""

    source: Path
    state_dir: Path
    config_path: Path
    storage_dir: Path
    names: tuple[str, ...]
    now: datetime
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    written_files: dict[str, str] = field(default_factory=dict)  # as HooksRecord.files

    @property
    def hooks_dir(self) -> Path:
        return managed_hooks_dir(self.state_dir)


def enable(plan: HooksPlan, created_dirs: list[Path], dry_run: bool) -> str:
    """Enable the hooks in the gateway config and record the install; return how: `already`,
    `config` (edited) or `manual` (the steps are printed)."""
    path = plan.config_path
    try:
        config = load_gateway_config(path)
        original = _read(path)
    except (MemwardenError, OSError) as error:
        plan.problems.append(str(error))
        return _manual(plan, enable=True)
    record = load_record(plan.storage_dir)
    how, written = "already", original
    if is_switched(config, plan.names, True):
        plan.lines.append(f"hooks: already enabled in {path}")
    else:
        if _opens_selection(config):
            plan.problems.append(
                f"{path}: hooks.internal lists no entries, so the gateway loads every hook it "
                "finds; once memwarden's are listed only listed hooks load: enable the others "
                "you use with `openclaw hooks enable <name>`"
            )
        target = hooks_switched(config, plan.names, True)
        written = _edited(plan, original, config, target)
        if written is None:
            return _manual(plan, enable=True)
        how = "config"
        if dry_run:
            if original is not None:
                folder = plan.storage_dir / BACKUP_DIR
                plan.lines.append(f"hooks: would back up {path} to {folder}/")
            plan.lines.append(f"hooks: would enable {', '.join(plan.names)} in {path}")
            plan.lines += _diff_lines(path, original, written)
        elif not _write(plan, original, written, "enabled " + ", ".join(plan.names)):
            return _manual(plan, enable=True)
    if not dry_run:
        _record(plan, record, original, written, created_dirs)
    return how


def restore(plan: HooksPlan, dry_run: bool) -> str:
    """Put the gateway config back as it was before the install; return how: `restored` (byte
    for byte), `config` (memwarden's keys only), `already` (nothing to do) or `manual`."""
    path = plan.config_path
    record = load_record(plan.storage_dir)
    try:
        current = _read(path)
    except OSError as error:
        plan.problems.append(f"{path}: cannot read the gateway config ({error.strerror})")
        return _manual(plan, enable=False)
    unchanged = record is not None and record.config_path == str(path)
    if unchanged and sha256_file(path) == record.config_after_sha256:
        return _restore_exactly(plan, record, current, dry_run)
    return _restore_keys(plan, record, current, dry_run)


def remember_files(plan: HooksPlan, created_dirs: list[Path]) -> None:
    """Record the hook files install wrote (and the folders it made) when the config was left to
    the operator (`manual`): uninstall and the next install must know them all the same. With no
    record yet, the config is recorded as it is now: install did not change it."""
    record = load_record(plan.storage_dir)
    if record is None:
        try:
            current = _read(plan.config_path)
            text = current.decode("utf-8") if current is not None else None
        except (OSError, UnicodeDecodeError):
            return  # unreadable: `uninstall hooks` then treats the files as an earlier install's
        record = HooksRecord(
            config_path=str(plan.config_path),
            config_before=text,
            config_after_sha256=sha256_text(text) if text is not None else None,
            installed_at=plan.now.isoformat(),
            memwarden_version=__version__,
        )
    save_record(
        plan.storage_dir,
        replace(
            record,
            created_dirs=list(dict.fromkeys([*record.created_dirs, *map(str, created_dirs)])),
            files={**record.files, **plan.written_files},
        ),
    )


def forget(plan: HooksPlan) -> None:
    """Remove the install record (after an uninstall)."""
    record_path(plan.storage_dir).unlink(missing_ok=True)


def recorded_dirs(plan: HooksPlan) -> list[Path]:
    """The folders the install created in the gateway's state dir, deepest first."""
    record = load_record(plan.storage_dir)
    folders = [Path(folder) for folder in (record.created_dirs if record else [])]
    return sorted(folders, key=lambda folder: len(folder.parts), reverse=True)


def _restore_exactly(
    plan: HooksPlan, record: HooksRecord, current: bytes | None, dry_run: bool
) -> str:
    path = plan.config_path
    before = record.config_before.encode("utf-8") if record.config_before is not None else None
    if before == current:
        plan.lines.append(f"hooks: {path} is as it was before the install; nothing to change")
        return "already"
    if dry_run:
        plan.lines.append(f"hooks: would restore {path} as it was before the install")
        return "restored"
    if not _write(plan, current, before, "restored as it was before the install"):
        return _manual(plan, enable=False)
    return "restored"


def _restore_keys(
    plan: HooksPlan, record: HooksRecord | None, current: bytes | None, dry_run: bool
) -> str:
    path = plan.config_path
    try:
        config = load_gateway_config(path)
        before = _config_before(record)
    except (MemwardenError, ValueError) as error:
        plan.problems.append(str(error))
        return _manual(plan, enable=False)
    target, notes = restored(config, before, plan.names)
    keys = [".".join(key) for key, _value in changes(config, target)]
    if not keys:
        plan.lines.append(f"hooks: nothing of memwarden's left in {path}")
        return "already"
    written = _edited(plan, current, config, target)
    if written is None:
        return _manual(plan, enable=False)
    if record is None:
        plan.lines.append(
            f"hooks: no record of the install (hooks installed by an earlier memwarden?): "
            f"{'would remove' if dry_run else 'removed'} memwarden's entries from {path} "
            f"({', '.join(keys)})"
        )
    else:
        plan.lines.append(
            f"hooks: {path} changed since install, so only memwarden's keys "
            f"{'would be' if dry_run else 'were'} put back ({', '.join(keys)}); "
            "your other changes are kept"
        )
    plan.lines += [f"hooks: {note}" for note in notes]
    if dry_run:
        return "config"
    if not _write(plan, current, written, "removed memwarden's keys"):
        return _manual(plan, enable=False)
    return "config"


def _config_before(record: HooksRecord | None) -> dict | None:
    if record is None:
        return None
    if record.config_before is None:
        return {}
    value = parse_json5(record.config_before.encode())
    return value if isinstance(value, dict) else {}


def _edited(
    plan: HooksPlan, original: bytes | None, config: Mapping[str, Any], target: dict
) -> bytes | None:
    """Return the config's text with `target`'s changes made in place, or None (a problem)."""
    text = original.decode("utf-8") if original is not None else ""
    try:
        return edit(text, changes(config, target), target).encode("utf-8")
    except (ConfigEditError, UnicodeDecodeError) as error:
        plan.problems.append(f"{plan.config_path}: cannot be edited in place ({error})")
        return None


def _write(plan: HooksPlan, current: bytes | None, new: bytes | None, what: str) -> bool:
    """Back the config up into memwarden's storage, then write `new` (None: remove the file),
    keeping the file's mode. Return False (a problem said) when it cannot be done."""
    path = plan.config_path
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if current is not None else 0o600
        if current is not None:
            backup = _backup(plan, current)
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


def _backup(plan: HooksPlan, content: bytes) -> Path:
    """Copy `content` to a new `<storage_dir>/config-backups/<UTC time>-<name>` (0600)."""
    folder = plan.storage_dir / BACKUP_DIR
    ensure_dir(folder, root=plan.storage_dir)
    moment = plan.now
    while (folder / backup_name(plan.config_path.name, moment)).exists():
        moment += timedelta(microseconds=1)
    target = folder / backup_name(plan.config_path.name, moment)
    atomic_write(target, content, root=plan.storage_dir)
    return target


def _record(
    plan: HooksPlan,
    record: HooksRecord | None,
    original: bytes | None,
    written: bytes | None,
    created_dirs: list[Path],
) -> None:
    after = sha256_text(written.decode("utf-8")) if written is not None else None
    earlier = record.created_dirs if record else []
    if record is None or record.config_path != str(plan.config_path):
        before = original.decode("utf-8") if original is not None else None
    else:
        before = record.config_before  # the config before the first install
    save_record(
        plan.storage_dir,
        HooksRecord(
            config_path=str(plan.config_path),
            config_before=before,
            config_after_sha256=after,
            installed_at=plan.now.isoformat(),
            memwarden_version=__version__,
            created_dirs=list(dict.fromkeys([*earlier, *map(str, created_dirs)])),
            files={**(record.files if record else {}), **plan.written_files},
        ),
    )


def _diff_lines(path: Path, before: bytes | None, after: bytes) -> list[str]:
    """The change to the gateway config as a unified diff, indented, for a dry run."""
    import difflib

    old = (before or b"").decode("utf-8", "replace").splitlines()
    new = after.decode("utf-8", "replace").splitlines()
    diff = difflib.unified_diff(old, new, f"{path} (now)", f"{path} (after)", lineterm="")
    return [f"    {line}" for line in diff]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _manual(plan: HooksPlan, enable: bool) -> str:
    if enable:
        snippet = orjson.dumps(hooks_switched({}, plan.names, True)).decode()
        plan.problems.append(
            "enable the hooks yourself: "
            + " && ".join(f"openclaw hooks enable {name}" for name in plan.names)
            + f"; or merge {snippet} into {plan.config_path}"
        )
    else:
        keys = ", ".join(f"hooks.internal.entries.{name}" for name in plan.names)
        plan.problems.append(f"remove {keys} from {plan.config_path} yourself")
    return "manual"


def _opens_selection(config: Mapping[str, Any]) -> bool:
    internal = mapping(mapping(config.get("hooks")).get("internal"))
    return internal.get("enabled") is True and not mapping(internal.get("entries"))
