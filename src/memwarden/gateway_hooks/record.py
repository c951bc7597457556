"""What `memwarden install hooks` did, kept in memwarden's storage for `uninstall hooks`.

`<storage_dir>/install/hooks.json` (0600): the gateway config as it was before the first
install (its text, or null when there was none), the SHA-256 of the config as install left it,
the folders install created in the gateway's state dir, and the SHA-256 of each hook file it
wrote (`session-summary/handler.js`). Uninstall puts the config back byte for byte while it is
still as install left it, and removes what install created and nobody changed since.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from memwarden import __version__
from memwarden.fs.files import load_record_file, sha256_bytes, sha256_file, write_record_file
from memwarden.gateway_hooks.plan import HooksPlan
from memwarden.scheduling.manifest import manifest_path


@dataclass
class HooksRecord:
    config_path: str
    config_before: str | None  # the config's text before the first install; None: no file
    config_after_sha256: str | None  # the config as the last install left it; None: no file
    installed_at: str
    memwarden_version: str
    created_dirs: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # "<hook>/<file>" -> SHA-256 written

    def left_as_installed(self, config_path: Path) -> bool:
        """Whether the config is this record's and still exactly as install left it."""
        return self.config_path == str(config_path) and (
            sha256_file(config_path) == self.config_after_sha256
        )


def record_path(storage_dir: Path) -> Path:
    return manifest_path(storage_dir, "hooks")


def load_record(storage_dir: Path) -> HooksRecord | None:
    """Return the record of the hooks install, or None. Raise UsageError if it is unreadable."""
    return load_record_file(
        record_path(storage_dir),
        lambda data: HooksRecord(
            **{key: data[key] for key in HooksRecord.__dataclass_fields__ if key in data}
        ),
        "record of the hooks install",
        "remove memwarden's hooks' entries from the gateway config by hand (see docs/hooks.md) "
        "and delete this file",
    )


def save_record(
    plan: HooksPlan,
    previous: HooksRecord | None,
    config: tuple[str | None, str | None] | None,
    config_left_to_operator: bool,
    created_dirs: list[Path],
    files: dict[str, str],
) -> None:
    """Record an install after `previous`: the folders it created, the files it wrote, and
    `config`, the config's text before and after it (None: unreadable). The text before is the
    one before the first install; a config left to the operator keeps what was recorded of it,
    or (with no record) is recorded as it is: install did not change it."""
    created = [*(previous.created_dirs if previous else []), *map(str, created_dirs)]
    written = {**(previous.files if previous else {}), **files}
    if config_left_to_operator and previous is not None:
        record = replace(previous, created_dirs=list(dict.fromkeys(created)), files=written)
    elif config is None:
        return  # nothing known of the config: `uninstall hooks` takes the files for an earlier's
    else:
        same = previous is not None and previous.config_path == str(plan.config_path)
        record = HooksRecord(
            config_path=str(plan.config_path),
            config_before=previous.config_before if previous and same else config[0],
            config_after_sha256=sha256_bytes(config[1].encode()) if config[1] is not None else None,
            installed_at=plan.now.isoformat(),
            memwarden_version=__version__,
            created_dirs=list(dict.fromkeys(created)),
            files=written,
        )
    write_record_file(record_path(plan.storage_dir), record, plan.storage_dir)
