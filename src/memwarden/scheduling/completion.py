"""Shell completion: scripts generated from memwarden's own argument parser (by shtab), and
`memwarden install|uninstall completion`, which write them where each shell looks for them (and
remove them again, when memwarden wrote them)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memwarden.fs.files import atomic_write
from memwarden.fs.xdg import xdg_home
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.host import find_command

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


def install_completion(context: JobContext, dry_run: bool) -> JobResult:
    """Write the completion script of each shell present: the login shell and any on PATH."""
    login = Path(context.env.get("SHELL", "")).name
    result = JobResult("install", data={"target": "completion", "dry_run": dry_run, "files": []})
    for location in locations(context.env):
        if location.shell != login and find_command(location.shell, context.env) is None:
            continue
        verb = "would write" if dry_run else "wrote"
        if not dry_run:  # its folder is created (0700) if missing
            atomic_write(location.path, script(location.shell, context.parser()))
        line = f"{verb} {location.shell} completion: {location.path}"
        result.lines.append(line + (f" ({location.note})" if location.note else ""))
        result.data["files"].append({"shell": location.shell, "path": str(location.path)})
    if not result.data["files"]:
        result.lines.append("no bash, zsh or fish found: nothing to install")
    return result


def uninstall_completion(context: JobContext, dry_run: bool) -> JobResult:
    """Remove the completion files memwarden wrote (its marker on their first line); leave any
    other file alone."""
    result = JobResult("uninstall", data={"target": "completion", "dry_run": dry_run, "files": []})
    for location in locations(context.env):
        if not location.path.exists():
            continue
        if not _is_ours(location.path):
            result.lines.append(f"kept {location.path}: not written by memwarden")
            continue
        if not dry_run:
            location.path.unlink()
        result.lines.append(f"{'would remove' if dry_run else 'removed'} {location.path}")
        result.data["files"].append({"shell": location.shell, "path": str(location.path)})
    if not result.lines:
        result.lines.append("no completion files installed")
    return result


def _is_ours(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            return MARKER in file.readline()
    except OSError:
        return False
