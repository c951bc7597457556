"""Does what the bootstrap hook injects fit the gateway's caps? Pure over file lengths.

The gateway cuts a bootstrap file longer than `bootstrapMaxChars` in the middle, and stops at
`bootstrapTotalMaxChars` for all of them together. The caps are judged by the index job's own
rules (`indexing.outcome.bootstrap_overruns`), so doctor and `memwarden index` always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memwarden.doctor.finding import Finding
from memwarden.indexing.manifest import ACTIVE_CONTEXT_PATH, INDEX_PATH
from memwarden.indexing.outcome import Overrun, bootstrap_overruns, describe_overrun

SET_CAP = "openclaw config set agents.defaults"


def check_bootstrap(
    agent_id: str,
    workspace: Path,
    shared: Mapping[str, int],
    handoffs: Mapping[str, int],
    max_chars: int,
    total_max_chars: int,
) -> list[Finding]:
    """Given an agent's workspace, the lengths (by relative path, present files only) of the
    bootstrap files every session gets (the gateway's own, INDEX.md) and of the handoffs the
    hook injects (each into its own session), and the caps: return a finding for INDEX.md, for
    ACTIVE_CONTEXT.md, for every handoff over the cap and for the other handoffs together, and
    one for the total when it passes the total cap.
    """
    overruns = {
        overrun.path: overrun
        for overrun in bootstrap_overruns(shared, handoffs, max_chars, total_max_chars)
    }

    def overrun_finding(key: str, overrun: Overrun, cap: str) -> Finding:
        message = f"agent {agent_id}: {describe_overrun(workspace, overrun)}"
        # The next multiple of 5,000 above the length: a cap with some room to grow.
        fix = f"{SET_CAP}.{cap} {(overrun.chars // 5000 + 1) * 5000}"
        return Finding(f"bootstrap.{agent_id}.{key}", "warning", message, fix)

    findings = []
    fitting = []
    for name, length in [(INDEX_PATH, shared.get(INDEX_PATH)), *sorted(handoffs.items())]:
        if length is None:
            continue
        key = name.removeprefix("memory/")  # INDEX.md, ACTIVE_CONTEXT.md, sessions/<conv>.md
        overrun = overruns.get(name)
        if overrun is not None:
            findings.append(overrun_finding(key, overrun, "bootstrapMaxChars"))
        elif name in (INDEX_PATH, ACTIVE_CONTEXT_PATH):
            message = (
                f"agent {agent_id}: {name} fits the bootstrap cap ({length:,} of "
                f"{max_chars:,} characters)"
            )
            findings.append(Finding(f"bootstrap.{agent_id}.{key}", "ok", message))
        else:
            fitting.append(length)
    if fitting:
        message = (
            f"agent {agent_id}: {len(fitting)} other conversation handoff(s) fit the bootstrap "
            f"cap (the largest {max(fitting):,} of {max_chars:,} characters)"
        )
        findings.append(Finding(f"bootstrap.{agent_id}.handoffs", "ok", message))
    total = overruns.get(None)
    if total is not None:
        findings.append(overrun_finding("total", total, "bootstrapTotalMaxChars"))
    return findings
