"""The bundled checkpoint templates rendered as Python (checkpoint.render.bundled) write exactly
what jinja2 writes from templates/checkpoint/*.j2, for every shape of values a run gives them."""

from __future__ import annotations

import itertools
import random

import pytest

from memwarden.checkpoint.render.bundled import BUNDLED
from memwarden.fs.templating import render

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


def said(rng: random.Random, size: int) -> list[dict]:
    return [
        {
            "time": rng.choice(["2026-11-26T10:00+00:00", "time unknown"]),
            "who": rng.choice(["user", "assistant"]),
            "text": text(rng),
            "break": None,
        }
        for _ in range(rng.randrange(size + 1))
    ]


def active_context_values(rng: random.Random, kind: str, trigger: str, left: bool) -> dict:
    exchanges = said(rng, 4)
    for one in exchanges[: rng.randrange(3)]:
        one |= {"who": None, "text": None, "break": rng.choice(["reset", "compaction"])}
    return {
        "agent": rng.choice(["main", "ops-bot"]),
        "trigger": trigger,
        "generated_at": "\x00generated-at\x00",
        "session": {
            "key": rng.choice(["agent:main:main", "agent:main:telegram:group:42"]),
            "id": "c0ffee",
            "kind": kind,
            "model": rng.choice([None, "", "anthropic/claude-opus-4"]),
        },
        "pressure": rng.choice([None, "", "12,345 of 200,000 tokens (6%): the gateway's count"]),
        "conversation": {
            "since": rng.choice([None, "2026-11-26T09:00+00:00"]),
            "messages": rng.randrange(3),
            "resets": rng.randrange(3),
            "compactions": rng.randrange(3),
        },
        "marked": said(rng, 3),
        "tasks": said(rng, 3),
        "files": said(rng, 3),
        "items_left_out": {name: rng.randrange(3) for name in ("marked", "tasks", "files")},
        "exchanges": exchanges,
        "tools": [
            {"name": text(rng), "count": rng.randrange(1, 30)} for _ in range(rng.randrange(4))
        ],
        "compaction_summary": rng.choice([None, "", text(rng)]),
        "left_out": {
            "what": rng.sample(["3 requests", "1 reply", "2 oldest items"], 2),
            "budget": "18,000",
            "limit": rng.choice(["what the gateway's bootstrap caps leave it", "a setting"]),
            "logs": rng.choice([[], ["memory/2026-11-25.md", "memory/2026-11-26.md"]]),
        }
        if left
        else None,
    }


@pytest.mark.parametrize(
    ("kind", "trigger", "left"),
    list(itertools.product(["main", "group", "direct"], ["run", "rotate", "session"], [0, 1])),
)
def test_bundled_active_context_writes_what_jinja2_writes(kind, trigger, left):
    rng = random.Random(f"{kind}{trigger}{left}")
    name = "checkpoint/active_context.md.j2"
    for _ in range(40):
        values = active_context_values(rng, kind, trigger, bool(left))
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
            "said": [
                {"time": "10:01", "who": rng.choice(["user", "assistant"]), "text": text(rng)}
                for _ in range(rng.randrange(3))
            ],
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
