"""Transcript lines → typed entries: real line shapes from the captures, and odd ones."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from memwarden.openclaw.entries import (
    Compaction,
    Message,
    ModelChange,
    Other,
    OtherBlock,
    Reset,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    Usage,
    current_window,
    parse_entry,
    parse_line,
)

# Lines as the 2026.9.6 gateway wrote them (tests/fixtures/openclaw-2026.9.6, agent:main:main).
HEADER = (
    b'{"type":"session","version":4,"id":"b5974d71-c717-4e69-b2ad-af312d36f9f1",'
    b'"timestamp":"2026-11-22T05:26:49.986Z","cwd":"/srv/openclaw/workspace"}'
)
USER = (
    b'{"type":"message","id":"1aa09122-fad7-44e8-9142-8601303e2bd0","parentId":"16c8f3ef-5608-'
    b'4927-a74e-2978a688c9d0","timestamp":"2026-11-22T05:29:00.504Z","message":{"role":"user",'
    b'"content":"second message after reset","timestamp":1795325339964,"idempotencyKey":"edbd62b4'
    b'-98d4-4315-84f2-de9eb96f7f81:user","__openclaw":{"senderIsOwner":true}}}'
)
ASSISTANT = (
    b'{"type":"message","id":"cbe5bfaa-ce67-46aa-8d39-e8298f9c3861","parentId":"1aa09122-fad7-'
    b'44e8-9142-8601303e2bd0","timestamp":"2026-11-22T05:29:00.541Z","message":{"role":'
    b'"assistant","content":[{"type":"text","text":"Hello from the fake LLM. (canned reply) "}],'
    b'"api":"openai-completions","provider":"fake","model":"fake-model","usage":{"input":1234,'
    b'"output":9,"cacheRead":0,"cacheWrite":0,"totalTokens":1243,"cost":{"input":0,"output":0,'
    b'"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1795325340518}}'
)
RESET = (
    b'{"type":"reset","id":"f9f4725a","parentId":"cb38169b-0618-435b-bbaf-c71a671e0b10",'
    b'"timestamp":"2026-11-22T05:27:11.472Z","reason":"reset"}'
)
COMPACTION = (
    b'{"type":"compaction","id":"db813dc9-7360-41d9-948e-3f2b92ce1bc6","parentId":"01a70230-2f54'
    b'-439b-94da-985917a43ec7","timestamp":"2026-11-22T05:31:43.832Z","summary":"## Latest user '
    b'request context\\n\\"second message after reset\\"","firstKeptEntryId":"cbe5bfaa-ce67-46aa-'
    b'8d39-e8298f9c3861","tokensBefore":1243,"tokensAfter":80,"details":{"readFiles":[]},'
    b'"fromHook":true}'
)
MODEL_CHANGE = (
    b'{"type":"model_change","provider":"fake","modelId":"fake-model","id":"8d41c721","parentId":'
    b'null,"timestamp":"2026-11-22T05:26:50.066Z"}'
)
CUSTOM = (
    b'{"type":"custom","customType":"model-snapshot","data":{"provider":"fake"},"id":"9f487b8c",'
    b'"parentId":"9c118a1c","timestamp":"2026-11-22T05:26:50.447Z"}'
)


def _message(message: object, **fields: object) -> Message:
    entry = parse_entry({"type": "message", "id": "m1", **fields, "message": message})
    assert isinstance(entry, Message)
    return entry


def test_parse_line_real_header_returns_session_header():
    header = parse_line(HEADER)
    assert isinstance(header, SessionHeader)
    assert header.id == "b5974d71-c717-4e69-b2ad-af312d36f9f1"
    assert header.timestamp == datetime(2026, 11, 22, 5, 26, 49, 986000, tzinfo=UTC)


def test_parse_line_real_user_message_string_content_is_one_text_block():
    message = parse_line(USER)
    assert isinstance(message, Message)
    assert message.role == "user"
    assert message.blocks == (TextBlock("second message after reset"),)
    assert message.text == "second message after reset"
    assert (message.usage, message.model) == (None, None)


def test_parse_line_real_assistant_message_has_model_and_usage():
    message = parse_line(ASSISTANT)
    assert isinstance(message, Message)
    assert message.text == "Hello from the fake LLM. (canned reply) "
    assert message.model == "fake-model"
    assert message.usage == Usage(1234, 0, 0)


def test_message_time_is_message_timestamp_in_milliseconds():
    message = parse_line(USER)
    assert isinstance(message, Message)
    assert message.time == datetime.fromtimestamp(1795325339.964, UTC)
    assert message.time != message.timestamp


@pytest.mark.parametrize("value", [None, "soon", True, [1], 10**20])
def test_message_time_without_usable_timestamp_falls_back_to_entry_timestamp(value):
    message = _message(
        {"role": "user", "content": "x", "timestamp": value},
        timestamp="2026-11-22T05:29:00.504Z",
    )
    assert message.time == datetime(2026, 11, 22, 5, 29, 0, 504000, tzinfo=UTC)


def test_usage_context_tokens_counts_prompt_not_output():
    usage = Usage(input=1000, cache_read=20000, cache_write=300)
    assert usage.context_tokens == 21300


def test_usage_with_wrong_types_counts_zero():
    usage_line = {
        "input": "12",
        "output": None,
        "cacheRead": -4,
        "cacheWrite": 2.9,
        "totalTokens": [],
    }
    message = _message({"role": "assistant", "usage": usage_line})
    assert message.usage == Usage(0, 0, 2)


def test_message_block_list_keeps_every_kind_in_order():
    content = [
        {"type": "thinking", "thinking": "let me see"},
        {"type": "text", "text": "first"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.md"}},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "second"},
        {"type": "audio"},
        "not a block",
        {"no": "type"},
    ]
    message = _message({"role": "assistant", "content": content})
    assert message.blocks == (
        OtherBlock("thinking"),
        TextBlock("first"),
        ToolCallBlock("read", {"path": "a.md"}),
        OtherBlock("image"),
        TextBlock("second"),
        OtherBlock("audio"),
        OtherBlock(""),
    )
    assert message.text == "first\nsecond"
    assert message.tool_calls == (ToolCallBlock("read", {"path": "a.md"}),)


def test_message_odd_shapes_become_none_or_empty():
    message = _message({"role": 7, "content": 42, "model": ["x"], "usage": "lots"}, parentId=[1])
    assert (message.role, message.blocks, message.model, message.usage) == (None, (), None, None)
    assert _message("not an object").blocks == ()
    tool = _message({"content": [{"type": "toolCall", "name": None, "arguments": "{}"}]})
    assert tool.blocks == (ToolCallBlock("", {}),)


@pytest.mark.parametrize(
    ("text", "role", "control", "command"),
    [
        ("HEARTBEAT_OK", "assistant", True, False),
        (" NO_REPLY\n", "assistant", True, False),
        ("HEARTBEAT_OK and more", "assistant", False, False),
        ("/new", "user", False, True),
        ("  /compact now", "user", False, True),
        ("a path /tmp", "user", False, False),
    ],
)
def test_message_control_replies_and_commands_are_recognised(text, role, control, command):
    message = _message({"role": role, "content": text})
    assert (message.is_control_reply, message.is_command) == (control, command)


def test_parse_line_real_compaction_reset_model_change_and_custom():
    compaction = parse_line(COMPACTION)
    assert compaction == Compaction(
        "compaction",
        "db813dc9-7360-41d9-948e-3f2b92ce1bc6",
        datetime(2026, 11, 22, 5, 31, 43, 832000, tzinfo=UTC),
        '## Latest user request context\n"second message after reset"',
        "cbe5bfaa-ce67-46aa-8d39-e8298f9c3861",
        1243,
        80,
    )
    reset = parse_line(RESET)
    assert isinstance(reset, Reset)
    assert (reset.reason, reset.id) == ("reset", "f9f4725a")
    change = parse_line(MODEL_CHANGE)
    assert isinstance(change, ModelChange)
    assert change.model_id == "fake-model"
    assert parse_line(CUSTOM) == Other(
        "custom", "9f487b8c", datetime(2026, 11, 22, 5, 26, 50, 447000, tzinfo=UTC)
    )


@pytest.mark.parametrize(
    "entry_type",
    [
        "thinking_level_change",
        "branch_summary",
        "label",
        "session_info",
        "custom",
        "custom_message",
        "future",
    ],
)
def test_parse_entry_unused_type_returns_other(entry_type):
    entry = parse_entry({"type": entry_type, "id": "x1", "parentId": "x0"})
    assert entry == Other(entry_type, "x1", None)


@pytest.mark.parametrize(
    "value", [None, [], "message", 3, {}, {"type": None}, {"type": ""}, {"type": 3}]
)
def test_parse_entry_without_object_or_type_returns_none(value):
    assert parse_entry(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-22T05:26:49.986Z", datetime(2026, 11, 22, 5, 26, 49, 986000, tzinfo=UTC)),
        ("2026-11-22T07:26:49+02:00", datetime(2026, 11, 22, 5, 26, 49, tzinfo=UTC)),
        ("2026-11-22T05:26:49", datetime(2026, 11, 22, 5, 26, 49, tzinfo=UTC)),
        (1795325209986, datetime(2026, 11, 22, 5, 26, 49, 986000, tzinfo=UTC)),
        ("yesterday", None),
        (None, None),
    ],
)
def test_parse_entry_timestamp_is_aware_utc_or_none(value, expected):
    entry = parse_entry({"type": "label", "timestamp": value})
    assert entry is not None
    assert entry.timestamp == expected
    assert entry.timestamp is None or entry.timestamp.utcoffset().total_seconds() == 0


@pytest.mark.parametrize("line", [b"", b"\n", b"   ", b"\r", b" \t\r\n"])
def test_parse_line_blank_returns_none(line):
    assert parse_line(line) is None


def test_parse_line_json_that_is_not_an_entry_returns_none():
    assert parse_line(b"[1, 2]") is None
    assert parse_line(b'{"no": "type"}') is None


def test_parse_line_crlf_terminated_line_parses():
    assert isinstance(parse_line(RESET + b"\r"), Reset)


def test_parse_line_bad_json_raises_json_decode_error_not_unicode_error():
    with pytest.raises(orjson.JSONDecodeError) as raised:
        parse_line(b'{"type":"message","id":')
    assert not isinstance(raised.value, UnicodeDecodeError)


def test_parse_line_invalid_utf8_raises_unicode_decode_error():
    with pytest.raises(UnicodeDecodeError):
        parse_line(b'{"type":"message","text":"caf\xe9"}')


def test_entries_are_immutable():
    with pytest.raises(AttributeError):
        parse_line(RESET).reason = "new"  # type: ignore[union-attr]


def _entries(*lines: bytes):
    return [parse_line(line) for line in lines]


def test_current_window_without_reset_keeps_everything():
    entries = _entries(HEADER, USER, ASSISTANT)
    assert current_window(entries) == entries


def test_current_window_after_reset_starts_after_last_reset():
    entries = _entries(HEADER, USER, RESET, MODEL_CHANGE, USER, ASSISTANT, COMPACTION)
    assert current_window(entries) == entries[3:]


def test_current_window_two_resets_in_a_row_is_empty():
    new = orjson.dumps({"type": "reset", "id": "3e41bb4d", "parentId": "f9f4725a", "reason": "new"})
    entries = _entries(HEADER, USER, ASSISTANT, RESET, new)
    assert current_window(entries) == []
