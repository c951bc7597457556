"""Mask secrets with typed placeholders before anything reaches a workspace.

The rules (`secret_rules`) are applied in order: provider token shapes first (so
`OPENAI_API_KEY=sk-…` says `openai-key`, not `api-key`), then the operator's
`checkpoint.redact_patterns`, then the generic shapes (`Bearer …`, `password=…`, credentials in
URLs). A rule replaces its whole match or, when it has a group named `secret`, only that group,
so the surrounding name stays readable: `password=[REDACTED:password]`. The built-in rules are
anchored on literals (see `secret_rules`): a text is scanned in time linear in its length, at
`str.find` speed when it holds no secret. A redactor remembers the texts it masked, so a text
met again (the same message in the handoff and in the daily log) costs a lookup and is counted
once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import NamedTuple

from memwarden.checkpoint.digest.secret_rules import (
    GENERIC_RULES,
    LONG_WORD,
    NEAR_DISTANCE,
    PLACEHOLDER,
    PROVIDER_RULES,
    PatternError,
    Rule,
)
from memwarden.process.errors import ConfigError

# Texts remembered per redactor (one session's); past this the memory starts again.
_MEMO_LIMIT = 4096


class _Lookups(NamedTuple):
    """The literals that say a rule may match, by where they are looked for, with the rule's
    index; and the rules tried on every text (`near` rules, operators' scanned rules). Each
    kind of literal also has one pattern matching any of them: most texts hold none, and one
    search in C says so faster than a test per literal."""

    words: tuple[tuple[str, int], ...]
    folded: tuple[tuple[str, int], ...]
    exact: tuple[tuple[str, int], ...]
    always: tuple[int, ...]
    any_word: re.Pattern[str]
    any_folded: re.Pattern[str]
    any_exact: re.Pattern[str]

    @classmethod
    @cache
    def of(cls, rules: tuple[Rule, ...]) -> _Lookups:
        """Return the lookups of a rule table (built once per table)."""
        words, folded, exact, always = [], [], [], []
        for index, rule in enumerate(rules):
            if rule.near or not rule.anchors:
                always.append(index)
                continue
            where = words if rule.word else folded if rule.folded else exact
            where += [(anchor, index) for anchor in rule.anchors]
        return cls(
            tuple(words),
            tuple(folded),
            tuple(exact),
            tuple(always),
            _any_of(words),
            _any_of(folded),
            _any_of(exact),
        )

    def rules_for(self, text: str, lowered: str) -> list[int]:
        """Return the indexes, in order, of the rules whose literals the text holds."""
        found = set(self.always)
        if self.words and len(text) >= LONG_WORD:
            words = " ".join([word for word in text.split() if len(word) >= LONG_WORD])
            if words and self.any_word.search(words):
                found.update([index for anchor, index in self.words if anchor in words])
        if self.any_folded.search(lowered):
            found.update([index for anchor, index in self.folded if anchor in lowered])
        if self.any_exact.search(text):
            found.update([index for anchor, index in self.exact if anchor in text])
        return sorted(found)


def _any_of(anchors: list[tuple[str, int]]) -> re.Pattern[str]:
    """Return a pattern that finds any of the anchors (one that never matches when none).

    The anchors are laid out as a tree of their characters, so each position of a text costs
    a character test per level, not one per anchor. An anchor's longer forms are left out: for
    "is there one", `sk-` found is enough, `sk-ant-` adds nothing."""
    tree: dict[str, dict] = {}
    for anchor, _ in anchors:
        node = tree
        for character in anchor:
            node = node.setdefault(character, {})
        node[""] = {}
    return re.compile(_alternatives(tree) if tree else r"(?!)")


def _alternatives(node: dict[str, dict]) -> str:
    if "" in node:
        return ""
    branches = [re.escape(character) + _alternatives(child) for character, child in node.items()]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


@dataclass
class Redactor:
    """Masks secrets in text and counts what it masked, by type (each distinct text once).

    A text is looked at once for every rule's literals (word rules' in its long words only);
    the rules whose literals it holds are then applied in order. Masking only ever adds
    placeholders, which hold no literal that lets a rule match, so the rules found at first are
    all the rules that can match.
    """

    rules: tuple[Rule, ...]
    counts: Counter[str] = field(default_factory=Counter)
    _masked: dict[str, str] = field(default_factory=dict, repr=False)

    @cached_property
    def _lookups(self) -> _Lookups:
        # Built on the first text: a run with nothing new compiles no pattern.
        return _Lookups.of(self.rules)

    def redact(self, text: str) -> str:
        """Given a text, return it with every secret replaced by `[REDACTED:<type>]`."""
        if not self.rules:  # checkpoint.redact = false
            return text
        known = self._masked.get(text)
        if known is not None:
            return known
        masked = self._mask(text)
        if len(self._masked) >= _MEMO_LIMIT:
            self._masked.clear()
        self._masked[text] = masked
        return masked

    def _mask(self, text: str) -> str:
        lowered: str | None = text.lower()
        for index in self._lookups.rules_for(text, lowered):
            rule = self.rules[index]
            if rule.near:
                masked = self._near(rule, text)
            elif not rule.anchors:
                masked = self._scan(rule, text)
            elif not rule.folded:
                masked = self._anchored(rule, text, text)
            else:
                if lowered is None:
                    lowered = text.lower()
                if len(lowered) == len(text):
                    masked = self._anchored(rule, text, lowered)
                else:  # lower() changed lengths (rare Unicode): positions differ, scan it all
                    masked = self._scan(rule, text)
            if masked != text:
                text, lowered = masked, None
        return text

    def _scan(self, rule: Rule, text: str) -> str:
        return rule.pattern.sub(lambda match: self._replace(match, rule.kind), text)

    def _anchored(self, rule: Rule, text: str, haystack: str) -> str:
        """Apply `rule` where `haystack` (the text, or the text lower-cased) holds an anchor:
        its matches start there, or `rule.lead` characters before."""
        starts = []
        for anchor in rule.anchors:
            position = haystack.find(anchor)
            while position >= 0:
                starts.append(position - rule.lead)
                position = haystack.find(anchor, position + 1)
        if not starts:
            return text
        if len(rule.anchors) > 1:
            starts = sorted(set(starts))
        pieces, done = [], 0
        for start in starts:
            if start < done:
                continue
            match = rule.pattern.match(text, start)
            if match is None:
                continue
            pieces += [text[done:start], self._replace(match, rule.kind)]
            done = match.end()
        return self._join(pieces, text, done)

    def _near(self, rule: Rule, text: str) -> str:
        """Apply `rule` to matches that start within NEAR_DISTANCE characters of `rule.near`."""
        windows: list[list[int]] = []
        position = text.find(rule.near)
        while position >= 0:
            low, high = position - NEAR_DISTANCE, position + len(rule.near) + NEAR_DISTANCE
            if windows and low <= windows[-1][1]:
                windows[-1][1] = high
            else:
                windows.append([max(low, 0), high])
            position = text.find(rule.near, position + 1)
        pieces, done = [], 0
        for low, high in windows:
            # A match may end past the window (never past the next NEAR_DISTANCE characters).
            for match in rule.pattern.finditer(text, max(low, done), high + NEAR_DISTANCE):
                if match.start() > high:
                    break
                pieces += [text[done : match.start()], self._replace(match, rule.kind)]
                done = match.end()
        return self._join(pieces, text, done)

    @staticmethod
    def _join(pieces: list[str], text: str, done: int) -> str:
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _replace(self, match: re.Match[str], kind: str) -> str:
        self.counts[kind] += 1
        placeholder = PLACEHOLDER.format(kind)
        if "secret" not in match.re.groupindex:
            return placeholder
        start, end = match.span("secret")
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + placeholder + whole[end - offset :]

    def take_counts(self) -> dict[str, int]:
        """Return the counts by type since the last call, and start counting (and remembering
        texts) again."""
        counts = dict(sorted(self.counts.items()))
        self.counts.clear()
        self._masked.clear()
        return counts

    def fresh(self) -> Redactor:
        """Return a redactor with the same compiled rules and its own counts and memory."""
        return Redactor(self.rules)


def build_redactor(extra_rules: Iterable[Mapping[str, str]] = (), enabled: bool = True) -> Redactor:
    """Given the operator's extra rules ({name, pattern}) and the switch, return a redactor.

    The operator's rules run after the provider shapes and before the generic ones. Raise
    ConfigError naming `checkpoint.redact_patterns` if a pattern does not compile.
    """
    if not enabled:
        return Redactor(())  # masks nothing
    problems, extra = [], []
    for rule in extra_rules:
        name, pattern = rule["name"], rule["pattern"]  # the names are checked at load
        try:
            extra.append(Rule(name, pattern, operator=True))
            extra[-1].pattern  # noqa: B018 - compiled now, so a bad pattern stops the run early
        except PatternError as error:
            problems.append(f"checkpoint.redact_patterns: {name}: invalid pattern: {error}")
    if problems:
        raise ConfigError(problems)
    return Redactor((*PROVIDER_RULES, *extra, *GENERIC_RULES))
