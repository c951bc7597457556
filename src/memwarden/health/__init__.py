"""Health checks, the alert policy and the metrics textfile (the `health` job's logic).

`checks/` measures (each check a small function returning `CheckResult`s), `policy` decides which
news to send (pure), `message` renders it, `store` keeps alert state and the outbox of pending
sends in the state DB and delivers it (and Alertmanager's feed, which `feed` decides), `metrics`
renders the Prometheus textfile; `run` is a health run, from the checks to the alerts and the
textfile.
"""
