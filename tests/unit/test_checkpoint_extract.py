"""Extraction over typed entries: what a checkpoint keeps from a window, and what it leaves out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memwarden.checkpoint.extract import digest_window, find_paths, kept_messages, open_todos
from memwarden.checkpoint.options import Limits
from memwarden.checkpoint.redact import build_redactor
from memwarden.checkpoint.render import window_values
from memwarden.openclaw.entries import parse_entry

T0 = 1795325000000  # ms


def line(kind: str, **fields) -> dict:
    return {"type": kind, "id": fields.pop("id", "x"), "parentId": None, **fields}


def message(role: str, content, at: int = T0, **extra) -> dict:
    return line(
        "message",
        timestamp="2026-11-22T05:20:00.000Z",
        message={"role": role, "content": content, "timestamp": at, **extra},
    )


def entries(*lines):
    return [parse_entry(value) for value in lines]


def digested(window, **options):
    return digest_window(window, redact=build_redactor().redact, **options)


def test_digest_keeps_user_and_assistant_text_in_order_with_times():
    window = entries(
        message("user", "please deploy the blog", T0),
        message("assistant", [{"type": "text", "text": "Deployed it to staging."}], T0 + 1000),
    )

    digest = digested(window)

    assert [(m.role, m.text) for m in digest.messages] == [
        ("user", "please deploy the blog"),
        ("assistant", "Deployed it to staging."),
    ]
    assert digest.messages[1].time == datetime.fromtimestamp((T0 + 1000) / 1000, UTC)


def test_digest_leaves_out_thinking_tool_results_control_replies_short_texts_and_commands():
    window = entries(
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
    )

    digest = digested(window)

    assert [m.text for m in digest.messages] == ["Here is the summary you asked for."]
    assert kept_messages(window) == digest.messages


def test_digest_collects_paths_from_text_and_tool_arguments_most_recent_first():
    window = entries(
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

    digest = digested(window)

    assert digest.files == [
        "src/app/main.py",
        "/srv/app/config.toml",
        "README.md",
        "~/notes/plan.md",
    ]
    assert digest.tools == {"exec": 1, "read": 1, "write": 1}


def test_digest_files_are_capped_at_the_limit():
    text = " ".join(f"docs/page{number}.md" for number in range(30))

    digest = digested(entries(message("user", text)), max_files=20)

    assert len(digest.files) == 20
    assert digest.files[0] == "docs/page29.md"


def test_digest_counts_tools_by_use_most_used_first():
    calls = [
        {"type": "toolCall", "id": str(n), "name": name, "arguments": {}}
        for n, name in enumerate(["exec", "read", "exec", "edit", "exec", "read"])
    ]

    digest = digested(entries(message("assistant", calls)))

    assert list(digest.tools.items()) == [("exec", 3), ("read", 2), ("edit", 1)]


def test_digest_keeps_latest_compaction_summary_model_and_prompt_size():
    window = entries(
        line("compaction", summary="old summary", timestamp="2026-11-22T05:00:00Z"),
        line("model_change", provider="fake", modelId="first-model"),
        message(
            "assistant",
            [{"type": "text", "text": "A reply with usage."}],
            model="fake-model",
            usage={"input": 1200, "output": 30, "cacheRead": 800, "cacheWrite": 0},
        ),
        line("compaction", summary="## Decisions\nship it", timestamp="2026-11-22T05:30:00Z"),
    )

    digest = digested(window)

    assert digest.compaction_summary == "## Decisions\nship it"
    assert digest.model == "fake-model"
    assert digest.context_tokens == 2000  # the last compaction does not say what it left
    assert digest.compacted_since_at == datetime(2026, 11, 22, 5, 30, tzinfo=UTC)
    assert digest.last_entry_at == datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def test_digest_after_a_compaction_that_says_what_it_left_takes_its_size():
    window = entries(
        message("assistant", [{"type": "text", "text": "A reply."}], usage={"input": 150_000}),
        line("compaction", summary="s", tokensAfter=9_000, timestamp="2026-11-22T05:30:00Z"),
    )

    digest = digested(window)

    assert (digest.context_tokens, digest.context_after_compaction) == (9_000, True)
    assert digest.context_tokens_at == datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


def test_open_todos_keeps_open_items_and_drops_the_ticked_ones():
    texts = [
        "Plan:\n- [ ] export posts\n- [ ] renew TLS\n* [ ] tell Bob",
        "TODO: write the changelog",
        "Progress:\n- [x] export posts\n- [X] tell Bob",
    ]

    assert open_todos(texts) == ["renew TLS", "write the changelog"]


def test_open_todos_reopened_item_comes_last():
    texts = ["- [ ] a thing\n- [ ] other", "- [x] a thing", "- [ ] a thing again", "- [ ] a thing"]

    assert open_todos(texts) == ["other", "a thing again", "a thing"]


def test_find_paths_ignores_urls_dates_and_plain_words():
    text = (
        "See https://github.com/openclaw/openclaw/blob/main/src/x.ts, on 22/11/2026, "
        "and/or read ./scripts/run.sh or /etc/nginx/nginx.conf."
    )

    assert find_paths(text) == ["./scripts/run.sh", "/etc/nginx/nginx.conf"]


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
def test_digest_never_lists_a_masked_value_as_a_file(text):
    digest = digested(entries(message("user", text)))

    assert digest.files == []
    assert "[REDACTED:" in digest.messages[0].text


def test_digest_masks_paths_in_text_and_tool_arguments_keeping_the_masked_part():
    token = "ghp_" + "a1B2c3D4e5" * 4
    window = entries(
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

    digest = digested(window)

    assert digest.files == [
        "notes/a.md",
        "/srv/keys/[REDACTED:github-token]/id.txt",
        "/srv/keys/[REDACTED:github-token].txt",
    ]


def test_digest_masks_compaction_summary_model_and_tool_names():
    token = "npm_" + "Q1w2E3r4T5" * 4
    window = entries(
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

    digest = digested(window)

    assert digest.compaction_summary == "## Facts\npublish with [REDACTED:npm-token]"
    assert digest.model == "model/[REDACTED:npm-token]"
    assert digest.tools == {"tool.[REDACTED:npm-token]": 1}


def test_digest_then_values_cut_a_message_only_after_its_secret_was_masked():
    secret = "sk-proj-Zq8xVb3nLm5kJh7gFd2sAp9oIu4yTr6eWq1zXc0vBn8mLk3j"
    redactor = build_redactor()
    text = "x" * 30 + f" {secret} and more text after"
    digest = digest_window(entries(message("user", text)), redact=redactor.redact)

    values = window_values(digest, Limits(message_max_chars=45), UTC)

    assert values["requests"][0]["text"] == "x" * 30 + " [REDACTED:ope…"
    assert redactor.take_counts() == {"openai-key": 1}


def test_kept_messages_masks_with_the_redactor_given_and_keeps_text_without_one():
    secret = "hf_" + "abcdefghij" * 3 + "ABCD"
    window = entries(message("user", f"my token {secret} works"))

    assert [m.text for m in kept_messages(window, build_redactor().redact)] == [
        "my token [REDACTED:huggingface-token] works"
    ]
    assert [m.text for m in kept_messages(window)] == [f"my token {secret} works"]
