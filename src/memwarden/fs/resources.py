"""Where the files memwarden ships beside its code are: a checkout's folders, else the copies a
wheel install puts under `<prefix>/share/`."""

from __future__ import annotations

import sys
from pathlib import Path

import memwarden

CHECKOUT = Path(memwarden.__file__).resolve().parents[2]


def shipped(checkout_folder: str, installed_folder: str) -> Path:
    """Return `<checkout>/<checkout_folder>` when memwarden runs from a checkout, else
    `<prefix>/share/<installed_folder>` (where pyproject's data-files put it in a wheel)."""
    checkout = CHECKOUT / checkout_folder
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / installed_folder


def docs_dir() -> Path:
    """Return the folder of memwarden's documentation (docs/*.md)."""
    return shipped("docs", "doc/memwarden/docs")
