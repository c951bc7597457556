"""Where each conversation's handoff lives in a workspace, and which conversation a file holds.

One file per conversation, in the workspace's `memory/` folder:

- `ACTIVE_CONTEXT.md`: the agent's main session (the name operators know). When several agents
  share a workspace, the first of them in the gateway config keeps that name; the main
  sessions of the others are written like any other conversation.
- `sessions/<slug>.md`: every other conversation (direct peers, groups, threads, named ones).

The slug is the key without `agent:`, each `:` written `.`: `agent:main:telegram:direct:42`
→ `main.telegram.direct.42`. A key that does not fit that form exactly (a character outside
`a-z 0-9 _ -`, an empty part, a key that is not agent-scoped, over 100 characters) gets a
readable part cut at 60 characters, then `~` and 10 hex digits of the key's SHA-256
(`main.whatsapp.direct-49170-s.whatsapp.net~3f9a2c1b7e`). The plain form never holds `~`, so the
two forms never meet, and two keys never share a file.

Which conversation a file holds is what its provenance line says (`> - session: `KEY``, at the
top, written by templates/checkpoint/active_context.md.j2), never what its name suggests; a file
is a conversation's handoff only when it is also the file that conversation is written to.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memwarden.openclaw.keys import SessionKind, classify

if TYPE_CHECKING:
    from memwarden.openclaw.agents import Agent

ACTIVE_CONTEXT = "ACTIVE_CONTEXT.md"
SESSIONS_FOLDER = "sessions"
PLAIN_MAX_CHARS = 100
READABLE_MAX_CHARS = 60
DIGEST_CHARS = 10
DIGEST_MARK = "~"

_PLAIN_PART = re.compile(r"[a-z0-9_-]+")
_UNSAFE = re.compile(r"[^a-z0-9_.-]+")
_PUNCTUATION_RUN = re.compile(r"[.-]{2,}")
# The provenance line of the template: "> - session: `KEY` (id …".
_PROVENANCE_SESSION = re.compile(r"^> - session: `([^`\s]+)`")
_UNSCOPED_MAIN = "main"


def key_slug(session_key: str) -> str:
    """Given a session key (any case), return the file-name slug of its conversation."""
    info = classify(session_key)
    scoped = info.agent_id is not None
    parts = [info.agent_id, *info.rest.split(":")] if scoped else info.key.split(":")
    dotted = ".".join(parts)
    if scoped and len(dotted) <= PLAIN_MAX_CHARS and all(map(_PLAIN_PART.fullmatch, parts)):
        return dotted
    readable = _UNSAFE.sub("-", dotted)
    readable = _PUNCTUATION_RUN.sub("-", readable).strip(".-")
    readable = readable[:READABLE_MAX_CHARS].rstrip(".-") or "session"
    digest = hashlib.sha256(info.key.encode("utf-8")).hexdigest()[:DIGEST_CHARS]
    return f"{readable}{DIGEST_MARK}{digest}"


def handoff_name(session_key: str, *, keeps_main_file: bool = True) -> str:
    """Given a session key, return its handoff's path relative to memory/ (`/`-separated).

    `keeps_main_file` is False for an agent whose main session cannot have ACTIVE_CONTEXT.md
    because an agent before it in the config uses the same workspace (see `main_file_agents`).
    """
    if keeps_main_file and classify(session_key).kind is SessionKind.MAIN:
        return ACTIVE_CONTEXT
    return f"{SESSIONS_FOLDER}/{key_slug(session_key)}.md"


def main_file_agents(agents: Iterable[Agent]) -> frozenset[str]:
    """Given every agent of the deployment in config order, return the ids of those whose main
    session is written to ACTIVE_CONTEXT.md: the first agent of each workspace (by real path)."""
    owners: dict[str, str] = {}
    for agent in agents:
        owners.setdefault(agent.real_workspace, agent.id)
    return frozenset(owners.values())


def handoff_session(text: str, agents: Sequence[str]) -> str | None:
    """Given a handoff's text and the agents sharing its workspace, return the session key its
    provenance line names, lower-cased, or None when it names none.

    Only the first quoted block before the first section counts (the rest of the file quotes
    conversations). A legacy unscoped `main` becomes `agent:<id>:main` when one agent uses the
    workspace.
    """
    quoted = False
    for number, line in enumerate(text.splitlines()):
        if line.startswith(">"):
            quoted = True
            match = _PROVENANCE_SESSION.match(line)
            if match:
                key = match[1].lower()
                if key == _UNSCOPED_MAIN and len(agents) == 1:
                    return f"agent:{agents[0].lower()}:main"
                return key
        elif quoted or (number > 0 and line.startswith("#")):
            return None
    return None


def is_file_of(name: str, session_key: str, keeping_main_file: Collection[str]) -> bool:
    """Return True when `name` (relative to memory/) is the file `session_key` is written to;
    `keeping_main_file` are the agents whose main session has ACTIVE_CONTEXT.md."""
    agent_id = classify(session_key).agent_id
    keeps = agent_id is None or agent_id in keeping_main_file
    return handoff_name(session_key, keeps_main_file=keeps) == name


@dataclass(frozen=True)
class HandoffFile:
    """A file that may be a handoff: its path relative to memory/, its text, the session its
    provenance line names (None: none) and its mtime."""

    name: str
    text: str
    session: str | None
    mtime: float


def candidate_names(memory_dir: Path) -> list[str]:
    """Return the names (relative to memory/) of the regular files that may be handoffs:
    ACTIVE_CONTEXT.md and `sessions/*.md`, sorted. Symlinks are never listed."""
    names = []
    if _is_regular(memory_dir / ACTIVE_CONTEXT):
        names.append(ACTIVE_CONTEXT)
    try:
        entries = list(os.scandir(memory_dir / SESSIONS_FOLDER))
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        name = entry.name
        if name.endswith(".md") and not name.startswith(".") and _is_file_entry(entry):
            names.append(f"{SESSIONS_FOLDER}/{name}")
    return sorted(names)


def read_handoffs(memory_dir: Path, agents: Sequence[str]) -> list[HandoffFile]:
    """Given a memory folder and the agents sharing its workspace, read every candidate file;
    return them with the session each names. Raise OSError if one cannot be read."""
    found = []
    for name in candidate_names(memory_dir):
        descriptor = os.open(memory_dir / name, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as handle:
            data = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
        text = data.decode("utf-8", errors="replace")
        found.append(HandoffFile(name, text, handoff_session(text, agents), mtime))
    return found


def _is_file_entry(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _is_regular(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink()
    except OSError:
        return False
