"""The bootstrap files of a real workspace folder and their lengths."""

from __future__ import annotations

from memwarden.indexing.bootstrap_files import bootstrap_lengths


def test_bootstrap_lengths_measures_the_files_present_among_those_named(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "AGENTS.md").write_text("agents\n")
    (tmp_path / "memory" / "INDEX.md").write_text("index")
    (tmp_path / "memory" / "ACTIVE_CONTEXT.md").write_text("handoff")

    every = bootstrap_lengths(tmp_path)
    named = bootstrap_lengths(tmp_path, ("AGENTS.md", "MEMORY.md", "memory/INDEX.md"))

    assert every == {"AGENTS.md": 6, "memory/INDEX.md": 5, "memory/ACTIVE_CONTEXT.md": 7}
    assert named == {"AGENTS.md": 6, "memory/INDEX.md": 5}
