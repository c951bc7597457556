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
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import translate
from functools import lru_cache


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
INTERACTIVE_KINDS = frozenset(
    {
        SessionKind.MAIN,
        SessionKind.DIRECT,
        SessionKind.GROUP,
        SessionKind.CHANNEL,
        SessionKind.THREAD,
        SessionKind.NAMED,
        SessionKind.GLOBAL,
    }
)

# Where a rule finds the channel: nowhere, the first segment (`telegram:direct:1`), or a peer
# shape anywhere in front (`telegram:group:-100:topic:9`, `telegram:direct:5:heartbeat`).
_NO_CHANNEL, _FIRST_SEGMENT, _PEER_SHAPE = 0, 1, 2

# (kind, pattern on the rest of the key, channel rule, for agent-scoped keys, for unscoped keys).
# Order matters: the first match wins, so suffix and automation rules come before peer shapes.
_RULES: tuple[tuple[SessionKind, str, int, bool, bool], ...] = (
    (SessionKind.HEARTBEAT, r"(?:.*:)?heartbeat", _PEER_SHAPE, True, True),
    (SessionKind.SUBAGENT, r"subagent:.+", _NO_CHANNEL, True, True),
    (SessionKind.ACP, r"acp:.+", _NO_CHANNEL, True, True),
    (SessionKind.CRON_RUN, r"cron:[^:]+:run:.+", _NO_CHANNEL, True, True),
    (SessionKind.CRON, r"cron:.+", _NO_CHANNEL, True, True),
    (SessionKind.BOOT, r"boot(?::.*)?", _NO_CHANNEL, True, True),
    (SessionKind.HOOK, r"hook:.+", _NO_CHANNEL, True, True),
    (SessionKind.NODE, r"node-.+", _NO_CHANNEL, True, True),
    (SessionKind.THREAD, r".+:(?:thread|topic):.+", _PEER_SHAPE, True, True),
    (SessionKind.DIRECT, r"(?:[^:]+:){0,2}(?:direct|dm):.+", _FIRST_SEGMENT, True, True),
    (SessionKind.GROUP, r"[^:]+:(?:[^:]+:)?group:.+", _FIRST_SEGMENT, True, True),
    (SessionKind.CHANNEL, r"[^:]+:(?:[^:]+:)?channel:.+", _FIRST_SEGMENT, True, True),
    (SessionKind.MAIN, r"main", _NO_CHANNEL, True, True),
    (SessionKind.NAMED, r".+", _NO_CHANNEL, True, False),
)

_PEER = re.compile(r"([^:]+):(?:[^:]+:)?(?:direct|dm|group|channel):")
_PEER_WORDS = frozenset({"direct", "dm", "group", "channel"})


def _combine(scoped: bool) -> re.Pattern[str]:
    """Join the rules that apply to one scope into a single alternation, one group per rule."""
    branches = [
        f"(?P<r{index}>{pattern})"
        for index, (_, pattern, _, for_scoped, for_unscoped) in enumerate(_RULES)
        if (for_scoped if scoped else for_unscoped)
    ]
    return re.compile("|".join(branches))


_SCOPED_RULES = _combine(scoped=True)
_UNSCOPED_RULES = _combine(scoped=False)
_RULE_BY_GROUP = {
    f"r{index}": (kind, channel) for index, (kind, _, channel, *_) in enumerate(_RULES)
}


@dataclass(frozen=True, slots=True)
class SessionKeyInfo:
    """What a session key says about its session."""

    key: str
    agent_id: str | None
    kind: SessionKind
    channel: str | None
    legacy: bool
    # The key after `agent:<agentId>:` (the whole key when it is not agent-scoped).
    rest: str = ""

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
        return SessionKeyInfo(normalized, None, SessionKind.GLOBAL, None, False, normalized)
    scoped = normalized.startswith("agent:")
    if scoped:
        agent_id, _, rest = normalized[6:].partition(":")
        match = _SCOPED_RULES.fullmatch(rest) if agent_id and rest else None
    else:
        agent_id, rest = None, normalized
        match = _UNSCOPED_RULES.fullmatch(rest)
    if match is None:
        return SessionKeyInfo(normalized, None, SessionKind.UNKNOWN, None, False, normalized)
    kind, channel_rule = _RULE_BY_GROUP[match.lastgroup]
    channel = _channel_of(rest, channel_rule) if channel_rule else None
    return SessionKeyInfo(normalized, agent_id, kind, channel, not scoped, rest)


def _channel_of(rest: str, channel_rule: int) -> str | None:
    """Return the channel a peer key names (`telegram` in `telegram:direct:1`), else None."""
    if channel_rule == _FIRST_SEGMENT:
        channel = rest.partition(":")[0]
    else:
        match = _PEER.match(rest)
        channel = match.group(1) if match else None
    return None if channel in _PEER_WORDS else channel


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
