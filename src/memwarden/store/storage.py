"""Where memwarden keeps its state: one folder per gateway, under one storage root.

The root is `general.storage_dir`, else `$STATE_DIRECTORY` (systemd), else
`$XDG_STATE_HOME/memwarden`. A gateway is known by the real path of its state dir. The first
gateway memwarden writes state for owns the root itself, recorded in `<root>/gateway.json`:
a single-gateway host keeps the layout it always had, and a root from before per-gateway
storage (state.db, history/, locks/ directly in it) stays where it is and belongs to the first
gateway that runs a job after the upgrade. Every other gateway gets
`<root>/gateways/<name>-<hash>/`, so two gateways on one host (both with an agent `main`) never
share positions, history, alerts or runs.

Reading never claims: a root nobody owns yet is the storage of whoever asks, until a job that
writes claims it (`claim`).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import orjson

from memwarden.fs.files import (
    ensure_dir,
    remove_stale_temp_files,
    sha256_bytes,
    write_new,
)
from memwarden.process.errors import ConfigError

OWNER_FILE = "gateway.json"
GATEWAYS_DIR = "gateways"
CONFIG_BACKUPS_DIR = "config-backups"  # copies of the gateway config, by `backup_name`
# The names backup_name gives, and those of memwarden versions before microseconds.
_BACKUP = re.compile(r"^\d{8}T\d{6}(?:\.\d{6})?Z-.+$")
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


class Storage(NamedTuple):
    """The storage of one gateway: its folder, the root it is in, and who owns the root.

    `gateway` is the real path of the gateway's state dir; `owner` that of the gateway the root
    belongs to (None while nobody claimed it).
    """

    root: Path
    path: Path
    gateway: str
    owner: str | None

    @property
    def shared_root(self) -> bool:
        """Whether this gateway's state is the root itself (it owns it, or nobody does yet)."""
        return self.path == self.root

    def describe(self) -> str:
        """One line for people: which gateway, which folder."""
        claim = "" if self.owner is not None or not self.shared_root else " (not claimed yet)"
        return f"{self.path} (gateway {self.gateway}){claim}"

    def to_json(self) -> dict[str, str | None]:
        return {
            "storage_dir": str(self.path),
            "storage_root": str(self.root),
            "gateway": self.gateway,
            "root_owner": self.owner,
        }


def folder_name(gateway: str) -> str:
    """Given a gateway's key, return its folder under `<root>/gateways/`: readable and unique
    (`openclaw-3f2a9c1b7d4e` for `/home/alice/.openclaw`)."""
    readable = _UNSAFE.sub("-", Path(gateway).name.lower()).strip(".-") or "gateway"
    return f"{readable}-{sha256_bytes(gateway.encode())[:12]}"


def backup_name(source_name: str, moment: datetime) -> str:
    """Given a file's name and a time, return the name of its backup (sorts by time).

    Microseconds keep two backups taken within one second apart.
    """
    return f"{moment.astimezone(UTC):%Y%m%dT%H%M%S.%fZ}-{source_name}"


def is_backup(name: str) -> bool:
    """Return whether `name` is a backup's (as backup_name gives them, or without the
    microseconds, as memwarden versions before them did)."""
    return _BACKUP.match(name) is not None


def write_config_backup(
    storage_dir: Path, source_name: str, content: bytes | str, moment: datetime
) -> Path:
    """Copy `content` (the gateway config named `source_name`, taken at `moment`) to a new file
    `<storage_dir>/config-backups/<backup_name>` (0600, never over another backup: a microsecond
    later while the name is taken); return its path."""
    folder = ensure_dir(storage_dir / CONFIG_BACKUPS_DIR, root=storage_dir)
    payload = content.encode("utf-8") if isinstance(content, str) else content
    while not write_new(target := folder / backup_name(source_name, moment), payload):
        moment += timedelta(microseconds=1)  # another process's backup of the same instant
    return target


def locate(root: Path, state_dir: Path) -> Storage:
    """Given the storage root and a gateway's state dir, return that gateway's storage.

    Raise ConfigError if the root's owner record cannot be read.
    """
    gateway = os.path.realpath(state_dir)  # what identifies a gateway
    owner = read_owner(root)
    if owner is None or owner == gateway:
        return Storage(root, root, gateway, owner)
    return Storage(root, root / GATEWAYS_DIR / folder_name(gateway), gateway, owner)


def claim(storage: Storage) -> Storage:
    """Record that the root belongs to this gateway when nobody owns it yet; return the storage
    to use (another gateway's, if it claimed the root first: then this one gets its folder).

    A gateway whose state dir does not exist (a wrong path, a gateway not set up yet) claims
    nothing.
    """
    if storage.owner is not None or not storage.shared_root or not Path(storage.gateway).is_dir():
        return storage
    path = storage.root / OWNER_FILE
    record = {"state_dir": storage.gateway, "since": datetime.now(UTC).isoformat()}
    ensure_dir(storage.root)
    remove_stale_temp_files(storage.root, of=lambda target: target == OWNER_FILE)
    if not write_new(path, orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n"):
        return locate(storage.root, Path(storage.gateway))  # the first claim wins
    return storage._replace(owner=storage.gateway)


def storage_folders(root: Path) -> list[Path]:
    """Given the storage root, return every gateway's storage folder under it (the root first)."""
    gateways = root / GATEWAYS_DIR
    others = sorted(p for p in gateways.iterdir() if p.is_dir()) if gateways.is_dir() else []
    return [root, *others]


def read_owner(root: Path) -> str | None:
    """Return the gateway the root belongs to, or None when nobody claimed it.

    Raise ConfigError naming the file if it is not an owner record.
    """
    path = root / OWNER_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError([f"{path}: cannot read: {error.strerror or error}"]) from error
    try:
        owner = orjson.loads(raw).get("state_dir")
    except (orjson.JSONDecodeError, AttributeError):
        owner = None
    if not isinstance(owner, str) or not owner:
        raise ConfigError(
            [
                f"{path}: not a record of the gateway whose state is in {root}; write "
                '{"state_dir": "<that gateway\'s state dir>"} into it'
            ]
        )
    return owner


def release_if_empty(root: Path) -> bool:
    """Remove the root's owner record when it is all the root holds; return whether it did
    (so an uninstall that leaves nothing else also leaves no folder)."""
    try:
        entries = [entry.name for entry in root.iterdir()]
    except OSError:
        return False
    if entries != [OWNER_FILE]:
        return False
    (root / OWNER_FILE).unlink(missing_ok=True)
    return True
