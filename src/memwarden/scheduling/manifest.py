"""The record of one install: every file written and every unit activated, for uninstall.

One JSON file per target under `<storage_dir>/install/<target>.json`. Uninstall removes exactly
what it lists: files whose content is still what install wrote, the folders install created when
they are empty again, and the scheduler entries it activated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memwarden.fs.files import load_record_file, write_record_file

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class InstalledFile:
    """A file install wrote: its path, the SHA-256 of what it wrote, and its role."""

    path: str
    sha256: str
    role: str


@dataclass
class Manifest:
    """What `memwarden install <target>` installed."""

    target: str
    installed_at: str
    memwarden_version: str
    executable: str
    jobs: dict[str, int]
    environment: dict[str, str]
    files: list[InstalledFile] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)
    crontab_existed: bool | None = None
    version: int = MANIFEST_VERSION

    def inactive_jobs(self) -> list[str]:
        """The jobs whose timer (systemd), agent (launchd) or crontab was not activated."""
        if self.target == "cron":
            return [] if self.activated else sorted(self.jobs)
        names = [name.removesuffix(".timer") for name in self.activated]
        return sorted(
            job for job in self.jobs if not any(n.endswith((f"-{job}", f".{job}")) for n in names)
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """Given the parsed JSON, return the manifest. Raise KeyError/TypeError if malformed."""
        files = [InstalledFile(**entry) for entry in data["files"]]
        fields = {key: data[key] for key in cls.__dataclass_fields__ if key in data}
        return cls(**(fields | {"files": files}))


def manifest_path(storage_dir: Path, target: str) -> Path:
    return storage_dir / "install" / f"{target}.json"


def load_manifest(storage_dir: Path, target: str) -> Manifest | None:
    """Given memwarden's storage dir and a target, return its manifest, or None if not installed.

    Raise UsageError naming the file if it exists but cannot be read.
    """
    return load_record_file(
        manifest_path(storage_dir, target),
        Manifest.from_json,
        "install manifest",
        f"remove the {target} units by hand (see docs/install.md) and delete this file",
    )


def save_manifest(storage_dir: Path, manifest: Manifest) -> Path:
    """Write the manifest atomically (0600) and return its path."""
    path = manifest_path(storage_dir, manifest.target)
    write_record_file(path, manifest, storage_dir)
    return path
