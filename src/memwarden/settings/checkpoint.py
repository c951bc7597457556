"""The `[checkpoint]` options: which conversations, what a handoff and a daily entry hold."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Layer 2: a handoff per conversation (ACTIVE_CONTEXT.md for the main session) and daily "
    "logs written from live transcripts, with no LLM. "
    "See docs/checkpoint.md for what is captured and why."
)

OPTIONS = [
    Option(
        "checkpoint.sessions",
        "choice",
        "all",
        "Which conversations of each agent to checkpoint; each is written to its own handoff "
        "(memory/ACTIVE_CONTEXT.md for the main session, memory/sessions/<conversation>.md for "
        "the others). `all`: the main session, active or not, and every other interactive "
        "session active within staleness_hours. `recent`: one conversation, the main session "
        "when it was active within staleness_hours, else the most recently updated interactive "
        "session. `main`: only agent:<id>:main. Never cron, sub-agents, heartbeats, hooks, boot.",
        choices=("main", "recent", "all"),
    ),
    Option(
        "checkpoint.staleness_hours",
        "float",
        4.0,
        "A session counts as active when its store says it was updated within this many hours.",
        minimum=0.01,
        maximum=24 * 365,
    ),
    Option(
        "checkpoint.exclude_sessions",
        "str_list",
        [],
        "Glob patterns of session keys never checkpointed, on top of the automation kinds "
        "(e.g. agent:*:reports).",
        example=["agent:*:reports"],
    ),
    Option(
        "checkpoint.min_transcript_bytes",
        "int",
        0,
        "Sessions whose transcript is smaller than this are skipped, and the run says so. 0: no "
        "size minimum (min_messages already skips empty sessions).",
        minimum=0,
    ),
    Option(
        "checkpoint.min_messages",
        "int",
        1,
        "Conversations with fewer user and assistant messages than this (since memwarden began "
        "reading them, across resets) are skipped. The default writes a handoff from the first "
        "request on and skips only empty ones.",
        minimum=0,
    ),
    Option(
        "checkpoint.handoff_max_chars",
        "int",
        0,
        "The most characters a handoff may have. 0: what the gateway's bootstrap caps leave it "
        "(bootstrapMaxChars, and bootstrapTotalMaxChars less the gateway's own bootstrap files), "
        "read at each run; a number lowers that, never raises it. Every marked item, open task "
        "and file path comes first, then as many recent messages as fit (the others are named "
        "as left out, with the daily logs that hold them).",
        minimum=0,
        maximum=1_000_000,
    ),
    Option(
        "checkpoint.message_max_chars",
        "int",
        600,
        "Each message is cut to this many characters in a handoff (marked items and tasks to 300).",
        minimum=40,
        maximum=20000,
    ),
    Option(
        "checkpoint.summary_max_chars",
        "int",
        3000,
        "The last compaction summary is cut to this many characters.",
        minimum=100,
        maximum=50000,
    ),
    Option(
        "checkpoint.daily_log",
        "bool",
        True,
        "Append one entry per run that saw new messages to memory/YYYY-MM-DD.md (the date in "
        "general.timezone).",
    ),
    Option(
        "checkpoint.daily_log_max_chars",
        "int",
        300,
        "The last request and last output of a daily-log entry are cut to this many characters.",
        minimum=20,
        maximum=5000,
    ),
    Option(
        "checkpoint.redact",
        "bool",
        True,
        "Mask secrets (API keys, tokens, passwords, private keys, credentials in URLs) with "
        "[REDACTED:<type>] before anything is written. Turning this off is rarely wise.",
    ),
    Option(
        "checkpoint.redact_patterns",
        "table_list",
        [],
        "Extra secret patterns: tables {name, pattern} (Python regular expressions). A match is "
        "replaced by [REDACTED:<name>]; with a group named `secret`, only that group is. Each "
        "pattern may spend 1 s of CPU on one text: one that runs longer fails that session, "
        "named in the error, and nothing is written.",
        fields=("name", "pattern"),
        pattern_list=True,
        example=[{"name": "internal-token", "pattern": "itk_[A-Za-z0-9]{24,}"}],
    ),
    Option(
        "checkpoint.workers",
        "int",
        0,
        "How many processes checkpoint agents side by side, on Linux (elsewhere one): 0 is one "
        "per CPU the run may use (its CPU affinity and cgroup CPU quota), at most 4. A process "
        "takes 8 changed agents or more, so a run with few changes stays in one; 1 keeps every "
        "run in one process.",
        minimum=0,
        maximum=64,
    ),
    Option(
        "checkpoint.active_context_template",
        "path",
        "",
        "Your own jinja2 template for the handoffs (ACTIVE_CONTEXT.md and memory/sessions/*.md). "
        "Empty: the bundled one (templates/checkpoint/active_context.md.j2 shows every "
        "variable). Keep the `session:` line of its provenance block: the bootstrap hook injects "
        "a handoff only into that session, and into none without it. Rendered in jinja2's sandbox.",
        existing_file=True,
    ),
    Option(
        "checkpoint.daily_entry_template",
        "path",
        "",
        "Your own jinja2 template for one daily-log entry. Empty: the bundled one. Rendered in "
        "jinja2's sandbox.",
        existing_file=True,
    ),
]
