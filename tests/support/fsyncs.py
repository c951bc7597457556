"""Which files and folders a test's code fsyncs, by path (Linux: read back through /proc)."""

from __future__ import annotations

import os

import pytest


def record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make `os.fsync` note the path of every descriptor it flushes (then flush it); return the
    list it fills, in order."""
    fsynced: list[str] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        fsynced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    return fsynced
