"""The `[maintain]` options: retention of transcripts, logs, state and handoffs."""

from memwarden.settings.option import Option

DESCRIPTION = "Daily retention: transcripts, logs, memwarden's state, gateway config backups."

OPTIONS = [
    Option(
        "maintain.compress_transcripts_after_days",
        "int",
        7,
        "File-era transcripts (old, reset and deleted copies) untouched for this many days, and "
        "no session's current transcript, are gzip-compressed in place.",
        minimum=1,
        maximum=3650,
    ),
    Option(
        "maintain.delete_compressed_after_days",
        "int",
        0,
        "Delete the transcripts memwarden compressed (`*.gz`) once they are this many days "
        "old. 0 (the default) never deletes them: the gateway's transcripts are the "
        "gateway's; set e.g. 90 to turn deletion on.",
        example=90,
        minimum=0,
        maximum=36500,
    ),
    Option(
        "maintain.log_max_kb",
        "int",
        5120,
        "A log of memwarden's own (in general.log_dir) larger than this is rotated "
        "(`x.log` → `x.log.1` → …).",
        minimum=1,
    ),
    Option(
        "maintain.log_keep",
        "int",
        5,
        "Rotated copies kept per log; older ones are deleted.",
        minimum=0,
        maximum=100,
    ),
    Option(
        "maintain.state_retention_days",
        "int",
        90,
        "Job runs and timeline events older than this many days are deleted from state.db, and "
        "the bootstrap hook's delivery receipts of conversations with no delivery since.",
        minimum=1,
        maximum=36500,
    ),
    Option(
        "maintain.vacuum_min_free_percent",
        "int",
        20,
        "state.db is compacted (VACUUM) when at least this share of it is free pages "
        "(and at least 1 MB).",
        minimum=1,
        maximum=100,
    ),
    Option(
        "maintain.config_backups_keep",
        "int",
        14,
        "Backups of the gateway config kept under <storage_dir>/config-backups (one is taken "
        "each time its content changed).",
        minimum=1,
        maximum=1000,
    ),
    Option(
        "maintain.config_shrink_ratio",
        "float",
        0.5,
        "Config drift guard: a gateway config smaller than this fraction of its previous backup "
        "raises a warning (event config.shrunk, surfaced by health).",
        minimum=0.01,
        maximum=0.99,
    ),
    Option(
        "maintain.archive_daily_logs_after_days",
        "int",
        0,
        "Move daily logs (memory/YYYY-MM-DD.md) older than this many days into "
        "memory/archive/YYYY-MM/. 0 turns archiving off.",
        minimum=0,
        maximum=36500,
    ),
    Option(
        "maintain.archive_handoffs_after_days",
        "int",
        30,
        "Move the handoff of a conversation idle for more than this many days (no update in "
        "the session store, and its file unchanged) from memory/sessions/ into "
        "memory/archive/sessions/, so the index and the hook's manifest list only live ones. "
        "The main session's memory/ACTIVE_CONTEXT.md is never moved. 0 turns archiving off.",
        minimum=0,
        maximum=36500,
    ),
]
