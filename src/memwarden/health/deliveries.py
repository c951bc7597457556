"""Handoff deliveries: the receipts the bootstrap hook leaves.

The memory-index-inject hook writes `<storage>/deliveries/<first 32 hex digits of the SHA-256
of the session key>.json` at each bootstrap of a conversation (see hooks/memory-index-inject):
its last deliveries, each with when, the session id, and whether the session's handoff went in
whole, cut by the gateway's bootstrap caps, left out, or not at all (`none`). The check
`handoff.delivery` judges them (memwarden.health.checks.deliveries).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from memwarden.fs.files import atomic_write

FOLDER = "deliveries"
RECEIPT_VERSION = 1
SINCE_FILE = ".since"  # when the hook wrote its first receipt (or install hooks made the folder)
MAX_RECEIPT_BYTES = 256 * 1024


@dataclass(frozen=True)
class Delivery:
    """One bootstrap of a conversation, as its receipt tells it."""

    at: float
    session_id: str | None
    handoff: str  # whole, cut, left out, none
    handoff_chars: int | None


@dataclass(frozen=True)
class Receipt:
    """A conversation's last deliveries, oldest first."""

    session_key: str
    agent_id: str | None
    deliveries: tuple[Delivery, ...]

    @property
    def last(self) -> Delivery | None:
        return self.deliveries[-1] if self.deliveries else None


def receipt_name(session_key: str) -> str:
    """Given a session key, return its receipt's file name (the hook's rule)."""
    return hashlib.sha256(session_key.lower().encode()).hexdigest()[:32] + ".json"


def read_receipt(folder: Path, session_key: str) -> Receipt | None:
    """Return the receipt of a conversation, or None when there is none that can be read."""
    return _parse(folder / receipt_name(session_key))


def read_receipts(folder: Path) -> Iterator[Receipt]:
    """Yield every receipt of the folder that can be read."""
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return
    for path in paths:
        receipt = _parse(path)
        if receipt is not None:
            yield receipt


def begin_receipts(folder: Path, now: datetime) -> None:
    """Make the receipts folder and say since when receipts are expected (`memwarden install
    hooks`: from then on, a bootstrap after a reset with no receipt means the hook did not run).
    An earlier start is kept (atomic_write makes the folder)."""
    if not (folder / SINCE_FILE).exists():
        atomic_write(folder / SINCE_FILE, now.astimezone(UTC).isoformat() + "\n")


def receipts_since(folder: Path) -> float | None:
    """Return since when the folder has receipts (Unix time), or None when it has none: the
    hook was never installed, or never ran."""
    try:
        text = (folder / SINCE_FILE).read_text(encoding="utf-8").strip()
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (OSError, ValueError):
        return None


def prune_receipts(folder: Path, before: float, dry_run: bool) -> int:
    """Delete the receipts whose last delivery came before `before` (Unix time), and those that
    cannot be read; return how many (would) go."""
    gone = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        receipt = _parse(path)
        if receipt is not None and receipt.last is not None and receipt.last.at >= before:
            continue
        gone += 1
        if not dry_run:
            path.unlink(missing_ok=True)
    return gone


def _parse(path: Path) -> Receipt | None:
    try:
        with path.open("rb") as handle:
            data = orjson.loads(handle.read(MAX_RECEIPT_BYTES + 1)[:MAX_RECEIPT_BYTES])
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != RECEIPT_VERSION:
        return None
    key = data.get("sessionKey")
    if not isinstance(key, str):
        return None
    deliveries = tuple(
        delivery for one in data.get("deliveries") or () if (delivery := _delivery(one))
    )
    agent = data.get("agentId")
    return Receipt(key, agent if isinstance(agent, str) else None, deliveries)


def _delivery(data: object) -> Delivery | None:
    if not isinstance(data, dict) or not isinstance(data.get("at"), str):
        return None
    try:
        at = datetime.fromisoformat(data["at"].replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    handoff = data.get("handoff")
    files = [one for one in data.get("files") or () if isinstance(one, dict) and one.get("handoff")]
    chars = files[0].get("chars") if files else None
    session_id = data.get("sessionId")
    return Delivery(
        at,
        session_id if isinstance(session_id, str) else None,
        handoff if isinstance(handoff, str) else "none",
        chars if isinstance(chars, int) else None,
    )
