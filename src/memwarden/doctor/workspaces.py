"""Can memwarden work in each agent's workspace? Pure over facts gathered by `doctor.gather`.

A workspace memwarden refuses (relative, `/`, the home folder, a system folder), one that is
gone, or a memory folder it cannot write makes checkpoint and index fail that agent on every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from memwarden.doctor.finding import Finding


@dataclass(frozen=True)
class WorkspaceFacts:
    """What doctor saw of one agent's workspace."""

    agent_id: str
    workspace: str
    refused: str | None  # why memwarden will not write there (`Agent.workspace_problem`)
    exists: bool
    writable: bool  # its memory/ (or the workspace, before memory/ exists) can be written
    not_a_folder: str | None = None  # what is at its path instead of a folder ("a file")


def check_workspace(config_path: str, facts: WorkspaceFacts) -> Finding:
    """Given the gateway config's path and the facts of one agent, return its finding."""
    key = f"workspace.{facts.agent_id}"
    fix = (
        f"set agent {facts.agent_id}'s `workspace` in {config_path} to an absolute folder "
        "of its own"
    )
    if facts.refused is not None:
        return Finding(key, "action", facts.refused, fix)
    if facts.not_a_folder is not None:
        return Finding(
            key,
            "action",
            f"agent {facts.agent_id}: its workspace {facts.workspace} is {facts.not_a_folder} "
            "where a folder should be: checkpoint and index fail it on every run",
            f"move {facts.workspace} away, or {fix}",
        )
    if not facts.exists:
        return Finding(
            key,
            "action",
            f"agent {facts.agent_id}: its workspace {facts.workspace} does not exist (moved, "
            "unmounted or not created yet): checkpoint and index fail it on every run",
            f"mount or restore {facts.workspace}, or {fix}",
        )
    if not facts.writable:
        return Finding(
            key,
            "action",
            f"agent {facts.agent_id}: memwarden cannot write its memory folder in "
            f"{facts.workspace}: checkpoint and index fail it on every run",
            f"give this user write access to {facts.workspace}/memory",
        )
    return Finding(key, "ok", f"agent {facts.agent_id}: workspace {facts.workspace}")
