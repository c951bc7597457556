"""The bundled checkpoint templates (`templates/checkpoint/*.j2`) as Python functions that write
the same text, so a run that renders only those never imports jinja2 (about 30 ms a run).

The .j2 files stay the reference, the one an operator copies to write their own template
(which renders with jinja2, as always); a test renders both over many values and requires the
same text, so an edit to one without the other fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NO_PRESSURE = "unknown (no model call with a token count in this window)"
ROTATE_NOTE = (
    "> Written by memwarden rotate right before it reset this conversation (its context passed "
    "the rotation threshold): the sections below are what it held before that reset. Do not "
    "edit.\n"
)
RUN_NOTE = (
    "> Written by memwarden checkpoint from this conversation's live transcript; replaced when "
    "it changes, do not edit.\n"
)


def active_context(values: dict[str, Any]) -> str:
    """Given the values of a handoff, return the text checkpoint/active_context.md.j2 gives."""
    session, trigger = values["session"], values["trigger"]
    if session["kind"] == "main":
        title = f"# Active Context — agent {values['agent']}\n"
    else:
        title = (
            f"# Conversation Handoff — agent {values['agent']}, {session['kind']} conversation\n"
        )
    model = f", model {session['model']}" if session["model"] else ""
    before = " before the reset" if trigger == "rotate" else ""
    parts = [
        title,
        "\n",
        ROTATE_NOTE if trigger == "rotate" else RUN_NOTE,
        f"> - generated at: {values['generated_at']}\n",
        f"> - session: `{session['key']}` (id `{session['id']}`{model})\n",
        f"> - entries read: {values['entries_read']}\n",
        f"> - context size{before}: {values['pressure'] or NO_PRESSURE}\n",
        "\n",
        _sections(values["current"], "##"),
        "\n",
    ]
    previous = values["previous"]
    if previous:
        parts += ["\n", _previous_heading(previous), "\n", _sections(previous, "###"), "\n"]
    return "".join(parts)


def daily_entry(values: dict[str, Any]) -> str:
    """Given the values of a daily-log entry, return the text checkpoint/daily_entry.md.j2
    gives."""
    requests, outputs = values["requests"], values["outputs"]
    time, first_time = values["time"], values["first_time"]
    span = f" ({first_time}–{time})" if first_time != time else ""  # noqa: RUF001 - en dash
    parts = [
        f"\n### {time} · checkpoint · `{values['session']['key']}`\n",
        f"- session `{values['session']['id']}`: {'at least ' if values['partial'] else ''}",
        f"{requests} request{'' if requests == 1 else 's'}, ",
        f"{outputs} repl{'y' if outputs == 1 else 'ies'}{span}\n",
    ]
    if values["last_request"]:
        parts.append(f"- last request: {values['last_request']}\n")
    if values["last_output"]:
        parts.append(f"- last output: {values['last_output']}\n")
    return "".join(parts)


def daily_header(values: dict[str, Any]) -> str:
    """Given a date and an agent, return the text checkpoint/daily_header.md.j2 gives."""
    return (
        f"# {values['date']}\n\nDaily log of agent {values['agent']}. Entries marked "
        '"checkpoint" are appended by memwarden from the live\ntranscript, one per run that saw '
        "new messages.\n"
    )


BUNDLED: dict[str, Callable[[dict[str, Any]], str]] = {
    "checkpoint/active_context.md.j2": active_context,
    "checkpoint/daily_entry.md.j2": daily_entry,
    "checkpoint/daily_header.md.j2": daily_header,
}


def _sections(window: dict[str, Any], level: str) -> str:
    parts: list[str] = []
    for title, key, who in (
        ("Recent Requests", "requests", "user"),
        ("Recent Work", "outputs", "assistant"),
    ):
        parts.append(f"{level} {title}\n")
        parts += _listed(
            [f"- **{message['time']}** {_indent(message['text'])}\n" for message in window[key]],
            f"_No {who} messages in this window yet._\n",
        )
        parts.append("\n")
    parts.append(f"{level} Files Referenced\n")
    parts += _listed([f"- `{path}`\n" for path in window["files"]], "_None._\n")
    parts.append(f"\n{level} Tools Used\n")
    tools = [f"- {tool['name']} × {tool['count']}\n" for tool in window["tools"]]  # noqa: RUF001
    parts += _listed(tools, "_None._\n")
    parts.append(f"\n{level} Open TODOs\n")
    parts += _listed([f"- [ ] {todo}\n" for todo in window["todos"]], "_None._\n")
    if window["compaction_summary"]:
        parts.append(f"\n{level} Last Compaction Summary\n{window['compaction_summary']}\n")
    return "".join(parts)


def _previous_heading(previous: dict[str, Any]) -> str:
    count = previous["current_messages"]
    thin = "no message" if count == 0 else f"only {count} message{'' if count == 1 else 's'}"
    session_id = previous["session_id"]
    at = f" at {previous['reset_at']}" if previous["reset_at"] else ""
    if previous["in_place"]:
        return (
            "## Before the Reset\n\n"
            f"_This session was reset in place{at} (the gateway kept its id `{session_id}`); the "
            f"window since then has {thin} so far, so the window before the reset is kept here._\n"
        )
    return (
        f"## Previous Session `{session_id}`\n\n"
        f"_This conversation had session id `{session_id}` until the reset{at}; the current "
        f"window has {thin} so far, so the previous session's window is kept here._\n"
    )


def _listed(items: list[str], none: str) -> list[str]:
    return items or [none]


def _indent(text: str) -> str:
    """jinja2's `indent(2)`: every line but the first and blank ones indented by two spaces,
    line breaks of any kind (`str.splitlines`) written as newlines."""
    lines = (text + "\n").splitlines()
    first = lines.pop(0)
    if not lines:
        return first
    return first + "\n" + "\n".join("  " + line if line else line for line in lines)
