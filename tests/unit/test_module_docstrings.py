"""Every module of memwarden opens with a docstring saying what it is for: a reader finds a
module's purpose in its first line, packages included."""

from __future__ import annotations

import ast
from pathlib import Path

import memwarden

SOURCE = Path(memwarden.__file__).parent


def test_every_module_opens_with_what_it_is_for() -> None:
    missing = [
        str(path.relative_to(SOURCE.parent))
        for path in sorted(SOURCE.rglob("*.py"))
        if not (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert missing == []
