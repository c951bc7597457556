"""The `[history]` options: the memory history, its retention and the root-file guard."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Snapshots of each agent's workspace memory (memory/ and the root memory and bootstrap files), "
    "for history, rewind and the guard against destructive rewrites."
)

ROOT_FILES = [
    "MEMORY.md",
    "USER.md",
    "DREAMS.md",
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "HEARTBEAT.md",
]

OPTIONS: list[Option] = [
    Option(
        "history.enabled",
        "bool",
        True,
        "Snapshot each workspace's memory when checkpoint, rotate, index and health run over it. "
        "false turns those automatic snapshots off (and with them the destructive-rewrite "
        "guard); `memwarden history snapshot` and the snapshot taken before a rewind still work.",
    ),
    Option(
        "history.root_files",
        "str_list",
        ROOT_FILES,
        "Files at the top of each workspace that history keeps and guards, besides memory/ "
        "(plain file names; symlinks are never followed).",
        name_list=True,
    ),
    Option(
        "history.guard_drop_share",
        "float",
        0.5,
        "A root file losing more than this share of its entries, or of its sections, between two "
        "snapshots is a destructive rewrite (health warns, naming the snapshot to go back to).",
        minimum=0.01,
        maximum=1,
    ),
    Option(
        "history.guard_min_entries",
        "int",
        10,
        "A root file is judged on its entries only when it had at least this many (sections: "
        "at least 3); raw `Candidate:` lines added are a destructive rewrite at any size.",
        minimum=1,
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
