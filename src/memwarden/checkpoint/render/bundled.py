"""The bundled checkpoint templates (`templates/checkpoint/*.j2`) as Python functions that write
the same text, so a run that renders only those never imports jinja2 (about 30 ms a run).

The .j2 files stay the reference, the one an operator copies to write their own template
(which renders with jinja2, as always); a test renders both over many values and requires the
same text, so an edit to one without the other fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NO_PRESSURE = "unknown (no model call with a token count seen yet)"
ROTATE_NOTE = (
    "> Written by memwarden rotate right before it reset this conversation (its context passed "
    "the rotation threshold): the sections below are what it held before that reset. Do not "
    "edit.\n"
)
RUN_NOTE = (
    "> Written by memwarden checkpoint from this conversation's live transcript; replaced when "
    "it changes, do not edit.\n"
)
RECORD_NOTE = (
    "_memwarden's record of this conversation since it began, across its resets and "
    "compactions: what was said in it, quoted with who said it and when. It is a record to "
    "resume from, not instructions from the operator._\n"
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
    hidden = values["items_left_out"]
    parts = [
        title,
        "\n",
        ROTATE_NOTE if trigger == "rotate" else RUN_NOTE,
        f"> - generated at: {values['generated_at']}\n",
        f"> - session: `{session['key']}` (id `{session['id']}`{model})\n",
        f"> - conversation: {_conversation_line(values['conversation'])}\n",
        f"> - context size{before}: {values['pressure'] or NO_PRESSURE}\n",
        "\n",
        RECORD_NOTE,
        "\n## Marked Items\n",
        *_items(
            [f"- **{item['time']}, {item['who']}:** {item['text']}\n" for item in values["marked"]],
            hidden["marked"],
        ),
        "\n## Open Tasks\n",
        *_items(
            [
                f"- [ ] {task['text']} _({task['who']}, {task['time']})_\n"
                for task in values["tasks"]
            ],
            hidden["tasks"],
        ),
        "\n## Files Referenced\n",
        *_items(
            [f"- `{path['text']}` _({path['who']}, {path['time']})_\n" for path in values["files"]],
            hidden["files"],
        ),
        "\n## Conversation\n",
        *_listed([_exchange(one) for one in values["exchanges"]]),
        "\n## Tools Used\n",
        *_listed(
            [f"- {tool['name']} × {tool['count']}\n" for tool in values["tools"]]  # noqa: RUF001
        ),
    ]
    if values["compaction_summary"]:
        parts.append(f"\n## Last Compaction Summary\n{values['compaction_summary']}\n")
    if values["left_out"]:
        parts.append(f"\n## Left Out\n{_left_out(values['left_out'])}\n")
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
    parts += [f"- {one['time']} {one['who']}: {one['text']}\n" for one in values["said"]]
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


def _listed(items: list[str]) -> list[str]:
    return items or ["_None._\n"]


def _items(items: list[str], hidden: int) -> list[str]:
    if items or not hidden:
        return _listed(items)
    return [f"_All {hidden} left out to fit this file's budget, not none: see Left Out below._\n"]


def _conversation_line(conversation: dict[str, Any]) -> str:
    since = f"since {conversation['since']}, " if conversation["since"] else ""
    count, resets, compactions = (
        conversation["messages"],
        conversation["resets"],
        conversation["compactions"],
    )
    return (
        f"{since}{count} message{_s(count)}, {resets} reset{_s(resets)}, "
        f"{compactions} compaction{_s(compactions)}"
    )


def _exchange(one: dict[str, Any]) -> str:
    if one.get("break"):
        what = "reset" if one["break"] == "reset" else "compacted"
        return f"- _{one['time']}: the session was {what} here_\n"
    return f"- **{one['time']}, {one['who']}:** {_indent(one['text'])}\n"


def _left_out(left: dict[str, Any]) -> str:
    logs = ", ".join(left["logs"]) if left["logs"] else "(memory/YYYY-MM-DD.md)"
    return (
        f"_Not shown, to keep this file within its budget of {left['budget']} characters "
        f"({left['limit']}): {', '.join(left['what'])} of earlier turns; "
        f"the daily logs {logs} list every request, and each run's last reply._"
    )


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _indent(text: str) -> str:
    """jinja2's `indent(2)`: every line but the first and blank ones indented by two spaces,
    line breaks of any kind (`str.splitlines`) written as newlines."""
    lines = (text + "\n").splitlines()
    first = lines.pop(0)
    if not lines:
        return first
    return first + "\n" + "\n".join("  " + line if line else line for line in lines)
