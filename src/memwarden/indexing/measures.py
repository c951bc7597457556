"""Sizes and counts in short form, as INDEX.md and the reports show them."""

from __future__ import annotations


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
