"""The code of memwarden's dataclass methods, compiled once and kept between runs.

`dataclasses` writes the source of the methods it gives a class (`__init__`, `__repr__`,
`__eq__`, a frozen class's `__setattr__`...) and compiles it each time the class is created:
about 0.3 ms a class, some 20 ms for the modules a checkpoint loads, in every run. That code
depends on the source text alone, so it is kept, by module, in memwarden's cache folder
(`$XDG_CACHE_HOME/memwarden/dataclasses/`, else `~/.cache/...`; 0700, files 0600) and read
back when the module creates its first dataclass; a run that compiled anything new writes the
module's file again at exit, with what the module uses now. A file that is missing, damaged
(checked against its CRC) or made by another Python is only a compile; nothing is written
by a run that must create nothing (only a run that may write says so: `may_write`), where Python
writes no bytecode (`PYTHONDONTWRITEBYTECODE`), or when the folder cannot be made.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import marshal
import os
import struct
import sys
import zlib
from functools import cached_property
from pathlib import Path
from types import CodeType
from typing import Any

from memwarden.xdg import xdg_home

_HEADER = struct.Struct("<II")  # CRC-32 and length of what follows
_MODULES = "memwarden."


def install() -> None:
    """Make the dataclasses of memwarden's modules use the kept code (once a process)."""
    global _installed
    if getattr(dataclasses, "exec", None) is not None:  # installed already, or not ours to set
        return
    folder = _folder()
    if folder is None:
        return
    cache = _installed = _Cache(folder)
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # shadows the builtin there
    atexit.register(cache.save)


def may_write() -> None:
    """Let this process write the code it compiled at exit: a run that may create files (not a
    dry run, a read-only command, `--help` or a usage error, which only read the kept code)."""
    if _installed is not None:
        _installed.writes = True


def write_nothing() -> None:
    """Take back `may_write`: the run ended in a usage or configuration error."""
    if _installed is not None:
        _installed.writes = False


_installed: _Cache | None = None


def _folder() -> Path | None:
    try:
        return xdg_home(os.environ, "XDG_CACHE_HOME", ".cache") / "memwarden" / "dataclasses"
    except (KeyError, RuntimeError):  # no home to keep it in
        return None


class _Cache:
    """The kept code of each module that made a dataclass in this process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.kept: dict[str, dict[str, CodeType]] = {}
        self.used: dict[str, dict[str, CodeType]] = {}
        self.compiled: set[str] = set()
        self.pid = os.getpid()
        self.writes = False  # until the run says it may write (may_write)

    def exec(self, source: Any, globals: dict[str, Any] | None = None, *rest: Any) -> None:
        """`exec` as dataclasses calls it, with the source compiled before if it was."""
        module = globals.get("__name__") if globals is not None else None
        if type(source) is str and isinstance(module, str) and module.startswith(_MODULES):
            source = self._code(module, source)
        builtins.exec(source, globals, *rest)  # noqa: S102 - dataclasses' own generated code

    def _code(self, module: str, source: str) -> CodeType:
        kept = self.kept.get(module)
        if kept is None:
            kept = self.kept[module] = self._read(module)
            self.used[module] = {}
        code = kept.get(source)
        if code is None:
            code = kept[source] = compile(source, "<string>", "exec")
            self.compiled.add(module)
        self.used[module][source] = code
        return code

    @cached_property
    def _private_folder(self) -> bool:
        try:
            return _private(os.stat(self.folder))
        except OSError:
            return False

    def _path(self, module: str) -> Path:
        return self.folder / f"{module}.{sys.implementation.cache_tag}.bin"

    def _read(self, module: str) -> dict[str, CodeType]:
        try:
            descriptor = os.open(self._path(module), os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(descriptor, "rb") as handle:
                if not (self._private_folder and _private(os.fstat(handle.fileno()))):
                    return {}  # code only from files no one else could have written
                data = handle.read()
            crc, size = _HEADER.unpack_from(data)
            payload = data[_HEADER.size :]
            if size != len(payload) or crc != zlib.crc32(payload):
                return {}
            codes = marshal.loads(payload)  # noqa: S302 - our own file, checked above
        except (OSError, ValueError, EOFError, TypeError, struct.error):
            return {}
        if not isinstance(codes, dict):
            return {}
        return {
            source: code
            for source, code in codes.items()
            if type(source) is str and type(code) is CodeType
        }

    def save(self) -> None:
        """Write the file of each module that compiled anything new (this process only)."""
        if not (self.compiled and self.writes) or os.getpid() != self.pid:
            return
        if sys.flags.dont_write_bytecode:  # as Python's own bytecode
            return
        from memwarden.errors import MemwardenError
        from memwarden.files import atomic_write

        try:
            for module in sorted(self.compiled):
                payload = marshal.dumps(self.used[module])
                header = _HEADER.pack(zlib.crc32(payload), len(payload))
                atomic_write(self._path(module), header + payload)
        except (OSError, MemwardenError):  # a cache that cannot be written is only a miss
            return


def _private(status: os.stat_result) -> bool:
    """Return True when this user owns the file or folder and no one else may write to it."""
    return status.st_uid == os.getuid() and not status.st_mode & 0o022
