"""The `[general]` options: memwarden's storage and secrets file, and the daily logs' time zone."""

from memwarden.settings.option import Option

DESCRIPTION = "Where memwarden keeps its own state, logs and secrets; time zone of the daily logs."

OPTIONS = [
    Option(
        "general.storage_dir",
        "path",
        "",
        "memwarden's storage root (state.db, locks, logs, memory history). Empty: "
        "$STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/memwarden "
        "(~/.local/state/memwarden). Each gateway has its own state: the first one memwarden "
        "writes for uses the root itself, any other gateways/<name>-<hash>/ inside it.",
    ),
    Option(
        "general.log_dir",
        "path",
        "",
        "Folder for the logs of scheduled runs (launchd writes there). Empty: <storage_dir>/logs.",
    ),
    Option(
        "general.secrets_file",
        "path",
        "",
        "Env file (KEY=VALUE, mode 0600) holding secrets such as MEMWARDEN_SLACK_BOT_TOKEN. "
        "Empty: $XDG_CONFIG_HOME/memwarden/secrets.env when it exists.",
    ),
    Option(
        "general.timezone",
        "str",
        "",
        "IANA time zone for daily log dates (e.g. Europe/Paris). Empty: the machine's local zone.",
    ),
]
