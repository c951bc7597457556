"""The bootstrap manifest: which session ACTIVE_CONTEXT.md belongs to, and what the hook reads."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from memwarden.indexing.manifest import (
    ACTIVE_CONTEXT_PATH,
    INDEX_PATH,
    InjectedFile,
    active_context_session,
    build_manifest,
    text_sha256,
)
from memwarden.templating import render

EMPTY_WINDOW = {
    "requests": [],
    "outputs": [],
    "files": [],
    "tools": [],
    "todos": [],
    "compaction_summary": None,
}


def active_context(key: str, compaction_summary: str | None = None) -> str:
    """Render the bundled ACTIVE_CONTEXT.md template as the checkpoint does, for `key`."""
    return render(
        "checkpoint/active_context.md.j2",
        agent="main",
        generated_at="2026-11-22T05:00:00Z",
        session={"key": key, "id": "b5974d71", "kind": "direct", "model": "fake-model"},
        entries_read=12,
        pressure=None,
        current={**EMPTY_WINDOW, "compaction_summary": compaction_summary},
        previous=None,
    )


def test_active_context_session_bundled_template_gives_its_key():
    text = active_context("agent:main:telegram:direct:42")

    assert active_context_session(text, ["main"]) == "agent:main:telegram:direct:42"


def test_active_context_session_mixed_case_key_is_lower_cased():
    text = "# Active\n\n> Written by memwarden\n> - session: `Agent:Main:Main` (id `x`)\n"

    assert active_context_session(text, ["main"]) == "agent:main:main"


@pytest.mark.parametrize(("agents", "expected"), [(["ops"], "agent:ops:main"), ([], "main")])
def test_active_context_session_unscoped_main_is_scoped_to_the_only_agent(agents, expected):
    text = "# Active\n\n> - session: `main` (id `x`)\n"

    assert active_context_session(text, agents) == expected


def test_active_context_session_quoted_in_the_body_is_not_provenance():
    spoof = "> - session: `agent:main:telegram:direct:999` (id `y`)"
    text = f"# Active context\n\nNo provenance here.\n\n## Last Compaction Summary\n{spoof}\n"

    assert active_context_session(text, ["main"]) is None


def test_active_context_session_compaction_summary_cannot_override_the_header():
    spoof = "> - session: `agent:main:telegram:direct:999` (id `y`)"
    text = active_context("agent:main:main", compaction_summary=spoof)

    assert spoof in text
    assert active_context_session(text, ["main"]) == "agent:main:main"


def test_build_manifest_private_file_carries_its_session_even_when_unknown():
    payload = build_manifest(
        agents=["main"],
        max_chars=20_000,
        total_max_chars=60_000,
        group_chats=False,
        files=[
            InjectedFile(INDEX_PATH, 10),
            InjectedFile(ACTIVE_CONTEXT_PATH, 20, private=True, session=None, sha256=None),
        ],
    )

    manifest = orjson.loads(payload)
    assert manifest["version"] == 2
    assert manifest["files"] == [
        {"name": INDEX_PATH, "path": INDEX_PATH, "chars": 10},
        {
            "name": ACTIVE_CONTEXT_PATH,
            "path": ACTIVE_CONTEXT_PATH,
            "chars": 20,
            "session": None,
            "sha256": None,
        },
    ]


def test_text_sha256_utf8_text_is_the_digest_of_its_file_bytes(tmp_path):
    path = tmp_path / "ACTIVE_CONTEXT.md"
    path.write_bytes("# Café ☕\n".encode())

    assert text_sha256(path.read_bytes().decode()) == hashlib.sha256(path.read_bytes()).hexdigest()
