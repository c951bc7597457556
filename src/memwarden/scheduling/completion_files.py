"""`memwarden install|uninstall completion`: the completion script of each shell present,
written where that shell looks for it (and removed again, when memwarden wrote it)."""

from __future__ import annotations

from memwarden.fs.files import atomic_write, ensure_dir
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.completion import is_ours, locations, script, shells_present


def install_completion(context: JobContext, dry_run: bool) -> JobResult:
    """Write the completion script of each shell present (login shell or on PATH)."""
    present = shells_present(context.env)
    result = JobResult("install", data={"target": "completion", "dry_run": dry_run, "files": []})
    for location in locations(context.env):
        if location.shell not in present:
            continue
        verb = "would write" if dry_run else "wrote"
        if not dry_run:
            ensure_dir(location.path.parent)
            atomic_write(location.path, script(location.shell, context.parser()))
        line = f"{verb} {location.shell} completion: {location.path}"
        result.lines.append(line + (f" ({location.note})" if location.note else ""))
        result.data["files"].append({"shell": location.shell, "path": str(location.path)})
    if not result.data["files"]:
        result.lines.append("no bash, zsh or fish found: nothing to install")
    return result


def uninstall_completion(context: JobContext, dry_run: bool) -> JobResult:
    """Remove the completion files memwarden wrote; leave any other file alone."""
    result = JobResult("uninstall", data={"target": "completion", "dry_run": dry_run, "files": []})
    for location in locations(context.env):
        if not location.path.exists():
            continue
        if not is_ours(location.path):
            result.lines.append(f"kept {location.path}: not written by memwarden")
            continue
        if not dry_run:
            location.path.unlink()
        result.lines.append(f"{'would remove' if dry_run else 'removed'} {location.path}")
        result.data["files"].append({"shell": location.shell, "path": str(location.path)})
    if not result.lines:
        result.lines.append("no completion files installed")
    return result
