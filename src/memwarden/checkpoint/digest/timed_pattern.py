"""Operators' regular expressions, run with a time limit.

A pattern from `checkpoint.redact_patterns` is the operator's code: one with nested repetition
(`(a|aa)+$`) can backtrack for hours on an ordinary text. These patterns are compiled by the
`regex` module, whose matching stops after `seconds` of CPU time and raises; the error names
the setting and the pattern. `regex` is imported only when an operator's pattern is compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memwarden.process.errors import MemwardenError

OPERATOR_PATTERN_SECONDS = 1.0
"""CPU time one operator pattern may spend on one text."""


class PatternError(ValueError):
    """An operator's pattern does not compile."""


class PatternTimeout(MemwardenError):
    """An operator's pattern ran past its time limit on one text."""


class TimedPattern:
    """A compiled operator pattern whose `sub` stops after `seconds` (an operator's rule is
    applied to a text whole: redact scans it, having no anchors)."""

    def __init__(self, name: str, source: str, seconds: float = OPERATOR_PATTERN_SECONDS) -> None:
        """Raise PatternError if `source` does not compile."""
        import regex

        self.name = name
        self.source = source
        self.seconds = seconds
        try:
            self._compiled = regex.compile(source)
        except regex.error as error:
            raise PatternError(str(error)) from None

    def sub(self, replacement: Callable[[Any], str], text: str) -> str:
        try:
            return self._compiled.sub(replacement, text, timeout=self.seconds)
        except TimeoutError as error:
            raise PatternTimeout(
                f"checkpoint.redact_patterns: {self.name}: pattern {self.source!r} ran longer "
                f"than {self.seconds:g} s on one text and was stopped (nested repetition such "
                "as (a|aa)+ backtracks without end): rewrite it or remove it"
            ) from error
