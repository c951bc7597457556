"""Session keys: what kind of conversation a key names, from an ordered table of rules.

The gateway names sessions `agent:<agentId>:<rest>` (lower-cased); older stores also hold
unscoped keys such as `cron:<job>`, `hook:<uuid>` or `node-<id>`, and `global` exists when
`session.scope` is global. Each rule below matches the part after `agent:<agentId>:` (or the
whole unscoped key); the first rule that matches decides the kind. Automation sessions (cron runs,
sub-agents, heartbeats, …) are never rotated and never taken as "the" conversation of an agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from fnmatch import translate
from functools import lru_cache
from typing import NamedTuple


class SessionKind(StrEnum):
    """The kind of session a key names."""

    MAIN = "main"
    DIRECT = "direct"
    GROUP = "group"
    CHANNEL = "channel"
    THREAD = "thread"
    NAMED = "named"
    GLOBAL = "global"
    CRON = "cron"
    CRON_RUN = "cron_run"
    SUBAGENT = "subagent"
    ACP = "acp"
    BOOT = "boot"
    HEARTBEAT = "heartbeat"
    HOOK = "hook"
    NODE = "node"
    UNKNOWN = "unknown"


AUTOMATION_KINDS = frozenset(
    {
        SessionKind.CRON,
        SessionKind.CRON_RUN,
        SessionKind.SUBAGENT,
        SessionKind.ACP,
        SessionKind.BOOT,
        SessionKind.HEARTBEAT,
        SessionKind.HOOK,
        SessionKind.NODE,
    }
)
# Conversations with people: every kind but automation and `unknown`.
INTERACTIVE_KINDS = frozenset(SessionKind) - AUTOMATION_KINDS - {SessionKind.UNKNOWN}

# (kind, pattern on the rest of the key). Order matters: the first match wins, so suffix and
# automation rules come before peer shapes. Unscoped keys never match the last rule (named).
_RULES: tuple[tuple[SessionKind, str], ...] = (
    (SessionKind.HEARTBEAT, r"(?:.*:)?heartbeat"),
    (SessionKind.SUBAGENT, r"subagent:.+"),
    (SessionKind.ACP, r"acp:.+"),
    (SessionKind.CRON_RUN, r"cron:[^:]+:run:.+"),
    (SessionKind.CRON, r"cron:.+"),
    (SessionKind.BOOT, r"boot(?::.*)?"),
    (SessionKind.HOOK, r"hook:.+"),
    (SessionKind.NODE, r"node-.+"),
    (SessionKind.THREAD, r".+:(?:thread|topic):.+"),
    (SessionKind.DIRECT, r"(?:[^:]+:){0,2}(?:direct|dm):.+"),
    (SessionKind.GROUP, r"[^:]+:(?:[^:]+:)?group:.+"),
    (SessionKind.CHANNEL, r"[^:]+:(?:[^:]+:)?channel:.+"),
    (SessionKind.MAIN, r"main"),
    (SessionKind.NAMED, r".+"),
)


def _combine(rules: tuple[tuple[SessionKind, str], ...]) -> re.Pattern[str]:
    """Join rules into a single alternation, one group per rule."""
    return re.compile(
        "|".join(f"(?P<r{index}>{pattern})" for index, (_, pattern) in enumerate(rules))
    )


_SCOPED_RULES = _combine(_RULES)
_UNSCOPED_RULES = _combine(_RULES[:-1])
_KIND_BY_GROUP = {f"r{index}": kind for index, (kind, _) in enumerate(_RULES)}


class SessionKeyInfo(NamedTuple):
    """What a session key says about its session."""

    key: str
    agent_id: str | None
    kind: SessionKind
    # The key after `agent:<agentId>:` (the whole key when it is not agent-scoped).
    rest: str

    @property
    def is_automation(self) -> bool:
        """Return True when the session is run by a machine (cron, sub-agent, heartbeat, …)."""
        return self.kind in AUTOMATION_KINDS

    @property
    def is_interactive(self) -> bool:
        """Return True when the session is a conversation with people."""
        return self.kind in INTERACTIVE_KINDS


@lru_cache(maxsize=1 << 18)  # a store's keys, each looked at several times in a run
def classify(key: str) -> SessionKeyInfo:
    """Given a session key in any case, return its SessionKeyInfo.

    Keys that fit no rule (empty, `agent:` without a rest, unscoped names the gateway never
    writes) are of kind `unknown`: neither automation nor interactive.
    """
    normalized = key.strip().lower()
    if normalized == "global":
        return SessionKeyInfo(normalized, None, SessionKind.GLOBAL, normalized)
    if normalized.startswith("agent:"):
        agent_id, _, rest = normalized[6:].partition(":")
        match = _SCOPED_RULES.fullmatch(rest) if agent_id and rest else None
    else:
        agent_id, rest = None, normalized
        match = _UNSCOPED_RULES.fullmatch(rest)
    if match is None:
        return SessionKeyInfo(normalized, None, SessionKind.UNKNOWN, normalized)
    return SessionKeyInfo(normalized, agent_id, _KIND_BY_GROUP[match.lastgroup], rest)


# Rules the key's first word (or its last: heartbeat) settles, all of them automation: in a
# store of 100k entries most keys are cron runs and sub-agents, told apart here without
# `classify` building (and caching) what it knows of each. Each word needs more after it (`.+`).
_AUTOMATION_WORDS = ("subagent:", "acp:", "cron:", "hook:", "node-")


def names_automation(key: str) -> bool:
    """Given a session key, return `classify(key).is_automation`, cheaply for most automation
    keys (the others are classified)."""
    normalized = key.strip().lower()
    rest = normalized
    if normalized.startswith("agent:"):
        agent_id, _, rest = normalized[6:].partition(":")
        if not agent_id:
            rest = ""
    # The first rule (heartbeat) and the automation rules before every interactive one:
    # whichever matches first, the kind is automation. `.` in the rules never matches "\n".
    if rest and "\n" not in rest:
        if rest == "heartbeat" or rest.endswith(":heartbeat"):
            return True
        if rest.startswith(_AUTOMATION_WORDS) and rest not in _AUTOMATION_WORDS:
            return True
        if rest == "boot" or rest.startswith("boot:"):
            return True
    return classify(key).is_automation


def is_automation_key(key: str, extra_patterns: Iterable[str] = ()) -> bool:
    """Given a session key and extra glob patterns, return True when the key is automation.

    A key is automation when its kind is (see `classify`) or when it matches one of the
    `fnmatch` globs in `extra_patterns` (case-insensitive), which lets operators mark their own
    machine-driven sessions, e.g. `("agent:*:reports", "agent:ops:*")`.
    """
    if names_automation(key):
        return True
    patterns = tuple(extra_patterns)
    return bool(patterns) and _globs(patterns).fullmatch(key.strip().lower()) is not None


@lru_cache(maxsize=64)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """Compile glob patterns into one case-folded regular expression."""
    return re.compile("|".join(f"(?:{translate(pattern.lower())})" for pattern in patterns))
