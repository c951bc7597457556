"""The lost items of a compaction, appended once to the day's log of its conversation's agent.

The section goes to `memory/YYYY-MM-DD.md` (the local day of the compaction, in
`general.timezone`), the daily log the gateway indexes and loads on a bare `/new`; handoffs are
rewritten whole by every checkpoint, so they would not keep it. Its heading carries the
compaction's id, and the file is read for it before appending, under the agent's memory lock: a
run killed between the write and the ledger's commit never writes the section twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

from memwarden.checkpoint.digest.daily_log import local
from memwarden.checkpoint.render.values import daily_header
from memwarden.compactions.assessment import Assessment
from memwarden.fs.files import atomic_append, ensure_dir, read_text_if_exists
from memwarden.fs.templating import render
from memwarden.process.errors import UnsafePathError

SECTION_TEMPLATE = "compactions/lost_items.md.j2"


@dataclass(frozen=True)
class Kept:
    """Where a compaction's lost items went: the file (relative to the workspace), and whether
    this run wrote them (False: the file already held them, or a dry run)."""

    file: str
    written: bool
    already: bool = False


def heading_mark(entry_id: str) -> str:
    """Return the text of the section's heading that names the compaction."""
    return f"dropped by compaction `{entry_id}`"


def keep_lost(
    workspace: Path,
    agent_id: str,
    assessment: Assessment,
    session_key: str,
    zone: tzinfo | None,
    now: datetime,
    *,
    dry_run: bool,
) -> Kept:
    """Append the lost items of a lossy compaction to its day's log, unless the file already
    holds its section; return where they are.

    The caller holds the agent's memory lock. Raise UnsafePathError if the workspace is missing
    or memory/ leads out of it, OSError if the file cannot be written.
    """
    if not workspace.is_dir():
        raise UnsafePathError(
            f"{workspace}: the agent's workspace does not exist; check the agent's `workspace` "
            "in openclaw.json"
        )
    moment = local(assessment.compacted_at or now, zone)
    name = f"memory/{moment.date().isoformat()}.md"  # the day's log of the compaction
    path = workspace / name
    current = read_text_if_exists(path)
    if current is not None and heading_mark(assessment.entry_id) in current:
        return Kept(name, written=False, already=True)
    if dry_run:
        return Kept(name, written=False)
    section = render(
        SECTION_TEMPLATE,
        None,
        time=f"{moment:%H:%M}",
        moment=f"{moment:%Y-%m-%d %H:%M %Z}".rstrip(),
        mark=heading_mark(assessment.entry_id),
        session=session_key,
        messages=assessment.span_messages,
        summary_chars=assessment.summary_chars,
        lost=[item.label() for item in assessment.lost],
    )
    header = "" if current is not None else daily_header(agent_id, path.stem)
    ensure_dir(path.parent, root=workspace)
    atomic_append(path, section, root=workspace, header=header)
    return Kept(name, written=True)
