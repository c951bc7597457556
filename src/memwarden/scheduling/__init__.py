"""Scheduling memwarden's jobs: pure rendering of timers, plus the manifest of what was installed.

`jobs` turns the [schedule] and [install] settings into the jobs to schedule; `units` renders
systemd units, launchd agents, the crontab block and the runner script from the templates in
`memwarden/templates/units/`, escaping values for unit files, shells and crontabs; `cron`
finds and replaces memwarden's block in a crontab; `plan` decides which files to write and which
commands to run; `manifest` records what an install did so uninstall removes exactly that;
`host` detects the scheduler and resolves the memwarden executable. `act` is the thin part that
writes and removes files and runs the scheduler's commands. `completion` generates the shell
completion scripts and installs them.
"""
