"""The `[index]` options: INDEX.md, the bootstrap hook's injection and session summaries."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Layer 3: memory/INDEX.md catalogs, what the bootstrap hook injects, and the session "
    "summaries the session-summary hook asks for."
)

DEFAULT_CATEGORIES = [
    {"glob": "MEMORY.md", "name": "Core state", "description": "what the agent keeps for good"},
    {
        "glob": "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*.md",
        "name": "Daily logs",
        "description": "one file a day",
    },
    {
        "glob": "*plan*",
        "name": "Plans and procedures",
        "description": "how to do things and what is planned",
    },
    {"glob": "*procedure*", "name": "Plans and procedures"},
    {"glob": "*runbook*", "name": "Plans and procedures"},
    {"glob": "*playbook*", "name": "Plans and procedures"},
    {"glob": "*howto*", "name": "Plans and procedures"},
    {"glob": "*research*", "name": "Research", "description": "findings, sources, comparisons"},
    {"glob": "*config*", "name": "Config", "description": "settings, hosts, accounts, tools"},
    {"glob": "*setting*", "name": "Config"},
]

OPTIONS = [
    Option(
        "index.after_checkpoint",
        "bool",
        True,
        "Rebuild INDEX.md of the agents a checkpoint run wrote to, at the end of that run, and "
        "after rotate's checkpoint of a session, besides the index job's own schedule. The "
        "bootstrap manifest (which handoff goes to which session) is refreshed then either way; "
        "off, INDEX.md catches up at the index job's next run.",
    ),
    Option(
        "index.threshold_kb",
        "int",
        50,
        "Write memory/INDEX.md (and let the hook inject it) only when the memory pool "
        "(memory/**/*.md without archive/, INDEX.md and the conversations' own files) holds at "
        "least this many KB. `memwarden index --force` ignores it. The handoffs are injected "
        "at any size, each into its own conversation's session.",
        minimum=0,
        maximum=10_000_000,
    ),
    Option(
        "index.categories",
        "table_list",
        DEFAULT_CATEGORIES,
        "Ordered rules that sort memory files into the index's tables: the first rule whose "
        "`glob` matches wins (a glob without `/` matches the file name or the name of a folder "
        "on its path, one with `/` the path relative to memory/; case-insensitive). Rules with "
        "the same `name` make one table; the first `description` given is its subtitle. Files "
        "no rule matches go to `Other`. A conversation's own files (its handoff, "
        "ACTIVE_CONTEXT.md or sessions/…, and its session summaries) are never listed: INDEX.md "
        "goes to every session.",
        fields=("glob", "name"),
        optional_fields=("description",),
    ),
    Option(
        "index.max_chars",
        "int",
        0,
        "Largest INDEX.md in characters. 0: the gateway's per-file bootstrap cap for the "
        "agent (`bootstrapMaxChars`, default 20000); a smaller value lowers it, never raises it.",
        minimum=0,
        maximum=10_000_000,
    ),
    Option(
        "index.inject_active_context",
        "bool",
        True,
        "The bootstrap hook injects each conversation's handoff (memory/ACTIVE_CONTEXT.md for "
        "the main session, memory/sessions/<conversation>.md for the others) into that "
        "conversation's session only: one peer's conversation never reaches another's session.",
    ),
    Option(
        "index.inject_in_group_chats",
        "bool",
        False,
        "The bootstrap hook also injects into group and channel sessions, INDEX.md and the "
        "group's own handoff (off: the gateway itself keeps MEMORY.md out of them, and so does "
        "memwarden).",
    ),
    Option(
        "index.template",
        "path",
        "",
        "Your own jinja2 template for INDEX.md. Empty: the built-in templates/index/INDEX.md.j2. "
        "Rendered in jinja2's sandbox.",
        existing_file=True,
    ),
    Option(
        "index.summary_template",
        "path",
        "",
        "Your own jinja2 template for session summaries. Empty: the built-in "
        "templates/summary/session_summary.md.j2. Rendered in jinja2's sandbox.",
        existing_file=True,
    ),
    Option(
        "index.summary_excerpt_messages",
        "int",
        8,
        "Messages quoted in a session summary's excerpt: the first two of the window and "
        "the last ones.",
        minimum=2,
        maximum=200,
    ),
    Option(
        "index.summary_wait_seconds",
        "float",
        15.0,
        "How long `memwarden summarize` waits for the gateway to finish the reset it was "
        "started for (the hook fires just before it) before it summarises the open window.",
        minimum=0,
        maximum=600,
    ),
]
