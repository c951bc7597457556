from memwarden.settings.option import Option

SECTION = "history"
DESCRIPTION = "Snapshots of each agent's memory/ folder, for history and rewind."

OPTIONS: list[Option] = [
    Option(
        "history.enabled",
        "bool",
        True,
        "Snapshot memory/ when checkpoint and rotate run. false turns those automatic snapshots "
        "off; `memwarden history snapshot` and the snapshot taken before a rewind still work.",
    ),
    Option(
        "history.retention_days",
        "int",
        30,
        "Snapshots older than this many days are pruned by `memwarden maintain` (the newest "
        "snapshot of each agent is always kept).",
        minimum=1,
        maximum=36500,
    ),
    Option(
        "history.max_snapshots",
        "int",
        500,
        "At most this many snapshots are kept per agent; `memwarden maintain` prunes the oldest.",
        minimum=1,
        maximum=100000,
    ),
    Option(
        "history.lock_wait_seconds",
        "int",
        5,
        "How long a snapshot or rewind waits for another run changing the same agent's memory "
        "(a checkpoint, a rewind) before giving up with exit 75.",
        minimum=0,
        maximum=600,
    ),
    Option(
        "history.git",
        "str",
        "git",
        "The git executable that stores snapshots (a name looked up on PATH, or a full path).",
    ),
]
