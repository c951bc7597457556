"""The hook folders in the gateway's `<state>/hooks/`: memwarden's files copied in at install,
removed at uninstall, and never a file or a folder that is not memwarden's.

A folder of that name that is not memwarden's hook stops the install before it writes anything
(exit 2). A hook file changed since memwarden wrote it (its SHA-256 in the record) is copied to
`<storage>/hook-backups/<UTC time>-<hook>/` before it is replaced, and so is one an install that
recorded no SHA-256 wrote, when it differs. Uninstall removes the files install wrote and nobody
changed (an edited one only with --force; another file never), and each folder once empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memwarden.fs.files import atomic_write, sha256_bytes
from memwarden.gateway_hooks.plan import HooksPlan
from memwarden.gateway_hooks.shipped import HOOK_FILES, SETTINGS_FILE, current_bytes, shipped_files
from memwarden.process.errors import UsageError
from memwarden.store.storage import backup_name

BACKUP_DIR = "hook-backups"


def refuse_foreign_folder(folder: Path, name: str) -> None:
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


def copy_hook(
    plan: HooksPlan, name: str, files: Mapping[str, bytes], known: Mapping[str, str], dry_run: bool
) -> dict:
    """Write the hook's `files` into its folder, keeping a copy of what each replaces unless
    memwarden wrote it (`known`: the recorded SHA-256s); return what was (or would be) done."""
    folder = plan.hooks_dir / name
    current = {file: current_bytes(folder / file) for file in files}
    changed = [file for file, payload in files.items() if current[file] != payload]
    # A file replaced that is not as memwarden wrote it: `edited` since (it differs from its
    # recorded SHA-256) or `unknown` (written by a memwarden that recorded none).
    recorded = {file: known.get(f"{name}/{file}") for file in changed if current[file] is not None}
    edited = sorted(
        file
        for file, sha256 in recorded.items()
        if sha256 is not None and sha256_bytes(current[file]) != sha256
    )
    unknown = [file for file, sha256 in recorded.items() if sha256 is None]
    replaced = [*edited, *unknown]
    kept_in = plan.storage_dir / BACKUP_DIR / backup_name(name, plan.now)
    if changed and not dry_run:
        for file in replaced:
            atomic_write(kept_in / file, current[file], root=plan.storage_dir)
        for file in changed:
            atomic_write(folder / file, files[file], root=plan.state_dir)
    status = "unchanged" if not changed else "would_copy" if dry_run else "copied"
    verb = {"unchanged": "already installed", "would_copy": "would copy", "copied": "copied"}
    detail = f" ({', '.join(changed)})" if changed else ""
    plan.lines.append(f"hook {name}: {verb[status]} in {folder}{detail}")
    where = f"{'would keep' if dry_run else 'kept'} a copy in {kept_in}"
    if edited:
        plan.problems.append(
            f"{folder}: {', '.join(edited)} changed since memwarden installed it; replaced, {where}"
        )
    if unknown:
        plan.lines.append(f"hook {name}: {where} of what it replaced ({', '.join(unknown)})")
    return {
        "name": name,
        "path": str(folder),
        "files": status,
        "changed": changed,
        "edited": edited,
        "kept_in": str(kept_in) if replaced else None,
    }


def remove_hook(
    plan: HooksPlan, name: str, known: Mapping[str, str], dry_run: bool, force: bool
) -> dict:
    """Remove memwarden's files from the hook's folder (one changed since only with `force`),
    and the folder when nothing else is in it; return what was (or would be) done."""
    folder = plan.hooks_dir / name
    entry = {"name": name, "path": str(folder)}
    if not folder.is_symlink() and not (folder / "HOOK.md").is_file():
        plan.lines.append(f"hook {name}: not installed in {plan.hooks_dir}")
        return entry | {"files": "absent"}
    if folder.is_symlink() or not _is_memwarden_hook(folder, name):
        plan.problems.append(f"{folder}: not memwarden's {name} hook; left in place")
        return entry | {"files": "foreign"}
    shipped = shipped_files(name)
    current = {file: current_bytes(folder / file) for file in (*HOOK_FILES, SETTINGS_FILE)}
    ours = {file: payload for file, payload in current.items() if payload}
    edited = [
        file
        for file, payload in ours.items()
        if not _unchanged(payload, known.get(f"{name}/{file}"), shipped.get(file))
    ]
    if edited and not force:
        since = (
            "changed since memwarden installed it"
            if any(key.startswith(f"{name}/") for key in known)
            else "differs from this memwarden's (installed by an earlier one, or edited)"
        )
        plan.problems.append(
            f"{folder}: {', '.join(edited)} {since}; the hook is kept "
            "(`memwarden uninstall hooks --force` removes memwarden's files)"
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


def _is_memwarden_hook(folder: Path, name: str) -> bool:
    hook_md = current_bytes(folder / "HOOK.md")
    text = hook_md.decode("utf-8", "replace") if hook_md is not None else ""
    return f"name: {name}" in text and "memwarden" in text


def _unchanged(current: bytes, recorded_sha256: str | None, shipped: bytes | None) -> bool:
    """Whether a hook file's bytes are as memwarden wrote them: its recorded SHA-256, else (an
    install that recorded none) the file this memwarden ships; memwarden.json is memwarden's own
    either way."""
    if recorded_sha256 is not None:
        return sha256_bytes(current) == recorded_sha256
    return shipped is None or current == shipped
