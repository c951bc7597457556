"""A session's context size: which count to trust, and how to name where it came from.

The gateway's `totalTokens` is the prompt size of the session's last model call, 0 right after a
reset; `totalTokensFresh: false` marks a count it did not recompute (stale). When the count is
stale or missing the transcript tells instead: the last model call's prompt, unless a compaction
(its `tokensAfter`) or a reset (0) came after it. Rotate and checkpoint both read it here.
"""

from __future__ import annotations

# What a count read from the transcript is, by measure.
TRANSCRIPT_MEASURES = {
    "prompt": "the last model call's prompt in the transcript",
    "compaction": "what the last compaction left, in the transcript",
    "reset": "none since the reset in the transcript",
}


def gateway_count(total_tokens: int | None, fresh: bool | None) -> int | None:
    """Given a session's `totalTokens` and `totalTokensFresh`, return the count when the gateway
    has one not marked stale (0 included: a session just reset), else None."""
    if total_tokens is None or fresh is False:
        return None
    return total_tokens


def gateway_source(fresh: bool | None) -> str:
    """Return how the gateway's own count is named: fresh when it says so."""
    return "the gateway's count" + (", fresh" if fresh else "")


def gateway_gap(fresh: bool | None) -> str:
    """Return why the gateway's count was not used: `stale` or `missing`."""
    return "stale" if fresh is False else "missing"
