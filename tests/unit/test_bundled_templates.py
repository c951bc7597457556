"""The bundled checkpoint templates rendered as Python (checkpoint.bundled) write exactly what
jinja2 writes from templates/checkpoint/*.j2, for every shape of values a run gives them."""

from __future__ import annotations

import itertools
import random

import pytest

from memwarden.checkpoint.bundled import BUNDLED
from memwarden.templating import render

# Texts as transcripts hold them: line breaks of every kind, blank lines, Markdown, template
# syntax, and nothing at all.
TEXTS = [
    "",
    "x",
    "one line",
    "two\nlines",
    "blank\n\nline\n",
    "\nleading newline",
    "trailing spaces  \n  indented\n\n\n",
    "crlf\r\nline\rcarriage",
    "separators\x0bvt\x0cff\x1cfs\x1dgs\x1ers\x85nel\u2028ls\u2029ps",
    "{{ not a template }} {% neither %} {# nor #}",
    "## heading\n- [ ] item\n`code`",
    "ünïcödé — 日本語 🙂",
]


def text(rng: random.Random) -> str:
    return rng.choice(TEXTS) + rng.choice(["", " ", "\n"]) + rng.choice(TEXTS)


def window(rng: random.Random, size: int) -> dict:
    def messages() -> list[dict]:
        return [
            {"time": rng.choice(["2026-11-26T10:00+00:00", "time unknown"]), "text": text(rng)}
            for _ in range(rng.randrange(size + 1))
        ]

    return {
        "messages": rng.randrange(10),
        "requests": messages(),
        "outputs": messages(),
        "files": [text(rng) for _ in range(rng.randrange(size + 1))],
        "tools": [
            {"name": text(rng), "count": rng.randrange(1, 30)}
            for _ in range(rng.randrange(size + 1))
        ],
        "todos": [text(rng) for _ in range(rng.randrange(size + 1))],
        "compaction_summary": rng.choice([None, "", text(rng)]),
    }


def active_context_values(rng: random.Random, kind: str, trigger: str, previous: str) -> dict:
    values = {
        "agent": rng.choice(["main", "ops-bot"]),
        "trigger": trigger,
        "generated_at": "\x00generated-at\x00",
        "session": {
            "key": rng.choice(["agent:main:main", "agent:main:telegram:group:42"]),
            "id": "c0ffee",
            "kind": kind,
            "model": rng.choice([None, "", "anthropic/claude-opus-4"]),
        },
        "entries_read": rng.randrange(300),
        "pressure": rng.choice([None, "", "12,345 of 200,000 tokens (6%): the gateway's count"]),
        "current": window(rng, 3),
        "previous": None,
    }
    if previous != "none":
        values["previous"] = window(rng, 3) | {
            "session_id": "0ld1d",
            "in_place": previous == "in_place",
            "reset_at": rng.choice([None, "2026-11-26T09:59+00:00"]),
            "current_messages": rng.choice([0, 1, 2, 7]),
        }
    return values


@pytest.mark.parametrize(
    ("kind", "trigger", "previous"),
    list(
        itertools.product(
            ["main", "group", "direct"], ["run", "rotate", "session"], ["none", "in_place", "other"]
        )
    ),
)
def test_bundled_active_context_writes_what_jinja2_writes(kind, trigger, previous):
    rng = random.Random(f"{kind}{trigger}{previous}")
    name = "checkpoint/active_context.md.j2"
    for _ in range(40):
        values = active_context_values(rng, kind, trigger, previous)
        assert BUNDLED[name](values) == render(name, **values), values


def test_bundled_daily_entry_and_header_write_what_jinja2_writes():
    rng = random.Random(7)
    name = "checkpoint/daily_entry.md.j2"
    for _ in range(300):
        values = {
            "time": rng.choice(["10:00", "10:05"]),
            "first_time": rng.choice(["09:58", "10:00"]),
            "session": {"key": "agent:main:main", "id": text(rng)},
            "requests": rng.randrange(3),
            "outputs": rng.randrange(3),
            "partial": rng.choice([True, False]),
            "last_request": rng.choice([None, "", text(rng)]),
            "last_output": rng.choice([None, "", text(rng)]),
        }
        assert BUNDLED[name](values) == render(name, **values), values
    name = "checkpoint/daily_header.md.j2"
    for agent in ["main", "ops-bot", "x y"]:
        values = {"date": "2026-11-26", "agent": agent}
        assert BUNDLED[name](values) == render(name, **values)


def test_every_bundled_checkpoint_template_has_its_python_twin():
    from importlib.resources import files

    folder = files("memwarden") / "templates" / "checkpoint"
    assert sorted(BUNDLED) == sorted(f"checkpoint/{item.name}" for item in folder.iterdir())
