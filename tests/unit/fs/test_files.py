"""Safe writes: atomic, private, never through a symlink or out of the root folder."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from memwarden.fs import files
from memwarden.fs.files import (
    atomic_append,
    atomic_write,
    check_inside,
    ensure_dir,
    memory_folder,
    real_path,
)
from memwarden.process.errors import NotRegularFileError, UnsafePathError
from support.fsyncs import record_fsyncs


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_write_new_file_is_private_and_complete(tmp_path):
    target = tmp_path / "memory" / "ACTIVE_CONTEXT.md"
    atomic_write(target, "hello\n", root=tmp_path)
    assert target.read_text() == "hello\n"
    assert mode(target) == 0o600
    assert mode(target.parent) == 0o700
    assert [p.name for p in target.parent.iterdir()] == ["ACTIVE_CONTEXT.md"]


def test_atomic_write_replaces_existing_content_whole(tmp_path):
    target = tmp_path / "f.md"
    target.write_text("old " * 1000)
    atomic_write(target, b"new", root=tmp_path)
    assert target.read_bytes() == b"new"


def test_atomic_write_failure_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "f.md"
    target.write_text("precious")

    def broken_fsync(descriptor):
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="I/O error"):
        atomic_write(target, "new", root=tmp_path)
    assert target.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_atomic_write_through_symlink_is_refused(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("keep")
    workspace = ensure_dir(tmp_path / "ws")
    (workspace / "link.md").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="symlink"):
        atomic_write(workspace / "link.md", "x", root=workspace)
    assert outside.read_text() == "keep"


def test_atomic_write_symlinked_folder_leaving_root_is_refused(tmp_path):
    elsewhere = ensure_dir(tmp_path / "elsewhere")
    workspace = ensure_dir(tmp_path / "ws")
    (workspace / "memory").symlink_to(elsewhere)
    with pytest.raises(UnsafePathError, match="outside"):
        atomic_write(workspace / "memory" / "x.md", "x", root=workspace)
    assert list(elsewhere.iterdir()) == []


def test_check_inside_dotdot_escape_is_refused(tmp_path):
    workspace = ensure_dir(tmp_path / "ws")
    with pytest.raises(UnsafePathError):
        check_inside(workspace / ".." / "evil.md", workspace)


def test_check_inside_symlinked_root_is_followed_once(tmp_path):
    real = ensure_dir(tmp_path / "real")
    (tmp_path / "alias").symlink_to(real)
    assert check_inside(tmp_path / "alias" / "memory" / "a.md", tmp_path / "alias") == (
        real / "memory" / "a.md"
    )


def test_check_inside_with_real_root_resolves_folders_below_it(tmp_path):
    real = ensure_dir(tmp_path / "real")
    (tmp_path / "alias").symlink_to(real)
    ensure_dir(real / "memory" / "deep")
    resolved = Path(os.path.realpath(tmp_path / "alias"))
    for root in (tmp_path / "alias", resolved):
        target = root / "memory" / "deep" / "a.md"
        assert check_inside(target, tmp_path / "alias", real_root=resolved) == (
            real / "memory" / "deep" / "a.md"
        )


def test_check_inside_with_real_root_still_refuses_a_link_below_it(tmp_path):
    elsewhere = ensure_dir(tmp_path / "elsewhere")
    workspace = ensure_dir(tmp_path / "ws")
    ensure_dir(workspace / "memory")
    (workspace / "memory" / "archive").symlink_to(elsewhere)
    for real_root in (None, workspace.resolve()):
        with pytest.raises(UnsafePathError, match="outside"):
            check_inside(workspace / "memory" / "archive" / "x.md", workspace, real_root=real_root)
        with pytest.raises(UnsafePathError):
            escape = workspace / "memory" / ".." / ".." / "x.md"
            check_inside(escape, workspace, real_root=real_root)


def test_atomic_append_creates_with_header_then_appends(tmp_path):
    log = tmp_path / "memory" / "2026-11-22.md"
    atomic_append(log, "- one\n", root=tmp_path, header="# Day\n\n")
    atomic_append(log, "- two\n", root=tmp_path, header="# Day\n\n")
    assert log.read_text() == "# Day\n\n- one\n- two\n"
    assert mode(log) == 0o600


def test_atomic_append_adds_missing_final_newline(tmp_path):
    log = tmp_path / "log.md"
    log.write_text("no newline")
    atomic_append(log, "next\n", root=tmp_path)
    assert log.read_text() == "no newline\nnext\n"


def test_ensure_dir_missing_parents_are_all_private(tmp_path):
    leaf = ensure_dir(tmp_path / "a" / "b" / "c")
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", leaf)] == [0o700] * 3


def test_atomic_append_concurrent_writer_change_is_kept(tmp_path, monkeypatch):
    import memwarden.fs.files as files

    log = tmp_path / "day.md"
    log.write_text("# Day\n")
    real_write_temp = files.write_temp
    calls = []

    def agent_appends_meanwhile(target, payload):
        temp = real_write_temp(target, payload)
        if not calls:
            calls.append(1)
            with open(log, "a") as handle:
                handle.write("- the agent's own note\n")
        return temp

    monkeypatch.setattr(files, "write_temp", agent_appends_meanwhile)
    atomic_append(log, "- memwarden entry\n", root=tmp_path)
    assert log.read_text() == "# Day\n- the agent's own note\n- memwarden entry\n"
    assert [p.name for p in tmp_path.iterdir()] == ["day.md"]


def test_atomic_write_from_many_threads_each_write_is_whole(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    target = tmp_path / "ACTIVE_CONTEXT.md"
    texts = [f"agent {number}\n" * 2000 for number in range(16)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda text: atomic_write(target, text, root=tmp_path), texts))
    assert target.read_text() in texts
    assert mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["ACTIVE_CONTEXT.md"]


def test_real_path_is_what_os_path_realpath_says_for_every_kind_of_path(tmp_path, monkeypatch):
    real = tmp_path / "real" / "workspace"
    real.mkdir(parents=True)
    (real / "file.md").write_text("x")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    monkeypatch.chdir(tmp_path)
    paths = [
        real,
        real / "file.md",
        tmp_path / "link",
        tmp_path / "link" / "file.md",
        tmp_path / "link" / ".." / "workspace",
        tmp_path / "dangling",
        tmp_path / "loop",
        tmp_path / "missing" / "below",
        Path("link"),
        "link/file.md",
    ]
    expected = [os.path.realpath(path) for path in paths]
    asked = []
    python_realpath = os.path.realpath
    monkeypatch.setattr(
        os.path, "realpath", lambda path: asked.append(path) or python_realpath(path)
    )

    assert [real_path(path) for path in paths] == expected
    if sys.platform.startswith("linux"):  # the kernel answered for every path it could open
        assert asked == [tmp_path / "dangling", tmp_path / "loop", tmp_path / "missing" / "below"]


def test_atomic_write_flushes_the_file_then_its_folder(tmp_path, monkeypatch):
    target = tmp_path / "memory" / "manifest.json"
    target.parent.mkdir()
    target.write_text("old")
    fsynced = record_fsyncs(monkeypatch)
    atomic_write(target, "new", root=tmp_path)

    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    temp, folder = fsynced
    assert Path(temp).parent == target.parent and Path(temp).name.startswith(".manifest.json.")
    assert folder == str(target.parent)


def test_flush_folder_says_what_fsync_dir_leaves_unsaid(tmp_path, monkeypatch):
    def failing(descriptor):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    files.fsync_dir(tmp_path)  # where a folder cannot be flushed, a write goes on
    with pytest.raises(OSError, match="Input/output error"):
        files.flush_folder(tmp_path)  # where it must be durable, the caller hears of it


def test_file_reads_refuse_a_fifo_a_device_and_a_folder_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused = {fifo: "it is a named pipe (FIFO), not a regular file"}
    refused |= {Path("/dev/null"): "it is a device, not a regular file"}
    refused |= {tmp_path: "it is a folder, not a file"}
    for path, words in refused.items():
        for read in (files.read_regular_file, files.read_text_if_exists):
            with pytest.raises(NotRegularFileError) as raised:
                read(path)
            assert (raised.value.strerror, raised.value.filename) == (words, str(path))
    (tmp_path / "config.toml").write_bytes(b"[general]\n")
    assert files.read_regular_file(tmp_path / "config.toml") == b"[general]\n"


def test_atomic_write_whose_rename_fails_leaves_no_temp_file_and_names_the_target(tmp_path):
    target = tmp_path / "INDEX.md"
    (target / "in the way").mkdir(parents=True)  # a rename over it fails, as over chattr +i
    with pytest.raises(OSError) as raised:
        atomic_write(target, "# index\n")
    assert raised.value.filename == str(target)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["INDEX.md"]


def test_memory_folder_may_link_to_a_folder_inside_the_workspace(tmp_path):
    workspace = ensure_dir(tmp_path / "ws")
    ensure_dir(workspace / "notes")
    (workspace / "memory").symlink_to("notes", target_is_directory=True)
    assert memory_folder(workspace, create=True) == workspace / "memory"


@pytest.mark.parametrize(
    ("target", "said"),
    [
        (".", r"memory: a link to the workspace itself; make memory/ a folder"),
        ("..", r"memory: resolves to .*, outside the workspace"),
        ("../elsewhere", r"memory: resolves to .*, outside the workspace"),
    ],
)
def test_memory_folder_linked_out_or_to_the_workspace_itself_is_refused(tmp_path, target, said):
    ensure_dir(tmp_path / "elsewhere")
    workspace = ensure_dir(tmp_path / "ws")
    (workspace / "memory").symlink_to(target, target_is_directory=True)
    with pytest.raises(UnsafePathError, match=said):
        memory_folder(workspace, create=True)


def test_memory_folder_of_a_missing_workspace_is_refused_naming_the_setting(tmp_path):
    with pytest.raises(UnsafePathError, match=r"check the agent.s `workspace` in openclaw\.json"):
        memory_folder(tmp_path / "gone", create=True)


def test_write_new_never_replaces_a_file_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "record.json"
    assert files.write_new(path, b"first\n")
    assert not files.write_new(path, b"second\n")
    assert path.read_bytes() == b"first\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in tmp_path.iterdir()] == ["record.json"]
