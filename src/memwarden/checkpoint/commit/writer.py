"""Where the checkpoint's files go in an agent's workspace, never outside it.

Files go to `<workspace>/memory/` (0700, created when missing); `staging` writes them beside
their targets and `batch` renames them, refusing symlinks and paths leaving the workspace. A
workspace that does not exist is an error for that agent: the gateway creates workspaces,
memwarden does not invent them.
"""

from __future__ import annotations

from pathlib import Path

from memwarden.fs.files import check_inside, ensure_dir
from memwarden.process.errors import UnsafePathError

ACTIVE_PROBE = ".probe"


class WorkspaceMissing(UnsafePathError):
    """The agent's workspace folder does not exist."""


def memory_folder(workspace: Path, *, create: bool) -> Path:
    """Return `<workspace>/memory`, created (0700) when `create` and missing.

    Raise WorkspaceMissing if the workspace does not exist, UnsafePathError if `memory`
    leads outside it.
    """
    if not workspace.is_dir():
        raise WorkspaceMissing(
            f"{workspace}: the agent's workspace does not exist; check the agent's `workspace` "
            "in openclaw.json"
        )
    folder = workspace / "memory"
    if folder.is_symlink():
        check_inside(folder / ACTIVE_PROBE, workspace)
    elif create and not folder.is_dir():
        ensure_dir(folder, root=workspace)
    return folder
