"""No import circles among memwarden's modules: every import counts, function-local and
`TYPE_CHECKING` ones included, so a package reads one way, in the order its data flows."""

from __future__ import annotations

import ast
from pathlib import Path

import memwarden

SOURCE = Path(memwarden.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(
    source: str, name: str, modules: set[str], *, package: bool = False
) -> set[str]:
    """Given a module's source and dotted name, return the memwarden modules it imports
    anywhere in its body (module level, functions, `if TYPE_CHECKING:`)."""
    package_name = name if package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package_name.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(SOURCE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {
        module_name(path): imported_modules(
            path.read_text(encoding="utf-8"),
            module_name(path),
            modules,
            package=path.name == "__init__.py",
        )
        for path in paths
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                lowest[module] = min(lowest[module], lowest[target])
            elif target in on_stack:
                lowest[module] = min(lowest[module], index[target])
        if lowest[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_import_graph_of_memwarden_has_no_circle():
    assert cycles(import_graph()) == []


def test_import_graph_circle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_import_graph_reads_function_local_and_type_checking_imports():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from memwarden.state import StateDB\n"
        "def run():\n    from memwarden.checkpoint import report\n    import memwarden.files\n"
        "    from . import outcome\n"
    )
    modules = {
        "memwarden.state",
        "memwarden.checkpoint",
        "memwarden.checkpoint.report",
        "memwarden.files",
        "memwarden.checkpoint.outcome",
    }
    found = imported_modules(source, "memwarden.checkpoint.agents", modules)
    assert found == {
        "memwarden.state",
        "memwarden.checkpoint.report",
        "memwarden.files",
        "memwarden.checkpoint.outcome",
    }
