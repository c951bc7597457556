"""Backups of the gateway config: when to take one, which to prune, and the drift guard."""

from __future__ import annotations

from typing import NamedTuple

from memwarden.store.storage import is_backup


class BackupDecision(NamedTuple):
    """Whether to back up the config now, and whether it shrank against the last backup."""

    take: bool
    shrunk: bool
    current_size: int
    previous_size: int | None


def decide_backup(
    current: bytes, latest: bytes | None, reference: bytes | None, shrink_ratio: float
) -> BackupDecision:
    """Given the config's bytes, the latest backup's (None: no backup yet) and the latest
    backup that holds a config the gateway could load (None: none), decide.

    A backup is taken when the content differs from the latest backup, also when it no longer
    parses (that is when a copy matters). The config shrank when it is smaller than
    `shrink_ratio` times the reference (a config wiped by an edit or a tool gone wrong), so a
    series of broken edits is measured against the last good config, not the last broken one.
    """
    previous_size = None if reference is None else len(reference)
    shrunk = previous_size is not None and len(current) < shrink_ratio * previous_size
    return BackupDecision(current != latest, shrunk, len(current), previous_size)


def latest_backup(names: list[str]) -> str | None:
    """Given the names in the backup folder, return the newest backup's, or None."""
    backups = sorted(name for name in names if is_backup(name))
    return backups[-1] if backups else None


def backups_to_prune(names: list[str], keep: int, spare: str | None = None) -> list[str]:
    """Given the names in the backup folder, return the backups beyond the newest `keep`, never
    `spare` (the last good config, while newer backups hold broken ones)."""
    backups = sorted(name for name in names if is_backup(name))
    return [name for name in backups[: max(0, len(backups) - keep)] if name != spare]
