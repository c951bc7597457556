"""How INDEX.md and the bootstrap files are measured and shown: lengths as the gateway counts
them, sizes and counts in short form. Small on purpose: the bootstrap manifest needs them on
every checkpoint run, without the catalog.
"""

from __future__ import annotations


def js_length(text: str) -> int:
    """Given a text, return its length as the gateway measures it (UTF-16 units, end trimmed)."""
    trimmed = text.rstrip()
    if trimmed.isascii():
        return len(trimmed)
    return len(trimmed.encode("utf-16-le")) // 2


def format_size(size: int) -> str:
    """Given bytes, return `812 B`, `4.1 KB` or `1.2 MB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def format_count(number: int) -> str:
    """Given a count, return it short: `850`, `12.3K`, `1.2M`."""
    if number < 1000:
        return str(number)
    if number < 1_000_000:
        return f"{number / 1000:.1f}K"
    return f"{number / 1_000_000:.1f}M"
