"""Jinja2 rendering for the files a person reads (units, alerts, summaries), and for operators'
own templates (the bundled handoff, daily-log and INDEX.md templates are written in Python:
checkpoint.render.bundled, indexing.index_file).

One environment per process, templates compiled once a process; an operator may point an option
at a template file of their own, which is loaded from its folder instead. jinja2 itself is
imported on the first render, so a run that renders nothing never pays for it.

An operator's template is code memwarden did not write: it renders in jinja2's immutable sandbox
(no attributes starting with `_`, no calls to unsafe methods, no changes to the values it is
given), so it cannot reach Python's builtins or run a command. memwarden's bundled templates are
its own code and render in the plain environment, which calls attributes directly.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


@cache
def _environment(folder: str | None) -> jinja2.Environment:
    import jinja2

    loader: jinja2.BaseLoader
    kind: type[jinja2.Environment]
    if folder is None:
        loader, kind = jinja2.PackageLoader("memwarden", "templates"), jinja2.Environment
    else:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        loader, kind = jinja2.FileSystemLoader(folder), ImmutableSandboxedEnvironment
    return kind(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, unit files and plists, never HTML
    )


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
