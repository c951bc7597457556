"""`memwarden doctor`'s checks: each returns Findings, pure over facts gathered once.

`finding` is the result type; `gateway_config` judges the gateway's settings (compaction, memory
flush, hook selection); `bootstrap` the size of what the hook injects; `timers` the installed
schedule and the jobs' last successes; `permissions` the modes of private files and folders;
`gather` reads the machine and runs them all.
"""
