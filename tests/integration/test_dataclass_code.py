"""memwarden's dataclass methods compiled once and kept between runs (memwarden.dataclass_code):
the kept code is what dataclasses would compile, read back only from a private, intact file."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from dataclasses import make_dataclass

import pytest

from memwarden import dataclass_code

SOURCE = "def __create_fn__():\n def answer(self):\n  return 42\n return answer"


def fresh(folder, *, may_write: bool = True) -> dataclass_code._Cache:
    cache = dataclass_code._Cache(folder / "memwarden" / "dataclasses")
    cache.writes = may_write
    return cache


def made(cache: dataclass_code._Cache, module: str = "memwarden.example"):
    namespace: dict = {}
    cache.exec(SOURCE, {"__name__": module}, namespace)
    return namespace["__create_fn__"]()


@pytest.fixture
def writes_bytecode(monkeypatch):
    monkeypatch.setattr(sys, "flags", type("Flags", (), {"dont_write_bytecode": False})())


def test_kept_code_is_read_back_by_the_next_run_without_compiling(
    tmp_path, monkeypatch, writes_bytecode
):
    first = fresh(tmp_path)
    assert made(first)(None) == 42
    first.save()
    folder = tmp_path / "memwarden" / "dataclasses"
    (kept,) = folder.iterdir()
    assert kept.name == f"memwarden.example.{sys.implementation.cache_tag}.bin"
    assert (oct(folder.stat().st_mode & 0o777), oct(kept.stat().st_mode & 0o777)) == (
        "0o700",
        "0o600",
    )

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(builtins, "compile", no_compile)
    second = fresh(tmp_path)
    assert made(second)(None) == 42
    modified = kept.stat().st_mtime_ns
    second.save()  # nothing new: nothing written
    assert kept.stat().st_mtime_ns == modified


@pytest.mark.parametrize("damage", ["flipped byte", "cut short", "others may write"])
def test_a_damaged_or_foreign_file_is_only_a_compile(tmp_path, writes_bytecode, damage):
    first = fresh(tmp_path)
    made(first)
    first.save()
    (kept,) = (tmp_path / "memwarden" / "dataclasses").iterdir()
    data = bytearray(kept.read_bytes())
    if damage == "flipped byte":
        data[-5] ^= 0xFF
        kept.write_bytes(bytes(data))
    elif damage == "cut short":
        kept.write_bytes(bytes(data[:-7]))
    else:
        kept.chmod(0o666)

    second = fresh(tmp_path)
    assert made(second)(None) == 42
    assert second.compiled == {"memwarden.example"}


def test_other_modules_dataclasses_are_left_to_python(tmp_path, writes_bytecode):
    cache = fresh(tmp_path)
    assert made(cache, module="someone.else")(None) == 42
    cache.save()
    assert cache.kept == {}
    assert not (tmp_path / "memwarden").exists()


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "flags", type("Flags", (), {"dont_write_bytecode": True})())
    cache = fresh(tmp_path)
    made(cache)
    cache.save()
    assert not (tmp_path / "memwarden").exists()


def test_a_run_that_never_says_it_may_write_reads_the_kept_code_and_writes_none(
    tmp_path, monkeypatch, writes_bytecode
):
    # A dry run, a read-only command, --help or a usage error: the CLI never calls may_write.
    kept_before = fresh(tmp_path)
    made(kept_before)
    made(kept_before, module="memwarden.other")
    kept_before.save()
    (tmp_path / "memwarden" / "dataclasses" / kept_before._path("memwarden.other").name).unlink()
    cache = fresh(tmp_path, may_write=False)

    made(cache)
    made(cache, module="memwarden.other")  # compiled again: its file is gone
    cache.save()

    assert cache.compiled == {"memwarden.other"}  # memwarden.example came from its file
    assert [path.name for path in (tmp_path / "memwarden" / "dataclasses").iterdir()] == [
        kept_before._path("memwarden.example").name
    ]
    monkeypatch.setattr(dataclass_code, "_installed", cache)
    dataclass_code.may_write()  # a run that may write
    cache.save()
    assert cache._path("memwarden.other").exists()


def test_memwarden_dataclasses_behave_the_same_from_kept_code(tmp_path):
    probe = (
        "from memwarden import dataclass_code\n"
        "dataclass_code.may_write()\n"
        "from memwarden.checkpoint.extract import Excerpt\n"
        "from memwarden.openclaw.transcripts import ReadPosition\n"
        "a, b = Excerpt('user', 'hi', None), Excerpt('user', 'hi', None)\n"
        "position = ReadPosition(offset=3)\n"
        "print(a == b, hash(a) == hash(b), repr(a), position.to_json())\n"
        "try:\n"
        "    a.text = 'changed'\n"
        "except AttributeError as error:\n"
        "    print(type(error).__name__)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run() -> str:
        completed = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        )
        return completed.stdout

    compiled, kept = run(), run()

    assert compiled == kept
    assert compiled.splitlines() == [
        "True True Excerpt(role='user', text='hi', time=None) {'offset': 3}",
        "FrozenInstanceError",
    ]
    assert (tmp_path / "memwarden" / "dataclasses").is_dir()


def test_installed_before_memwarden_makes_its_first_dataclass():
    import dataclasses

    cache = getattr(dataclasses, "exec", None)
    assert cache is not None and isinstance(cache.__self__, dataclass_code._Cache)
    assert "memwarden.config" in cache.__self__.used  # its dataclasses went through the cache
    example = make_dataclass("Example", [("value", int)])  # anyone else's: as Python makes them
    assert example(1) == example(1)
