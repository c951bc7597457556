"""The `[install]` options: which jobs the timers run, and the memwarden they start."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "How `memwarden install` schedules the jobs (systemd user timers, launchd agents or a "
    "crontab block) and what `memwarden doctor` expects of them. Intervals are in [schedule]."
)

SCHEDULABLE_JOBS = ("checkpoint", "rotate", "index", "health", "maintain")

OPTIONS = [
    Option(
        "install.jobs",
        "str_list",
        list(SCHEDULABLE_JOBS),
        "Jobs `memwarden install` schedules, each on its own timer.",
        choices=SCHEDULABLE_JOBS,
        non_empty=True,
    ),
    Option(
        "install.executable",
        "path",
        "",
        "Absolute path of the memwarden executable the timers and the session-summary hook run "
        "(a symlink is kept as given). Empty: the one running `memwarden install` (its console "
        "script, else the one beside its Python, else the one on PATH).",
        example="/home/alice/.local/bin/memwarden",
    ),
    Option(
        "install.systemd_unit_dir",
        "path",
        "",
        "Folder of the systemd user units. Empty: $XDG_CONFIG_HOME/systemd/user "
        "(~/.config/systemd/user).",
    ),
    Option(
        "install.launchd_agents_dir",
        "path",
        "",
        "Folder of the launchd agents. Empty: ~/Library/LaunchAgents.",
    ),
    Option(
        "install.launchd_label",
        "str",
        "org.memwarden",
        "Label prefix of the launchd agents: one agent `<label>.<job>` per job.",
    ),
]
