"""Does what the bootstrap hook injects fit the gateway's caps? Pure over file lengths.

The gateway cuts a bootstrap file longer than `bootstrapMaxChars` in the middle, and stops at
`bootstrapTotalMaxChars` for all of them together. Lengths are JavaScript string lengths
(UTF-16 code units), as the gateway measures them.
"""

from __future__ import annotations

from collections.abc import Mapping

from memwarden.doctor.finding import Finding

INJECTED = ("memory/INDEX.md", "memory/ACTIVE_CONTEXT.md")
# The workspace files the gateway itself loads at bootstrap (openclaw 2026.7.x and 2026.9.x).
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


def js_length(text: str) -> int:
    """Given text, return its length as JavaScript counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def check_bootstrap(
    agent_id: str, lengths: Mapping[str, int], max_chars: int, total_max_chars: int
) -> list[Finding]:
    """Given an agent's bootstrap file lengths (by relative path, present files only) and caps.

    Return a finding per injected file (INDEX.md, ACTIVE_CONTEXT.md) present, and one for the
    total when it passes the total cap.
    """
    findings = []
    for name in INJECTED:
        if name not in lengths:
            continue
        length = lengths[name]
        key = f"bootstrap.{agent_id}.{name.rsplit('/', 1)[-1]}"
        if length > max_chars:
            findings.append(
                Finding(
                    key,
                    "warning",
                    f"agent {agent_id}: {name} has {length:,} characters, over the "
                    f"{max_chars:,}-character bootstrap cap: the gateway cuts its middle out",
                    f"openclaw config set agents.defaults.bootstrapMaxChars {_round_up(length)}",
                )
            )
        else:
            findings.append(
                Finding(
                    key,
                    "ok",
                    f"agent {agent_id}: {name} fits the bootstrap cap ({length:,} of "
                    f"{max_chars:,} characters)",
                )
            )
    total = sum(min(length, max_chars) for length in lengths.values())
    if total > total_max_chars:
        findings.append(
            Finding(
                f"bootstrap.{agent_id}.total",
                "warning",
                f"agent {agent_id}: the bootstrap files hold {total:,} characters, over the "
                f"{total_max_chars:,}-character total cap: the files injected last are cut",
                f"openclaw config set agents.defaults.bootstrapTotalMaxChars {_round_up(total)}",
            )
        )
    return findings


def _round_up(length: int) -> int:
    """The next multiple of 5,000 above `length`: a cap with some room to grow."""
    return (length // 5000 + 1) * 5000
