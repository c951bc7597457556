"""Does what the bootstrap hook injects fit the gateway's caps? Pure over file lengths.

The gateway cuts a bootstrap file longer than `bootstrapMaxChars` in the middle, and stops at
`bootstrapTotalMaxChars` for all of them together. The caps are judged by the index job's own
rules (`indexing.outcome.bootstrap_overruns`), so doctor and `memwarden index` always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memwarden.doctor.finding import Finding
from memwarden.indexing.outcome import INJECTED, bootstrap_overruns, describe_overrun

SET_CAP = "openclaw config set agents.defaults"


def check_bootstrap(
    agent_id: str,
    workspace: Path,
    lengths: Mapping[str, int],
    max_chars: int,
    total_max_chars: int,
) -> list[Finding]:
    """Given an agent's workspace, its bootstrap file lengths (by relative path, present files
    only) and caps, return a finding per injected file (INDEX.md, ACTIVE_CONTEXT.md) present,
    and one for the total when it passes the total cap.
    """
    overruns = {
        overrun.path: overrun for overrun in bootstrap_overruns(lengths, max_chars, total_max_chars)
    }
    findings = []
    for name in INJECTED:
        if name not in lengths:
            continue
        key = f"bootstrap.{agent_id}.{name.rsplit('/', 1)[-1]}"
        overrun = overruns.get(name)
        if overrun is None:
            message = (
                f"agent {agent_id}: {name} fits the bootstrap cap ({lengths[name]:,} of "
                f"{max_chars:,} characters)"
            )
            findings.append(Finding(key, "ok", message))
            continue
        findings.append(
            Finding(
                key,
                "warning",
                f"agent {agent_id}: {describe_overrun(workspace, overrun)}",
                f"{SET_CAP}.bootstrapMaxChars {_round_up(overrun.chars)}",
            )
        )
    total = overruns.get(None)
    if total is not None:
        findings.append(
            Finding(
                f"bootstrap.{agent_id}.total",
                "warning",
                f"agent {agent_id}: {describe_overrun(workspace, total)}",
                f"{SET_CAP}.bootstrapTotalMaxChars {_round_up(total.chars)}",
            )
        )
    return findings


def _round_up(length: int) -> int:
    """The next multiple of 5,000 above `length`: a cap with some room to grow."""
    return (length // 5000 + 1) * 5000
