"""Which workspaces `memwarden index` indexes: one target per workspace, with its agents and caps.

Agents sharing a workspace (by real path) make one target, capped by the smallest bootstrap
limits among them and by `index.max_chars`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.fs.files import real_path
from memwarden.openclaw.agents import lost_workspace, unsafe_folder
from memwarden.openclaw.paths import resolve_home
from memwarden.process.errors import UsageError
from memwarden.process.runtime import JobContext

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent


@dataclass
class Target:
    """One workspace to index, the agents that share it and its bootstrap caps; `lost` says
    why a missing workspace is a failure (an agent of it has sessions), None when it is not."""

    workspace: Path
    real: str  # the workspace's real path
    agents: list[str]
    max_chars: int
    total_max_chars: int
    lost: str | None = None


def agent_targets(context: JobContext, agents: Sequence[Agent]) -> list[Target]:
    """Given agents, return their workspaces deduplicated by real path, in agent order. Each
    target names every agent of the deployment that shares its workspace (in config order),
    not only those given: the manifest is the workspace's, for all of them."""
    deployment = context.deployment
    wanted = dict.fromkeys(agent.real_workspace for agent in agents)
    sharing = {agent.id: agent for agent in deployment.agents if agent.real_workspace in wanted}
    sharing.update({agent.id: agent for agent in agents if agent.id not in sharing})
    by_workspace: dict[str, Target | None] = dict.fromkeys(wanted)
    for agent in sharing.values():
        real = agent.real_workspace
        cap, total = _caps(context, agent.id)
        target = by_workspace.get(real)
        if target is None:
            target = by_workspace[real] = Target(agent.workspace, real, [agent.id], cap, total)
        else:
            target.agents.append(agent.id)
            target.max_chars = min(target.max_chars, cap)
            target.total_max_chars = min(target.total_max_chars, total)
        target.lost = target.lost or lost_workspace(agent)
    return [target for target in by_workspace.values() if target is not None]


def workspace_targets(context: JobContext, folders: Sequence[Path]) -> list[Target]:
    """Given workspace folders, return their targets with the agents that use each of them.

    Raise UsageError for a folder that does not exist (a typo is not "nothing to index"), and for
    one no agent uses that is the root, a system folder or the home folder itself."""
    missing = [str(folder) for folder in folders if not folder.expanduser().is_dir()]
    if missing:
        raise UsageError(
            f"--workspace {', '.join(missing)}: no such folder; give an agent's workspace "
            "folder (`memwarden sessions --all` lists them)"
        )
    deployment = context.deployment
    by_real: dict[str, list[Agent]] = {real_path(folder.expanduser()): [] for folder in folders}
    for agent in deployment.agents:
        if agent.real_workspace in by_real:
            by_real[agent.real_workspace].append(agent)

    home_real = real_path(resolve_home(context.env))
    refused = [
        f"{real} is {what}"
        for real, agents in by_real.items()
        if not agents and (what := unsafe_folder(Path(real), real, home_real))
    ]
    if refused:
        raise UsageError(
            f"--workspace {'; '.join(refused)}: memwarden will not create memory/ there; give "
            "an agent's workspace folder (`memwarden sessions --all` lists them)"
        )
    targets = []
    for real, agents in by_real.items():
        if agents:  # they share the folder: one target
            targets += agent_targets(context, agents)
        else:  # the default agent's caps
            caps = _caps(context, deployment.default_agent().id)
            targets.append(Target(Path(real), real, [], *caps))
    return targets


def _caps(context: JobContext, agent_id: str) -> tuple[int, int]:
    """An agent's bootstrap caps: per file (lowered to index.max_chars when set), and total."""
    gateway_cap, total = context.deployment.bootstrap_caps(agent_id)
    configured = context.config.index.max_chars
    return (min(gateway_cap, configured) if configured else gateway_cap), total
