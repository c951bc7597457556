"""The `[rotate]` options: when a conversation is reset, and which never are."""

from memwarden.settings.option import Option

DESCRIPTION = "Layer 1: reset sessions through the gateway before compaction fires."

OPTIONS: list[Option] = [
    Option(
        "rotate.threshold_tokens",
        "int",
        150_000,
        "Rotate a session whose context holds at least this many tokens (the gateway's "
        "totalTokens: the prompt size of its last model call). `--threshold` overrides it.",
        minimum=1_000,
        maximum=10_000_000,
    ),
    Option(
        "rotate.context_ratio",
        "float",
        0.75,
        "Also rotate when the context reaches this fraction of the session's own context window "
        "(contextTokens), whichever limit comes first; 1.0 only rotates at a full window. "
        "`--ratio` overrides it.",
        minimum=0.05,
        maximum=1.0,
    ),
    Option(
        "rotate.max_per_run",
        "int",
        5,
        "At most this many sessions are reset in one run; the rest wait for the next run, "
        "fullest first. `--max` overrides it.",
        minimum=1,
        maximum=1_000,
    ),
    Option(
        "rotate.quiet_seconds",
        "int",
        120,
        "A session updated within this many seconds may be mid-turn and is left alone "
        "(as is one whose status is running or that has an active run).",
        minimum=0,
        maximum=86_400,
    ),
    Option(
        "rotate.reset_reason",
        "choice",
        "reset",
        'The `reason` sent with sessions.reset: "reset", or "new" so the gateway\'s own /new '
        "hooks (command:new) fire.",
        choices=("reset", "new"),
    ),
    Option(
        "rotate.automation_patterns",
        "str_list",
        [],
        'Extra session keys never rotated, as case-insensitive globs (e.g. "agent:*:reports"). '
        "Cron, sub-agent, ACP, boot, hook, node and heartbeat sessions are never rotated anyway.",
        example=["agent:*:reports", "agent:ops:*"],
    ),
    Option(
        "rotate.reset_timeout_seconds",
        "float",
        60.0,
        "How long one sessions.reset may take (the gateway runs its reset hooks before it "
        "answers); other gateway calls use gateway.timeout_seconds.",
        minimum=1,
        maximum=600,
    ),
]
