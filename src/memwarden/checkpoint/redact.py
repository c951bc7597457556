"""Mask secrets with typed placeholders before anything reaches a workspace.

A table of rules, applied in order: provider token shapes first (so `OPENAI_API_KEY=sk-…` says
`openai-key`, not `api-key`), then generic ones (`Bearer …`, `password=…`, credentials in URLs).
A rule replaces its whole match or, when it has a group named `secret`, only that group, so the
surrounding name stays readable: `password=[REDACTED:password]`. Rules are written so that a
text without secrets is scanned at `str.find` speed (see `Rule`): tens of microseconds per
kilobyte. Operators add rules with `checkpoint.redact_patterns`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from memwarden.checkpoint.timed_pattern import PatternError, TimedPattern
from memwarden.errors import ConfigError

PLACEHOLDER = "[REDACTED:{}]"
_TYPE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
_NOT_REDACTED = r"(?!\[REDACTED:)"
_VALUE = r"[\"']?\s*[:=]\s*[\"']?" + _NOT_REDACTED


@dataclass(frozen=True)
class Rule:
    """One secret shape: its placeholder type, pattern, and (case-insensitive rules) anchors.

    Case-sensitive rules start with a literal (a lookbehind after it checks the character in
    front), so the regular expression engine finds candidates at `str.find` speed. A regular
    expression that starts case-insensitively scans slowly, so those rules have `anchors`:
    lower-case words their matches start with, looked up with `str.find` in the lower-cased
    text; the rule is only tried there. Operators' rules are scanned as they are, with a time
    limit (`operator`: see timed_pattern). The pattern is compiled when first used: a run with
    nothing to write never pays for it.
    """

    kind: str
    source: str
    anchors: tuple[str, ...] = ()
    operator: bool = False

    @cached_property
    def pattern(self) -> re.Pattern[str] | TimedPattern:
        return TimedPattern(self.kind, self.source) if self.operator else re.compile(self.source)


def _exact(kind: str, pattern: str) -> Rule:
    return Rule(kind, pattern)


def _anchored(kind: str, pattern: str, *anchors: str) -> Rule:
    return Rule(kind, pattern, anchors)


# `key` preceded by api / access / private / secret, joined by `_`, `-` or nothing, any case.
_KEY_PREFIXES = "|".join(
    f"(?<=(?i:{word}){joint})"
    for word in ("api", "access", "private", "secret")
    for joint in ("_", "-", "")
)

RULES: tuple[Rule, ...] = (
    # Provider token shapes first: distinctive prefixes, so false positives are rare.
    _exact(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
    ),
    _exact(
        "anthropic-key",
        r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}",
    ),
    _exact(
        "openai-key",
        r"sk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
    ),
    _exact(
        "google-api-key",
        r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}",
    ),
    _exact(
        "google-oauth-token",
        r"ya29\.(?<![\w-]ya29\.)[0-9A-Za-z_-]{20,}",
    ),
    _exact(
        "github-token",
        r"gh(?<![\w-]gh)(?:[pousr]_[A-Za-z0-9]{36,}|ithub_pat_[A-Za-z0-9_]{40,})",
    ),
    _exact(
        "gitlab-token",
        r"gl(?<![\w-]gl)(?:pat|dt|rt|ptt|ft|cbt|imt|agent|oas|soat)-[A-Za-z0-9_-]{20,}",
    ),
    _exact(
        "slack-token",
        r"xox(?<![\w-]xox)[abposre]-[A-Za-z0-9-]{10,}",
    ),
    _exact(
        "slack-token",
        r"xapp-(?<![\w-]xapp-)\d-[A-Za-z0-9-]{10,}",
    ),
    _exact(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    ),
    _exact(
        "stripe-key",
        r"[sr]k_(?<![\w-][sr]k_)(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    _exact(
        "stripe-key",
        r"whsec_(?<![\w-]whsec_)[A-Za-z0-9]{24,}",
    ),
    _exact(
        "aws-access-key",
        r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA|IDA|ROA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _anchored(
        "aws-secret-key",
        r"(?i:aws[\w.-]{0,20}(?:secret|sk)[\w.-]{0,20})"
        + _VALUE
        + r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "aws",
    ),
    _exact(
        "jwt",
        r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    # Generic shapes: a name that says "secret", then a value.
    _anchored(
        "bearer-token",
        r"(?i:bearer)\s+" + _NOT_REDACTED + r"(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
        "bearer",
    ),
    _exact(
        "url-credentials",
        r"://[^\s:/@\[\]]+:" + _NOT_REDACTED + r"(?P<secret>[^\s/@]+)@",
    ),
    _anchored(
        "password",
        r"(?i:pass(?:word|wd|phrase)|pwd)" + _VALUE + r"(?P<secret>[^\s\"',;]{3,})",
        "pass",
        "pwd",
    ),
    _anchored(
        "api-key",
        r"(?:" + _KEY_PREFIXES + r")(?i:key)" + _VALUE + r"(?P<secret>[^\s\"',;]{6,})",
        "key",
    ),
    _anchored("secret", r"(?i:secret)" + _VALUE + r"(?P<secret>[^\s\"',;]{6,})", "secret"),
    _anchored("token", r"(?i:token)" + _VALUE + r"(?P<secret>[^\s\"',;]{6,})", "token"),
)


@dataclass
class Redactor:
    """Masks secrets in text and counts what it masked, by type."""

    rules: tuple[Rule, ...]
    counts: Counter[str] = field(default_factory=Counter)

    def redact(self, text: str) -> str:
        """Given a text, return it with every secret replaced by `[REDACTED:<type>]`."""
        lowered = None
        for rule in self.rules:
            if rule.anchors:
                if lowered is None:
                    lowered = text.lower()
                if len(lowered) == len(text):
                    masked = self._anchored(rule, text, lowered)
                else:  # lower() changed lengths (rare Unicode): positions differ, scan it all
                    masked = self._scan(rule, text)
            elif rule.pattern.search(text) is not None:
                masked = self._scan(rule, text)
            else:
                continue
            if masked != text:
                text, lowered = masked, None
        return text

    def _scan(self, rule: Rule, text: str) -> str:
        return rule.pattern.sub(lambda match: self._replace(match, rule.kind), text)

    def _anchored(self, rule: Rule, text: str, lowered: str) -> str:
        """Apply `rule` where the lower-cased text holds an anchor (its matches start there)."""
        starts = []
        for anchor in rule.anchors:
            position = lowered.find(anchor)
            while position >= 0:
                starts.append(position)
                position = lowered.find(anchor, position + 1)
        if not starts:
            return text
        pieces, done = [], 0
        for start in sorted(set(starts)):
            if start < done:
                continue
            match = rule.pattern.match(text, start)
            if match is None:
                continue
            pieces += [text[done:start], self._replace(match, rule.kind)]
            done = match.end()
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
        """Return the counts by type since the last call, and start counting again."""
        counts = dict(sorted(self.counts.items()))
        self.counts.clear()
        return counts

    def fresh(self) -> Redactor:
        """Return a redactor with the same compiled rules and its own counts."""
        return Redactor(self.rules)


class _Identity:
    """A redactor that masks nothing (checkpoint.redact = false)."""

    def redact(self, text: str) -> str:
        return text

    def take_counts(self) -> dict[str, int]:
        return {}

    def fresh(self) -> _Identity:
        return self


def build_redactor(
    extra_rules: Iterable[Mapping[str, str]] = (), enabled: bool = True
) -> Redactor | _Identity:
    """Given the operator's extra rules ({name, pattern}) and the switch, return a redactor.

    The operator's rules run after the provider shapes and before the generic ones. Raise
    ConfigError naming `checkpoint.redact_patterns` if a name is not a short lower-case word or
    a pattern does not compile.
    """
    if not enabled:
        return _Identity()
    problems, extra = [], []
    for rule in extra_rules:
        name, pattern = rule["name"], rule["pattern"]
        if not _TYPE_NAME.match(name):
            problems.append(
                f"checkpoint.redact_patterns: name {name!r} must be lower-case letters, "
                "digits, - or _"
            )
            continue
        try:
            extra.append(Rule(name, pattern, operator=True))
            extra[-1].pattern  # noqa: B018 - compiled now, so a bad pattern stops the run early
        except PatternError as error:
            problems.append(f"checkpoint.redact_patterns: {name}: invalid pattern: {error}")
    if problems:
        raise ConfigError(problems)
    split = next(index for index, rule in enumerate(RULES) if rule.kind == "bearer-token")
    return Redactor((*RULES[:split], *extra, *RULES[split:]))
