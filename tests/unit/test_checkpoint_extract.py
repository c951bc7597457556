"""Extraction over typed entries: what a checkpoint keeps from a window, and what it leaves out."""

from __future__ import annotations

from datetime import UTC, datetime

from memwarden.checkpoint.extract import digest_window, find_paths, kept_messages, open_todos
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


def test_digest_keeps_user_and_assistant_text_in_order_with_times():
    window = entries(
        message("user", "please deploy the blog", T0),
        message("assistant", [{"type": "text", "text": "Deployed it to staging."}], T0 + 1000),
    )

    digest = digest_window(window)

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

    digest = digest_window(window)

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

    digest = digest_window(window)

    assert digest.files == [
        "src/app/main.py",
        "/srv/app/config.toml",
        "README.md",
        "~/notes/plan.md",
    ]
    assert digest.tools == {"exec": 1, "read": 1, "write": 1}


def test_digest_files_are_capped_at_the_limit():
    text = " ".join(f"docs/page{number}.md" for number in range(30))

    digest = digest_window(entries(message("user", text)), max_files=20)

    assert len(digest.files) == 20
    assert digest.files[0] == "docs/page29.md"


def test_digest_counts_tools_by_use_most_used_first():
    calls = [
        {"type": "toolCall", "id": str(n), "name": name, "arguments": {}}
        for n, name in enumerate(["exec", "read", "exec", "edit", "exec", "read"])
    ]

    digest = digest_window(entries(message("assistant", calls)))

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

    digest = digest_window(window)

    assert digest.compaction_summary == "## Decisions\nship it"
    assert digest.model == "fake-model"
    assert digest.context_tokens == 2000
    assert digest.last_entry_at == datetime(2026, 11, 22, 5, 30, tzinfo=UTC)


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
