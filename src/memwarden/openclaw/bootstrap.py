"""The gateway's bootstrap: the workspace files it loads into every prompt, how it measures them,
and what of its total cap they leave for the files a hook adds after them.

At each run the gateway loads its own files (AGENTS.md, MEMORY.md, …) in this order, then the
files bootstrap hooks push; each is trimmed at its end and cut in the middle past
`bootstrapMaxChars` (USER.md past 4,000), and the files come in until their lengths pass
`bootstrapTotalMaxChars`: the last ones are cut or left out (openclaw 2026.7.x and 2026.9.x,
`buildBootstrapContextFiles`).
"""

from __future__ import annotations

from collections.abc import Mapping

# The workspace files the gateway itself loads at bootstrap, in its order.
GATEWAY_BOOTSTRAP = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
)
USER_FILE = "USER.md"
USER_FILE_MAX_CHARS = 4_000
# What the gateway's `[MISSING] Expected at: <path>` lines for absent files may take in all.
MISSING_FILES_ALLOWANCE = 1_000


def js_length(text: str) -> int:
    """Given a text, return its length as the gateway measures it (UTF-16 units, end trimmed)."""
    trimmed = text.rstrip()
    if trimmed.isascii():
        return len(trimmed)
    return len(trimmed.encode("utf-16-le")) // 2


def room_after_gateway_files(
    lengths: Mapping[str, int], max_chars: int, total_max_chars: int
) -> int:
    """Given the lengths of the gateway's own bootstrap files present in a workspace (by path
    relative to it, as `js_length` counts them) and the caps, return how many characters the
    files a hook pushes first may take before the gateway cuts them: the per-file cap, or what
    the gateway's own files leave of the total, whichever is smaller."""
    taken = sum(
        min(chars, USER_FILE_MAX_CHARS if name == USER_FILE else max_chars)
        for name, chars in lengths.items()
    )
    return max(0, min(max_chars, total_max_chars - taken - MISSING_FILES_ALLOWANCE))
