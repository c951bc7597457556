"""Rendering: template values from digests, and telling a real change from a new timestamp."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwarden.checkpoint.extract import Excerpt, WindowDigest
from memwarden.checkpoint.limits import Limits
from memwarden.checkpoint.render import (
    ACTIVE_CONTEXT_TEMPLATE,
    GENERATED_AT_PLACEHOLDER,
    PreviousWindow,
    active_context_values,
    cut,
    demote_headings,
    pressure_text,
    render_template,
    same_apart_from_time,
    stamp,
)
from memwarden.openclaw.keys import classify
from memwarden.openclaw.sessions import SessionRecord

AT = datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def session(total=None, fresh=None, window=None) -> SessionRecord:
    key = "agent:main:main"
    return SessionRecord(
        "main", key, "sid-1", classify(key).kind, None, None, total, fresh, window,
        None, None, "fake-model", "file", None, None, None,
    )  # fmt: skip


def digest(*messages: tuple[str, str], **fields) -> WindowDigest:
    return WindowDigest(messages=[Excerpt(role, text, AT) for role, text in messages], **fields)


def render(values) -> str:
    return stamp(render_template(ACTIVE_CONTEXT_TEMPLATE, None, values), "2026-11-22T06:00:00Z")


def values_for(current, previous=None, limits=None):
    return active_context_values(
        agent_id="main",
        session=session(1234, True, 32000),
        current=current,
        previous=previous,
        entries_read=14,
        limits=limits or Limits(),
        zone=UTC,
    )


def test_active_context_lists_last_requests_and_work_with_times_and_sections():
    current = digest(
        *[("user", f"request {n}") for n in range(7)],
        ("assistant", "did the thing\nin two lines"),
        files=["src/a.py"],
        tools={"exec": 2},
        todos=["renew TLS"],
        compaction_summary="## Decisions\nship it",
    )

    text = render(values_for(current))

    assert text.startswith("# Active Context — agent main\n")
    assert "> - generated at: 2026-11-22T06:00:00Z\n" in text
    assert "> - session: `agent:main:main` (id `sid-1`, model fake-model)\n" in text
    assert "> - entries read: 14\n" in text
    assert "> - context pressure: 1,234 of 32,000 tokens (4%)\n" in text
    requests = text.split("## Recent Requests\n")[1].split("\n\n")[0]
    assert requests.splitlines() == [
        f"- **2026-11-22T05:30+00:00** request {n}" for n in range(2, 7)
    ]
    assert "## Recent Work\n- **2026-11-22T05:30+00:00** did the thing\n  in two lines\n" in text
    assert "## Files Referenced\n- `src/a.py`\n" in text
    assert "## Tools Used\n- exec \N{MULTIPLICATION SIGN} 2\n" in text
    assert "## Open TODOs\n- [ ] renew TLS\n" in text
    assert "## Last Compaction Summary\n#### Decisions\nship it\n" in text
    assert "Previous Session" not in text


def test_active_context_with_previous_window_marks_it_with_the_previous_session_id():
    previous = PreviousWindow(digest(("user", "old request")), "old-sid", AT)

    text = render(values_for(digest(("user", "new request")), previous))

    current, _, kept = text.partition("## Previous Session `old-sid`")
    assert "new request" in current and "old request" not in current
    assert "before the reset at 2026-11-22T05:30+00:00" in kept
    assert "the current window has only 1 message so far" in kept
    assert "### Recent Requests\n- **2026-11-22T05:30+00:00** old request\n" in kept


def test_same_apart_from_time_ignores_only_the_timestamp():
    rendered = f"# A\n> generated at: {GENERATED_AT_PLACEHOLDER}\nbody\n"

    assert same_apart_from_time("# A\n> generated at: 2026-11-22T05:00:00Z\nbody\n", rendered)
    assert not same_apart_from_time("# A\n> generated at: 2026-11-22T05:00:00Z\nbody!\n", rendered)
    assert not same_apart_from_time("# A\n> generated at: 2026\nlines\nbody\n", rendered)
    assert not same_apart_from_time(None, rendered)
    assert same_apart_from_time("no time", "no time")


@pytest.mark.parametrize(
    ("total", "fresh", "window", "last_call", "expected"),
    [
        (1234, True, 32000, None, "1,234 of 32,000 tokens (4%)"),
        (1234, False, 32000, 2000, "2,000 of 32,000 tokens (6%)"),
        (0, True, 32000, 900, "900 of 32,000 tokens (3%)"),
        (None, None, None, 900, "900 tokens (context window unknown)"),
        (None, None, 32000, None, None),
    ],
)
def test_pressure_text_prefers_fresh_store_count_then_last_call(
    total, fresh, window, last_call, expected
):
    assert (
        pressure_text(session(total, fresh, window), WindowDigest(context_tokens=last_call))
        == expected
    )


def test_cut_and_demote_headings():
    assert cut("abcdef", 6) == "abcdef"
    assert cut("abcdefg", 6) == "abcde…"
    assert demote_headings("# Title\n## Sub\n#hashtag\n###### Deep") == (
        "### Title\n#### Sub\n#hashtag\n###### Deep"
    )


def test_render_template_uses_the_operators_own_file(tmp_path: Path):
    custom = tmp_path / "mine.md.j2"
    custom.write_text("{{ agent }}: {{ current.requests | length }} requests\n")

    text = render_template(
        ACTIVE_CONTEXT_TEMPLATE, str(custom), values_for(digest(("user", "hello there")))
    )

    assert text == "main: 1 requests\n"
