"""The record of `memwarden install hooks`, kept in memwarden's storage for the uninstall.

`<storage_dir>/install/hooks.json` (0600): the gateway config as it was before the first
install (its text, or null when there was none), the SHA-256 of the config as install left it,
the folders install created in the gateway's state dir, and the SHA-256 of each hook file it
wrote (`session-summary/handler.js`). Uninstall puts the config back byte for byte while it is
still as install left it, and removes what install created and nobody changed since.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

from memwarden.files import atomic_write
from memwarden.scheduling.manifest import load_record_file, manifest_path

TARGET = "hooks"


@dataclass
class HooksRecord:
    """What an install of the hooks changed in the gateway's state dir."""

    config_path: str
    config_before: str | None  # the config's text before the first install; None: no file
    config_after_sha256: str | None  # the config as the last install left it; None: no file
    installed_at: str
    memwarden_version: str
    created_dirs: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # "<hook>/<file>" -> SHA-256 written

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def record_path(storage_dir: Path) -> Path:
    return manifest_path(storage_dir, TARGET)


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


def save_record(storage_dir: Path, record: HooksRecord) -> Path:
    path = record_path(storage_dir)
    atomic_write(path, record.to_json() + b"\n", root=storage_dir)
    return path
