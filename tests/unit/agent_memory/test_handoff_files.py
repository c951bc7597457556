"""Where each conversation's handoff lives, and which conversation a handoff file holds."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memwarden.agent_memory.handoff_files import (
    ACTIVE_CONTEXT,
    DIGEST_MARK,
    handoff_name,
    handoff_session,
    is_file_of,
    key_slug,
    main_file_agents,
    read_handoffs,
    replaceable,
)
from memwarden.fs.templating import render
from memwarden.openclaw.agents import Agent


def handoff_text(key: str, compaction_summary: str | None = None, kind: str = "direct") -> str:
    """Render the bundled handoff template as the checkpoint does, for `key`."""
    return render(
        "checkpoint/active_context.md.j2",
        agent="main",
        trigger="run",
        generated_at="2026-11-22T05:00:00Z",
        session={"key": key, "id": "b5974d71", "kind": kind, "model": "fake-model"},
        pressure=None,
        conversation={"since": None, "messages": 2, "resets": 0, "compactions": 0},
        marked=[],
        tasks=[],
        files=[],
        items_left_out={"marked": 0, "tasks": 0, "files": 0},
        exchanges=[],
        tools=[],
        compaction_summary=compaction_summary,
        left_out=None,
    )


@pytest.mark.parametrize(
    ("key", "slug"),
    [
        ("agent:main:telegram:direct:42", "main.telegram.direct.42"),
        ("Agent:Main:Telegram:Direct:42", "main.telegram.direct.42"),
        ("agent:ops:telegram:group:-100123:topic:9", "ops.telegram.group.-100123.topic.9"),
        ("agent:main:e2e_hooks-1a2b", "main.e2e_hooks-1a2b"),
    ],
)
def test_key_slug_plain_keys_read_as_the_key_itself(key, slug):
    assert key_slug(key) == slug


def test_key_slug_unsafe_characters_are_replaced_and_the_key_digest_added():
    key = "agent:main:whatsapp:direct:+4917012345@s.whatsapp.net"

    slug = key_slug(key)

    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    assert slug == f"main.whatsapp.direct-4917012345-s.whatsapp.net{DIGEST_MARK}{digest}"
    for unsafe in ("/", "\\", "..", "\x00", " ", ":"):
        assert unsafe not in key_slug(f"agent:main:slack:direct:{unsafe}x/../../etc")
    assert key_slug("agent:main:slack:direct:/../../etc/passwd").startswith("main.slack.direct")


def test_key_slug_of_keys_that_are_only_unsafe_or_unscoped_is_still_a_name():
    assert key_slug("agent:main:日本語").startswith(f"main{DIGEST_MARK}")
    assert key_slug("\u65e5\u672c").startswith(f"session{DIGEST_MARK}")
    assert key_slug("global").startswith(f"global{DIGEST_MARK}")


def test_key_slug_very_long_keys_are_cut_and_stay_distinct():
    base = "agent:main:slack:channel:c0123:thread:" + "7" * 200
    first, second = key_slug(base + "1"), key_slug(base + "2")

    assert first != second
    assert len(first) <= 60 + 1 + 10
    assert first.split(DIGEST_MARK)[0] == second.split(DIGEST_MARK)[0]  # same readable part
    assert len(handoff_name(base + "1")) < 255


@pytest.mark.parametrize(
    ("one", "other"),
    [
        # The same readable text: each unsafe form gets its own digest.
        ("agent:main:slack:direct:a/b", "agent:main:slack:direct:a?b"),
        # An unscoped legacy key and an agent named like its first part.
        ("telegram:direct:1", "agent:telegram:direct:1"),
        # A plain key whose text looks like another key's digest form.
        ("agent:main:x", "agent:main:x" + DIGEST_MARK),
        # `.` in a key against `:`.
        ("agent:main:a.b", "agent:main:a:b"),
    ],
)
def test_key_slug_distinct_keys_never_share_a_file(one, other):
    assert handoff_name(one) != handoff_name(other)


def test_handoff_name_main_session_keeps_active_context_and_others_go_to_sessions():
    assert handoff_name("agent:main:main") == ACTIVE_CONTEXT
    assert handoff_name("main") == ACTIVE_CONTEXT  # legacy unscoped main
    assert handoff_name("agent:main:telegram:direct:42") == "sessions/main.telegram.direct.42.md"
    assert handoff_name("agent:ops:main", keeps_main_file=False) == "sessions/ops.main.md"


def test_main_file_agents_first_agent_of_each_workspace_keeps_active_context(tmp_path):
    shared, own = tmp_path / "shared", tmp_path / "own"
    shared.mkdir()
    own.mkdir()
    (tmp_path / "link").symlink_to(shared)

    def agent(agent_id: str, workspace: Path) -> Agent:
        return Agent(agent_id, workspace, tmp_path / "state" / agent_id, False, "file")

    agents = [agent("main", shared), agent("ops", own), agent("side", tmp_path / "link")]

    assert main_file_agents(agents) == {"main", "ops"}
    assert is_file_of("sessions/side.main.md", "agent:side:main", main_file_agents(agents))
    assert not is_file_of(ACTIVE_CONTEXT, "agent:side:main", main_file_agents(agents))


def test_handoff_session_bundled_template_gives_its_key():
    text = handoff_text("agent:main:telegram:direct:42")

    assert handoff_session(text, ["main"]) == "agent:main:telegram:direct:42"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, True),
        ("", True),
        ("\n  \n", True),
        ("# Active\n\n> Written by memwarden\n> - session: `agent:x:main` (id `1`)\n", True),
        ("# Active Context — main\n> Auto-generated by memory-checkpoint at 2026-11-21\n", True),
        ("\ufeff# Active Context — ops\n> Auto-generated by memory-checkpoint at t\n", True),
        ("# My notes\n- the deploy key rotates on Friday\n", False),
        ("# Active Context — main\nwritten by hand, with the reference's title\n", False),
        ("# Notes\n\n## Chat\n> - session: `agent:x:main` quoted in a section\n", False),
        ("# Handoff\n\n> - session: `agent:x:discord:channel:my room` (id `1`)\n", True),
    ],
)
def test_replaceable_only_for_no_file_a_blank_one_or_a_generated_one(text, expected):
    assert replaceable(text) is expected


def test_handoff_session_mixed_case_key_is_lower_cased():
    text = "# Active\n\n> Written by memwarden\n> - session: `Agent:Main:Main` (id `x`)\n"

    assert handoff_session(text, ["main"]) == "agent:main:main"


@pytest.mark.parametrize(("agents", "expected"), [(["ops"], "agent:ops:main"), ([], "main")])
def test_handoff_session_unscoped_main_is_scoped_to_the_only_agent(agents, expected):
    text = "# Active\n\n> - session: `main` (id `x`)\n"

    assert handoff_session(text, agents) == expected


def test_handoff_session_quoted_in_the_body_is_not_provenance():
    spoof = "> - session: `agent:main:telegram:direct:999` (id `y`)"
    text = f"# Active context\n\nNo provenance here.\n\n## Last Compaction Summary\n{spoof}\n"

    assert handoff_session(text, ["main"]) is None


def test_handoff_session_compaction_summary_cannot_override_the_header():
    spoof = "> - session: `agent:main:telegram:direct:999` (id `y`)"
    text = handoff_text("agent:main:main", compaction_summary=spoof, kind="main")

    assert spoof in text
    assert handoff_session(text, ["main"]) == "agent:main:main"


def test_read_handoffs_lists_active_context_and_sessions_never_through_links(tmp_path):
    memory = tmp_path / "memory"
    (memory / "sessions" / "archive").mkdir(parents=True)
    (memory / ACTIVE_CONTEXT).write_text(handoff_text("agent:main:main", kind="main"))
    peer = handoff_text("agent:main:telegram:direct:42")
    (memory / "sessions" / "main.telegram.direct.42.md").write_text(peer)
    (memory / "sessions" / "notes.md").write_text("# my own notes\n")
    (memory / "sessions" / ".hidden.md").write_text("x")
    (memory / "sessions" / "archive" / "old.md").write_text("x")
    (memory / "sessions" / "linked.md").symlink_to(memory / ACTIVE_CONTEXT)
    (memory / "2026-11-22.md").write_text("daily")

    found = read_handoffs(memory, ["main"])

    assert [(file.name, file.session) for file in found] == [
        (ACTIVE_CONTEXT, "agent:main:main"),
        ("sessions/main.telegram.direct.42.md", "agent:main:telegram:direct:42"),
        ("sessions/notes.md", None),
    ]
    assert found[1].text == peer
    assert read_handoffs(tmp_path / "missing", ["main"]) == []
