"""Shell completion: scripts generated from memwarden's own argument parser (by shtab), and
where each shell looks for them."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memwarden.fs.xdg import xdg_home

SHELLS = ("bash", "zsh", "fish")
MARKER = "memwarden shell completion"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """Given a shell (one of SHELLS) and memwarden's whole command line, return the completion
    script covering every command, sub-command and option."""
    import shtab

    body = shtab.complete(parser, shell=shell)
    return f"# {MARKER} ({shell}); regenerate with `memwarden completion {shell}`\n{body}"


@dataclass(frozen=True)
class Location:
    """Where `shell` loads completion from, and what the operator must do for it, if anything."""

    shell: str
    path: Path
    note: str = ""


def locations(env: Mapping[str, str]) -> list[Location]:
    """Return the per-user completion file of each shell, following the XDG folders that
    bash-completion 2 and fish read on their own; zsh reads only its `fpath`."""
    data = xdg_home(env, "XDG_DATA_HOME", ".local/share")
    config = xdg_home(env, "XDG_CONFIG_HOME", ".config")
    zsh_folder = data / "zsh" / "site-functions"
    return [
        Location("bash", data / "bash-completion" / "completions" / "memwarden"),
        Location(
            "zsh",
            zsh_folder / "_memwarden",
            note=f"add `fpath+=({zsh_folder})` before `compinit` in ~/.zshrc",
        ),
        Location("fish", config / "fish" / "completions" / "memwarden.fish"),
    ]


def is_ours(path: Path) -> bool:
    """Whether `path` is a completion file memwarden wrote (uninstall removes only those)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            return MARKER in file.readline()
    except OSError:
        return False


def shells_present(env: Mapping[str, str]) -> list[str]:
    """Return the shells worth installing completion for: the login shell and any on PATH."""
    login = Path(env.get("SHELL", "")).name
    path = env.get("PATH", os.defpath)
    return [shell for shell in SHELLS if shell == login or shutil.which(shell, path=path)]
