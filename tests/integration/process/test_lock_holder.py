"""What a run lock's file says once taken: this process's pid, whatever a former holder left."""

from __future__ import annotations

import os

import pytest

from memwarden.process.locks import RunLock


@pytest.mark.parametrize("left", ["", "7\n", "123456789012345678901234567890\n"])
def test_run_lock_file_left_by_former_holder_says_our_pid_only(tmp_path, left):
    (tmp_path / "checkpoint.lock").write_text(left)

    with RunLock(tmp_path, "checkpoint") as lock:
        held = lock.path.read_text()

    assert held == f"{os.getpid()}\n"
