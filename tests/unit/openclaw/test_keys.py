"""Session-key classification: every shape OPENCLAW.md documents, and the edges around them."""

from __future__ import annotations

import pytest

from memwarden.openclaw.keys import (
    AUTOMATION_KINDS,
    INTERACTIVE_KINDS,
    SessionKind,
    classify,
    is_automation_key,
    names_automation,
)

K = SessionKind

# key, kind, agent_id
DOCUMENTED_KEYS = [
    # "Main: agent:<id>:main"
    ("agent:main:main", K.MAIN, "main"),
    ("agent:ops:main", K.MAIN, "ops"),
    # "agent:<id>:<channel>:direct|dm|group|channel:<peer>"
    ("agent:main:telegram:direct:123", K.DIRECT, "main"),
    ("agent:main:whatsapp:dm:+15550001", K.DIRECT, "main"),
    ("agent:main:slack:group:g42", K.GROUP, "main"),
    ("agent:main:discord:channel:42", K.CHANNEL, "main"),
    # "(+ :thread:<id>, :topic:<id>)"
    ("agent:main:discord:channel:42:thread:7", K.THREAD, "main"),
    ("agent:main:telegram:group:-100:topic:9", K.THREAD, "main"),
    # automation: cron, cron runs, sub-agents (nestable), acp, boot, heartbeats
    ("agent:main:cron:daily", K.CRON, "main"),
    ("agent:main:cron:daily:run:abc", K.CRON_RUN, "main"),
    ("agent:main:subagent:6f1c2d", K.SUBAGENT, "main"),
    ("agent:main:subagent:u1:subagent:u2", K.SUBAGENT, "main"),
    ("agent:main:acp:0b7e", K.ACP, "main"),
    ("agent:main:boot:r1", K.BOOT, "main"),
    ("agent:main:telegram:direct:5:heartbeat", K.HEARTBEAT, "main"),
    ("agent:main:main:heartbeat", K.HEARTBEAT, "main"),
    # legacy unscoped keys
    ("cron:nightly", K.CRON, None),
    ("hook:2c1f6a0e-uuid", K.HOOK, None),
    ("node-abc", K.NODE, None),
    # session.scope global
    ("global", K.GLOBAL, None),
    # any other interactive agent:<id>:<name>
    ("agent:main:hooktest", K.NAMED, "main"),
    ("agent:main:agentrpc", K.NAMED, "main"),
]


@pytest.mark.parametrize(
    ("key", "kind", "agent_id"),
    DOCUMENTED_KEYS,
    ids=[row[0] for row in DOCUMENTED_KEYS],
)
def test_classify_documented_key_returns_its_kind(key, kind, agent_id):
    info = classify(key)
    assert (info.key, info.kind, info.agent_id) == (key, kind, agent_id)


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("agent:main:direct:123", K.DIRECT),
        ("agent:main:telegram:default:direct:123", K.DIRECT),
        ("agent:main:main:thread:5", K.THREAD),
        ("agent:main:cron:daily:run:abc:heartbeat", K.HEARTBEAT),
        ("agent:main:bootstrap", K.NAMED),
        ("agent:main:hook:1", K.HOOK),
    ],
)
def test_classify_other_peer_and_suffix_shapes_return_expected_kind(key, kind):
    assert classify(key).kind == kind


def test_classify_mixed_case_key_is_lower_cased():
    info = classify("  AGENT:Main:Telegram:Direct:ABC ")
    assert info.key == "agent:main:telegram:direct:abc"
    assert (info.kind, info.agent_id) == (K.DIRECT, "main")


@pytest.mark.parametrize("key", ["", "   ", "agent:main", "agent:main:", "agent::main", "weird"])
def test_classify_malformed_or_empty_key_is_unknown(key):
    info = classify(key)
    assert info.kind is K.UNKNOWN
    assert not info.is_automation
    assert not info.is_interactive


def test_classify_automation_kinds_are_not_interactive():
    assert classify("agent:main:cron:daily:run:abc").is_automation
    assert not classify("agent:main:cron:daily:run:abc").is_interactive
    assert classify("agent:main:telegram:direct:1").is_interactive
    assert not classify("agent:main:telegram:direct:1").is_automation


def test_session_kind_every_kind_but_unknown_is_automation_or_interactive():
    assert AUTOMATION_KINDS.isdisjoint(INTERACTIVE_KINDS)
    assert AUTOMATION_KINDS | INTERACTIVE_KINDS | {K.UNKNOWN} == set(SessionKind)


def test_session_key_info_is_frozen():
    # Cached (lru_cache): a change would reach every later caller of classify.
    info = classify("agent:main:main")
    with pytest.raises(AttributeError):
        info.kind = K.CRON  # type: ignore[misc]
    assert classify("agent:main:main").kind is K.MAIN


def test_is_automation_key_builtin_automation_needs_no_patterns():
    assert is_automation_key("agent:main:subagent:u1")
    assert not is_automation_key("agent:main:main")


def test_is_automation_key_extra_glob_matches_case_insensitively():
    patterns = ("AGENT:*:reports", "agent:ops:*")
    assert is_automation_key("agent:main:Reports", patterns)
    assert is_automation_key("agent:ops:main", patterns)
    assert not is_automation_key("agent:main:main", patterns)
    assert classify("agent:main:reports").kind is K.NAMED


def test_classify_rest_is_the_key_after_the_agent_scope_or_the_whole_unscoped_key():
    assert classify("Agent:Main:Telegram:Direct:42").rest == "telegram:direct:42"
    assert classify("agent:ops:main").rest == "main"
    assert classify("cron:nightly").rest == "cron:nightly"
    assert classify("global").rest == "global"


# Scopes and rests that sit on the edges of the automation rules: a word with nothing after it,
# an empty agent id, line breaks (never matched by `.`), case and blanks, look-alike names.
SCOPES = ["", "agent:main:", "AGENT:Ops:", "  agent:x:", "agent::", "agent:"]
RESTS = [
    "cron",
    "cron:",
    "cron:x",
    "cron:x:run:y",
    "Cron:Nightly",
    "subagent:",
    "subagent:a",
    "subagent:a:subagent:b",
    "acp:",
    "acp:1",
    "hook:",
    "hook:z",
    "node-",
    "node-a",
    "nodes",
    "boot",
    "boot:",
    "boot:r",
    "bootstrap",
    "heartbeat",
    "x:heartbeat",
    "heartbeats",
    "main:heartbeat",
    "telegram:direct:1:heartbeat",
    "main",
    "telegram:direct:1",
    "global",
    "cron:\n",
    "cron:a\nb",
    "a\nb:heartbeat",
    "boot:\n",
    "",
    ":",
    "weird",
]
SUFFIXES = ["", " ", "\n", ":heartbeat", ":x"]


def test_names_automation_says_what_classify_says_for_every_edge_key():
    keys = [scope + rest + suffix for scope in SCOPES for rest in RESTS for suffix in SUFFIXES]
    differing = [key for key in keys if names_automation(key) != classify(key).is_automation]
    assert differing == []
    assert sum(names_automation(key) for key in keys) > len(keys) // 3  # both answers occur
    assert not all(names_automation(key) for key in keys)
