"""The `[health]` options: the checks' thresholds, Slack alert policy and metrics."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Health checks of the gateway, the host and memwarden's own jobs: thresholds, timeouts and "
    "the Prometheus textfile. See docs/health.md for what to do when a check fires."
)

OPTIONS = [
    Option(
        "health.probe_timeout_seconds",
        "float",
        3.0,
        "Longest each gateway probe (GET /healthz, GET /readyz, the health RPC) may take, whole "
        "answer included, however slowly it arrives. A gateway that does not answer in time "
        "counts as down.",
        minimum=0.1,
        maximum=60,
    ),
    Option(
        "health.gateway_http_url",
        "str",
        "",
        "Base HTTP URL of the gateway for /healthz and /readyz. Empty: from gateway.url "
        "(ws → http), else http://127.0.0.1:<gateway port>.",
        example="http://127.0.0.1:18789",
        url_schemes=("http", "https"),
    ),
    Option(
        "health.rpc_check",
        "bool",
        False,
        "Also call the gateway's `health` RPC over WebSocket (needs the gateway token).",
    ),
    Option(
        "health.process_check",
        "bool",
        True,
        "Look for the gateway process by its command line (skipped for a gateway URL that is not "
        "on this machine).",
    ),
    Option(
        "health.process_names",
        "str_list",
        ["openclaw", "clawdbot"],
        "Program names of the gateway; a process matches when its command runs one of them with "
        "`gateway`, or is titled `<name>-gateway` (as the gateway titles itself).",
    ),
    Option(
        "health.disk_warning_percent",
        "float",
        85.0,
        "Disk usage (%) of a filesystem holding the state dir or a workspace that warns.",
        minimum=1,
        maximum=100,
    ),
    Option(
        "health.disk_critical_percent",
        "float",
        95.0,
        "Disk usage (%) that is critical.",
        minimum=1,
        maximum=100,
    ),
    Option(
        "health.transcript_warning_mb",
        "int",
        500,
        "Total size (MB) of the agents' session folders and SQLite databases that warns.",
        minimum=1,
    ),
    Option(
        "health.memory_file_warning_kb",
        "int",
        50,
        "Size (KB) above which a memory file (memory/**, MEMORY.md; archive/ excluded) is "
        "oversized: the bootstrap cuts it and the agent loses its middle.",
        minimum=1,
    ),
    Option(
        "health.memory_file_list",
        "int",
        5,
        "How many of the largest oversized memory files an alert names.",
        minimum=1,
        maximum=50,
    ),
    Option(
        "health.rewrite_window_hours",
        "int",
        24,
        "How long a destructive rewrite of a root memory file (history.guard_drop_share) stays a "
        "warning, unless the file is rewound to before it.",
        minimum=1,
        maximum=8760,
    ),
    Option(
        "health.bootstrap_forecast_days",
        "int",
        14,
        "Warn this many days before a bootstrap file (AGENTS.md, MEMORY.md, …) or the whole set "
        "passes the gateway's cap (bootstrapMaxChars, bootstrapTotalMaxChars) at its growth "
        "rate; one cut already is a warning too.",
        minimum=1,
        maximum=365,
    ),
    Option(
        "health.bootstrap_growth_days",
        "int",
        7,
        "The growth rate of a bootstrap file is its net change over this many days of memory "
        "history (history.retention_days keeps at most that many).",
        minimum=1,
        maximum=365,
    ),
    Option(
        "health.compaction_window_hours",
        "int",
        24,
        "How long a lossy compaction (one whose summary and kept messages lost marked items, "
        "open TODOs or file paths; see docs/compactions.md) stays a warning, from the time of "
        "the compaction.",
        minimum=1,
        maximum=8760,
    ),
    Option(
        "health.cron_error_threshold",
        "int",
        3,
        "Number of gateway cron runs ending in error (in <state>/cron/runs/*.jsonl) within "
        "health.cron_window_minutes that raises a warning.",
        minimum=1,
    ),
    Option(
        "health.cron_window_minutes",
        "int",
        60,
        "Window (minutes) in which gateway cron errors are counted.",
        minimum=1,
        maximum=7 * 24 * 60,
    ),
    Option(
        "health.watched_jobs",
        "str_list",
        ["checkpoint", "rotate", "index"],
        "memwarden jobs whose last success is watched (a dead-man's switch against their "
        "schedule.<job>_minutes).",
    ),
    Option(
        "health.stale_warning_multiple",
        "float",
        3.0,
        "A watched job whose last success is older than this many of its intervals raises a "
        "warning.",
        minimum=1,
    ),
    Option(
        "health.stale_critical_multiple",
        "float",
        6.0,
        "A watched job whose last success is older than this many of its intervals is critical.",
        minimum=1,
    ),
    Option(
        "health.rotation_failure_threshold",
        "int",
        3,
        "Rotation keeps failing: this many consecutive failed rotate runs, or failed rotations of "
        "one session within health.rotation_failure_window_minutes.",
        minimum=1,
    ),
    Option(
        "health.rotation_failure_window_minutes",
        "int",
        180,
        "Window (minutes) in which failed rotations of one session are counted.",
        minimum=1,
        maximum=7 * 24 * 60,
    ),
    Option(
        "health.context_high_water",
        "float",
        0.9,
        "Context pressure: a conversation whose last context size passed this fraction of its "
        "model's window has not been rotated in time.",
        minimum=0.1,
        maximum=1.0,
    ),
    Option(
        "health.config_drift_hours",
        "int",
        24,
        "Hours the config.drift warning stays up after memwarden maintain saw the gateway "
        "config shrink by more than half.",
        minimum=1,
        maximum=24 * 30,
    ),
    Option(
        "health.disabled_checks",
        "str_list",
        [],
        "Check keys (or key prefixes ending in `*`, e.g. `disk:*`) not to run or report; one "
        "that names no check is refused.",
        example=["gateway.process"],
    ),
    Option(
        "health.gateway_name",
        "str",
        "",
        "How metrics and Alertmanager alerts name this gateway: the `gateway` label of every "
        "metric and alert, and the `instance` label of alerts. It must differ between the "
        "gateways of a fleet. Empty: <host name>:<gateway port> (the gateway's own host when "
        "it is not on this machine).",
        example="prod-eu-1",
    ),
    Option(
        "health.metrics_file",
        "path",
        "",
        "Prometheus textfile written after each run (for node_exporter's textfile collector, "
        "e.g. /var/lib/node_exporter/textfile/memwarden.prom). Empty: none.",
    ),
    Option(
        "health.metrics_file_mode",
        "choice",
        "0600",
        "Mode of the metrics file: 0644 when node_exporter runs as another user (the file names "
        "agents and session keys).",
        choices=("0600", "0640", "0644"),
    ),
]
