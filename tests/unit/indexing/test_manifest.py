"""The bootstrap manifest: which handoffs the hook may inject, into which session, and INDEX.md."""

from __future__ import annotations

from pathlib import Path

import orjson

from memwarden.agent_memory.handoff_files import HandoffFile
from memwarden.indexing.manifest import (
    INDEX_PATH,
    InjectedFile,
    build_manifest,
    choose_handoffs,
)
from memwarden.indexing.targets import Target

MAIN_AGENTS = frozenset({"main"})
WORKSPACE = Path("/srv/openclaw/workspace")


def handoff(name: str, session: str | None, text: str = "# Handoff\n") -> HandoffFile:
    return HandoffFile(name, text, session, 0.0)


def test_choose_handoffs_each_file_of_its_own_session_is_injected_into_that_session():
    found = [
        handoff("ACTIVE_CONTEXT.md", "agent:main:main", "é" * 10),
        handoff("sessions/main.telegram.direct.42.md", "agent:main:telegram:direct:42"),
    ]

    injected, left_out = choose_handoffs(found, MAIN_AGENTS, WORKSPACE)

    assert injected == [
        InjectedFile("memory/ACTIVE_CONTEXT.md", "agent:main:main", 10),
        InjectedFile(
            "memory/sessions/main.telegram.direct.42.md",
            "agent:main:telegram:direct:42",
            len("# Handoff"),
        ),
    ]
    assert left_out == []


def test_choose_handoffs_a_file_holding_another_conversation_is_injected_nowhere():
    found = [
        # What an earlier memwarden left: a peer's conversation in ACTIVE_CONTEXT.md.
        handoff("ACTIVE_CONTEXT.md", "agent:main:telegram:direct:42"),
        # A handoff copied under another conversation's name.
        handoff("sessions/main.telegram.direct.7.md", "agent:main:telegram:direct:42"),
    ]

    injected, left_out = choose_handoffs(found, MAIN_AGENTS, WORKSPACE)

    assert injected == []
    assert len(left_out) == 2
    assert "holds session `agent:main:telegram:direct:42`" in left_out[0]


def test_choose_handoffs_without_provenance_active_context_warns_and_own_notes_are_ignored():
    found = [handoff("ACTIVE_CONTEXT.md", None), handoff("sessions/my-notes.md", None)]

    injected, left_out = choose_handoffs(found, MAIN_AGENTS, WORKSPACE)

    assert injected == []
    assert left_out == [
        f'{WORKSPACE}/memory/ACTIVE_CONTEXT.md: names no session (no "> - session: `KEY`" line '
        "at its top, as the checkpoint writes it): the bootstrap hook will not inject it"
    ]


def test_choose_handoffs_main_of_an_agent_sharing_a_workspace_is_its_sessions_file():
    found = [
        handoff("ACTIVE_CONTEXT.md", "agent:main:main"),
        handoff("sessions/ops.main.md", "agent:ops:main"),
    ]

    injected, _ = choose_handoffs(found, MAIN_AGENTS, WORKSPACE)

    assert [file.session for file in injected] == ["agent:main:main", "agent:ops:main"]


def manifest_of(files: list[InjectedFile]) -> bytes:
    target = Target(Path("/w"), "/w", ["main"], max_chars=20_000, total_max_chars=60_000)
    return build_manifest(target, group_chats=False, files=files)


def test_build_manifest_handoffs_carry_their_session_and_index_its_length():
    files = [
        InjectedFile("memory/ACTIVE_CONTEXT.md", "agent:main:main", 20),
        InjectedFile(INDEX_PATH, chars=10),
    ]

    payload = manifest_of(files)

    assert orjson.loads(payload) == {
        "version": 3,
        "generator": "memwarden",
        "agents": ["main"],
        "maxChars": 20_000,
        "totalMaxChars": 60_000,
        "groupChats": False,
        "files": [
            {
                "name": "memory/ACTIVE_CONTEXT.md",
                "path": "memory/ACTIVE_CONTEXT.md",
                "session": "agent:main:main",
            },
            {"name": INDEX_PATH, "path": INDEX_PATH, "chars": 10},
        ],
    }
    assert payload == manifest_of(list(files))  # the same bytes: an unchanged one is not rewritten
