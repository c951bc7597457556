"""What a conversation holds, accumulated from its typed entries: kept messages, items by whom and
when, tools, compactions and resets; texts masked before anything is found in them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memwarden.checkpoint.digest.conversation import KEPT_MESSAGE_CHARS, Conversation
from memwarden.checkpoint.digest.extract import kept_messages
from memwarden.checkpoint.digest.redact import build_redactor
from memwarden.openclaw.entries import parse_entry

T0 = 1795325000000  # ms


def line(kind: str, **fields) -> dict:
    return {"type": kind, "id": fields.pop("id", "x"), "parentId": None, **fields}


def message(role: str, content, at: int = T0, **extra) -> dict:
    return line(
        "message",
        timestamp=datetime.fromtimestamp(at / 1000, UTC).isoformat(),
        message={"role": role, "content": content, "timestamp": at, **extra},
    )


def entries(*lines):
    return [parse_entry(value) for value in lines]


def taken(*lines, chars: int = 600, into: Conversation | None = None) -> Conversation:
    conversation = into if into is not None else Conversation()
    conversation.take(entries(*lines), build_redactor().redact, chars)
    return conversation


def test_take_keeps_user_and_assistant_text_in_order_with_times():
    conversation = taken(
        message("user", "please deploy the blog", T0),
        message("assistant", [{"type": "text", "text": "Deployed it to staging."}], T0 + 1000),
    )

    assert [(m.role, m.text) for m in conversation.messages] == [
        ("user", "please deploy the blog"),
        ("assistant", "Deployed it to staging."),
    ]
    assert conversation.messages[1].at == (T0 + 1000) / 1000
    assert (conversation.message_count, conversation.started_at) == (2, T0 / 1000)


def test_take_leaves_out_thinking_tool_results_control_replies_short_texts_and_commands():
    lines = [
        message("user", "/new"),
        message("user", "ok"),
        message("user", "   /compact now  "),
        message(
            "assistant",
            [
                {"type": "thinking", "thinking": "the user wants a summary, secretly"},
                {"type": "text", "text": "Here is the summary you asked for."},
            ],
        ),
        message("toolResult", [{"type": "text", "text": "file contents of /etc/hosts"}]),
        message("assistant", [{"type": "text", "text": "HEARTBEAT_OK"}]),
        message("assistant", [{"type": "text", "text": " NO_REPLY "}]),
        message("assistant", [{"type": "text", "text": "Done"}]),
        line("custom_message", customType="note", content="shown to the model", display=True),
    ]
    conversation = Conversation()

    kept = conversation.take(entries(*lines), build_redactor().redact, 600)

    assert [m.text for m in conversation.messages] == ["Here is the summary you asked for."]
    assert kept == kept_messages(entries(*lines))
    assert conversation.paths == {}


def test_take_notes_every_marked_line_and_task_by_whom_and_when():
    conversation = taken(
        message("user", "We agreed:\n- [DECISION] use Postgres 16\n- [ ] write the migration", T0),
        message(
            "assistant",
            "[SOLUTION] pin the driver\nTODO: tell Ada\n[TODO] rotate the keys\n"
            "```\n[GOTCHA] inside code: not a note\n```",
            T0 + 60_000,
        ),
        message("user", "- [x] write the migration\n[DECISION] use Postgres 16", T0 + 120_000),
    )

    assert [(m.role, m.marker, m.text, m.at) for m in conversation.marked.values()] == [
        ("user", "DECISION", "[DECISION] use Postgres 16", T0 / 1000),
        ("assistant", "SOLUTION", "[SOLUTION] pin the driver", T0 / 1000 + 60),
    ]
    assert [(t.role, t.text) for t in conversation.tasks.values()] == [
        ("assistant", "tell Ada"),
        ("assistant", "rotate the keys"),
    ]


def test_take_collects_paths_from_text_and_tool_arguments_the_last_mention_last():
    conversation = taken(
        message("user", "Look at src/app/main.py and ~/notes/plan.md, not https://x.io/a/b.py"),
        message(
            "assistant",
            [
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "README.md"}},
                {
                    "type": "toolCall",
                    "id": "2",
                    "name": "write",
                    "arguments": {"file_path": "/srv/app/config.toml", "content": "x = 1"},
                },
                {"type": "toolCall", "id": "3", "name": "exec", "arguments": {"command": "ls /"}},
            ],
        ),
        message("assistant", [{"type": "text", "text": "Updated src/app/main.py."}]),
    )

    assert list(conversation.paths) == [
        "~/notes/plan.md",
        "README.md",
        "/srv/app/config.toml",
        "src/app/main.py",
    ]
    assert conversation.paths["src/app/main.py"].role == "user"  # who mentioned it first
    assert conversation.tools == {"read": 1, "write": 1, "exec": 1}


def test_take_counts_tools_across_calls():
    calls = [
        {"type": "toolCall", "id": str(n), "name": name, "arguments": {}}
        for n, name in enumerate(["exec", "read", "exec", "edit", "exec", "read"])
    ]

    conversation = taken(message("assistant", calls))

    assert conversation.tools == {"exec": 3, "read": 2, "edit": 1}


def test_take_keeps_latest_compaction_summary_model_prompt_size_and_breaks():
    conversation = taken(
        line("compaction", summary="old summary", timestamp="2026-11-22T05:00:00Z"),
        line("model_change", provider="fake", modelId="first-model"),
        message(
            "assistant",
            [{"type": "text", "text": "A reply with usage."}],
            model="fake-model",
            usage={"input": 1200, "output": 30, "cacheRead": 800, "cacheWrite": 0},
        ),
        line("reset", reason="reset", timestamp="2026-11-22T05:20:00Z"),
        line("compaction", summary="## Decisions\nship it", timestamp="2026-11-22T05:30:00Z"),
    )

    compacted_at = datetime(2026, 11, 22, 5, 30, tzinfo=UTC).timestamp()
    assert conversation.compaction_summary == "## Decisions\nship it"
    assert conversation.model == "fake-model"
    # The reset after the call emptied the context; the compaction after it did not say what it
    # left, so the size is unknown since (as rotate's transcript_context reads it).
    assert conversation.context.compacted_at == compacted_at
    assert conversation.last_at == compacted_at
    assert (conversation.resets, conversation.compactions) == (1, 2)
    assert [kind for kind, _ in conversation.breaks] == ["compaction", "reset", "compaction"]


def test_take_after_a_compaction_that_says_what_it_left_takes_its_size():
    conversation = taken(
        message("assistant", [{"type": "text", "text": "A reply."}], usage={"input": 150_000}),
        line("compaction", summary="s", tokensAfter=9_000, timestamp="2026-11-22T05:30:00Z"),
    )

    context = conversation.context
    assert (context.tokens, context.after_compaction) == (9_000, True)
    assert context.at == datetime(2026, 11, 22, 5, 30, tzinfo=UTC).timestamp()


def test_take_after_a_reset_sizes_the_context_at_zero_not_the_prompt_before_it():
    call = message("assistant", [{"type": "text", "text": "A reply."}], usage={"input": 2_000})
    compacted = line("compaction", summary="s", timestamp="2026-11-22T05:30:00Z")
    conversation = taken(call, compacted)
    assert (conversation.context.tokens, conversation.context.measure) == (2_000, "prompt")
    assert conversation.context.compacted_at is not None  # the compaction did not say

    taken(line("reset", reason="reset", timestamp="2026-11-22T05:40:00Z"), into=conversation)

    context = conversation.context
    assert (context.tokens, context.measure, context.compacted_at) == (0, "reset", None)
    assert context.at == datetime(2026, 11, 22, 5, 40, tzinfo=UTC).timestamp()
    assert Conversation.from_json(conversation.to_json()).context == context


def test_a_file_era_reset_a_new_session_header_sizes_the_context_at_zero():
    header = {"type": "session", "version": 3, "id": "new", "timestamp": "2026-11-22T05:40:00Z"}

    conversation = taken(
        {**header, "id": "old", "timestamp": "2026-11-22T05:00:00Z"},
        message("user", "before the reset"),
        message("assistant", [{"type": "text", "text": "A reply."}], usage={"input": 5_555}),
        header,
    )

    assert (conversation.context.tokens, conversation.context.measure) == (0, "reset")


def test_take_after_a_time_passes_over_what_was_taken_in_before():
    conversation = taken(message("user", "first request here", T0))

    conversation.take(
        entries(message("user", "first request here", T0), message("user", "a new one", T0 + 1)),
        build_redactor().redact,
        600,
        after=conversation.last_at,
    )

    assert [m.text for m in conversation.messages] == ["first request here", "a new one"]


def test_take_keeps_the_latest_messages_within_their_bound_and_counts_the_others():
    text = "x" * 600
    lines = [message("user", f"{n} {text}", T0 + n) for n in range(KEPT_MESSAGE_CHARS // 500)]

    conversation = taken(*lines)

    kept = sum(len(m.text) for m in conversation.messages)
    assert kept <= KEPT_MESSAGE_CHARS
    assert conversation.dropped_messages == len(lines) - len(conversation.messages) > 0
    assert conversation.messages[-1].text.startswith(f"{len(lines) - 1} ")
    assert conversation.message_count == len(lines)


def test_conversation_comes_back_from_its_json_as_it_was():
    conversation = taken(
        message("user", "[FACT] the owner is Ada\n- [ ] ship it\nsee docs/a.md", T0),
        line("compaction", summary="s", tokensAfter=9_000, timestamp="2026-11-22T05:30:00Z"),
    )
    conversation.session_id, conversation.through = "abc", {"seq": 7}

    again = Conversation.from_json(conversation.to_json())

    assert again == conversation


@pytest.mark.parametrize("data", [None, {}, {"format": 99}, {"format": 1, "messages": "x"}, []])
def test_conversation_of_another_format_is_none(data):
    assert Conversation.from_json(data) is None


# --- redaction at extraction: every field masked, paths found in masked texts ----------------


@pytest.mark.parametrize(
    "text",
    [
        "curl -H 'Authorization: Bearer b3/Zk9vQ2xTm8.x9' https://api.example.com",
        "export API_TOKEN=at/q8Zr2Lm5.q1",
        "db password: pa/ss.W0rd-42",
        "set client_secret=cs/abc.def123456 in the vault",
        'the config says {"token": "jt/Q2w3E4r.z9"}',
    ],
)
def test_take_never_lists_a_masked_value_as_a_file(text):
    conversation = taken(message("user", text))

    assert conversation.paths == {}
    assert "[REDACTED:" in conversation.messages[0].text


def test_take_masks_paths_in_text_and_tool_arguments_keeping_the_masked_part():
    token = "ghp_" + "a1B2c3D4e5" * 4
    conversation = taken(
        message("user", f"I saved it in /srv/keys/{token}.txt yesterday"),
        message(
            "assistant",
            [
                {
                    "type": "toolCall",
                    "id": "1",
                    "name": "read",
                    "arguments": {"paths": [f"/srv/keys/{token}/id.txt", "notes/a.md"]},
                }
            ],
        ),
    )

    assert list(conversation.paths) == [
        "/srv/keys/[REDACTED:github-token].txt",
        "/srv/keys/[REDACTED:github-token]/id.txt",
        "notes/a.md",
    ]


def test_take_masks_compaction_summary_model_and_tool_names():
    token = "npm_" + "Q1w2E3r4T5" * 4
    conversation = taken(
        line(
            "compaction",
            summary=f"## Facts\npublish with {token}",
            timestamp="2026-11-22T05:00:00Z",
        ),
        message(
            "assistant",
            [{"type": "toolCall", "id": "1", "name": f"tool.{token}", "arguments": {}}],
            model=f"model/{token}",
        ),
    )

    assert conversation.compaction_summary == "## Facts\npublish with [REDACTED:npm-token]"
    assert conversation.model == "model/[REDACTED:npm-token]"
    assert conversation.tools == {"tool.[REDACTED:npm-token]": 1}


def test_take_cuts_a_message_only_after_its_secret_was_masked():
    secret = "sk-proj-Zq8xVb3nLm5kJh7gFd2sAp9oIu4yTr6eWq1zXc0vBn8mLk3j"
    redactor = build_redactor()
    conversation = Conversation()

    conversation.take(
        entries(message("user", "x" * 30 + f" {secret} and more text after")), redactor.redact, 45
    )

    assert conversation.messages[0].text == "x" * 30 + " [REDACTED:ope…"
    assert redactor.take_counts() == {"openai-key": 1}


def test_kept_messages_masks_with_the_redactor_given_and_keeps_text_without_one():
    secret = "hf_" + "abcdefghij" * 3 + "ABCD"
    window = entries(message("user", f"my token {secret} works"))

    assert [m.text for m in kept_messages(window, build_redactor().redact)] == [
        "my token [REDACTED:huggingface-token] works"
    ]
    assert [m.text for m in kept_messages(window)] == [f"my token {secret} works"]


def test_a_session_header_after_messages_is_a_reset_the_first_one_is_not():
    header = {"type": "session", "version": 3, "id": "new", "timestamp": "2026-11-22T05:40:00Z"}

    conversation = taken(
        {**header, "id": "old", "timestamp": "2026-11-22T05:00:00Z"},
        message("user", "before the reset"),
        header,
        message("user", "after the reset", T0 + 3_600_000),
    )

    assert conversation.resets == 1
    assert conversation.breaks == [("reset", datetime(2026, 11, 22, 5, 40, tzinfo=UTC).timestamp())]
