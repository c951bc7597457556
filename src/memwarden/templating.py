"""Jinja2 rendering for every file a person reads (ACTIVE_CONTEXT.md, INDEX.md, units, alerts).

One environment per process, templates compiled once and cached; an operator may point an option
at a template file of their own, which is loaded from its folder instead.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2


@cache
def _environment(folder: str | None) -> jinja2.Environment:
    loader: jinja2.BaseLoader
    if folder is None:
        loader = jinja2.PackageLoader("memwarden", "templates")
    else:
        loader = jinja2.FileSystemLoader(folder)
    return jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - Markdown, unit files and plists, never HTML
    )


@cache
def template(name: str, custom_path: str | None = None) -> jinja2.Template:
    """Return the compiled template `name` (e.g. "checkpoint/active_context.md.j2").

    With `custom_path` (an operator's own template file), load that file instead. Raise
    jinja2.TemplateError if it does not exist or does not compile.
    """
    if custom_path:
        path = Path(custom_path).expanduser()
        return _environment(str(path.parent)).get_template(path.name)
    return _environment(None).get_template(name)


def render(name: str, custom_path: str | None = None, **values: Any) -> str:
    """Render template `name` (or the operator's `custom_path`) with `values`."""
    return template(name, custom_path).render(**values)
