"""Jinja2 rendering for the files a person reads (units, alerts, summaries), and for operators'
own templates (the bundled handoff, daily-log and INDEX.md templates are written in Python:
checkpoint.bundled, indexing.index_text).

One environment per process, templates compiled once and cached; an operator may point an option
at a template file of their own, which is loaded from its folder instead. When the CLI names a
cache folder (in memwarden's own state dir), compiled templates are kept there too, so the next
run loads them instead of compiling them again (a few milliseconds a template). jinja2 itself is
imported on the first render, so a run that renders nothing never pays for it (the checkpoint's
bundled templates are written without it: checkpoint.bundled).

An operator's template is code memwarden did not write: it renders in jinja2's immutable sandbox
(no attributes starting with `_`, no calls to unsafe methods, no changes to the values it is
given), so it cannot reach Python's builtins or run a command. memwarden's bundled templates are
its own code and render in the plain environment, which calls attributes directly.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


CACHE_FOLDER = Path("cache", "templates")
OPERATOR_CACHE_FOLDER = CACHE_FOLDER / "operators"  # compiled for the sandbox: kept apart


@dataclass
class _Cache:
    """memwarden's state dir, whose `cache/templates` keeps compiled templates (None: none)."""

    state_dir: Path | None = None


_CACHE = _Cache()
_ENVIRONMENTS: dict[str | None, jinja2.Environment] = {}


def cache_compiled_templates(state_dir: Path | None) -> None:
    """Keep compiled templates in `<state_dir>/cache/templates` (created 0700 when `state_dir`
    exists), or nowhere with None.

    A folder that cannot be created or written only costs a compile: rendering never fails
    because of it.
    """
    _CACHE.state_dir = state_dir
    for folder, environment in _ENVIRONMENTS.items():
        environment.bytecode_cache = _bytecode_cache(folder is not None)


def _environment(folder: str | None) -> jinja2.Environment:
    environment = _ENVIRONMENTS.get(folder)
    if environment is not None:
        return environment
    import jinja2

    loader: jinja2.BaseLoader
    kind: type[jinja2.Environment]
    if folder is None:
        loader, kind = jinja2.PackageLoader("memwarden", "templates"), jinja2.Environment
    else:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        loader, kind = jinja2.FileSystemLoader(folder), ImmutableSandboxedEnvironment
    environment = kind(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, unit files and plists, never HTML
        bytecode_cache=_bytecode_cache(folder is not None),
    )
    return _ENVIRONMENTS.setdefault(folder, environment)


def _bytecode_cache(operators: bool) -> jinja2.BytecodeCache | None:
    """Return the cache in `_CACHE.state_dir` (operators' templates in their own folder), or None
    when there is none (or it cannot be made).

    The state dir must exist: a cache never creates it.
    """
    state_dir = _CACHE.state_dir
    if state_dir is None or not state_dir.is_dir():
        return None
    folder = state_dir / (OPERATOR_CACHE_FOLDER if operators else CACHE_FOLDER)
    from memwarden.files import ensure_dir

    try:
        ensure_dir(folder)
    except OSError:
        return None
    return _quiet_cache_class()(str(folder))


@cache
def _quiet_cache_class() -> type[jinja2.FileSystemBytecodeCache]:
    import jinja2

    class QuietCache(jinja2.FileSystemBytecodeCache):
        """Jinja2's file cache (temp file, then rename), where a failed write is only a miss."""

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with suppress(OSError):
                super().dump_bytecode(bucket)

    return QuietCache


@cache
def template(name: str, custom_path: str | None = None) -> jinja2.Template:
    """Return the compiled template `name` (e.g. "checkpoint/active_context.md.j2").

    With `custom_path` (an operator's own template file), load that file instead, for the
    sandbox. Raise jinja2.TemplateError if it does not exist or does not compile.
    """
    if custom_path:
        path = Path(custom_path).expanduser()
        return _environment(str(path.parent)).get_template(path.name)
    return _environment(None).get_template(name)


def render(name: str, custom_path: str | None = None, **values: Any) -> str:
    """Render template `name` (or the operator's `custom_path`) with `values`."""
    return template(name, custom_path).render(**values)
