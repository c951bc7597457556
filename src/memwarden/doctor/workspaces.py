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
    agent, workspace = facts.agent_id, facts.workspace
    fix = f"set agent {agent}'s `workspace` in {config_path} to an absolute folder of its own"
    failing = "checkpoint and index fail it on every run"
    if facts.refused is not None:
        problem = facts.refused
    elif facts.not_a_folder is not None:
        problem = (
            f"agent {agent}: its workspace {workspace} is {facts.not_a_folder} where a folder "
            f"should be: {failing}"
        )
        fix = f"move {workspace} away, or {fix}"
    elif not facts.exists:
        problem = (
            f"agent {agent}: its workspace {workspace} does not exist (moved, unmounted or not "
            f"created yet): {failing}"
        )
        fix = f"mount or restore {workspace}, or {fix}"
    elif not facts.writable:
        problem = (
            f"agent {agent}: memwarden cannot write its memory folder in {workspace}: {failing}"
        )
        fix = f"give this user write access to {workspace}/memory"
    else:
        return Finding(f"workspace.{agent}", "ok", f"agent {agent}: workspace {workspace}")
    return Finding(f"workspace.{agent}", "action", problem, fix)
