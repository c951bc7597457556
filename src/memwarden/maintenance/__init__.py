"""`memwarden maintain`'s decisions, pure over plain facts, and its few careful file operations.

`retention` picks the file-era transcripts to compress and the compressed ones to delete;
`logs` the rotation of memwarden's own logs; `config_backup` when to back up the gateway config
and when it shrank; `daily_logs` which daily logs to archive; `state_prune` prunes state.db;
`compress` gzips a transcript without ever leaving a half-written file.
"""
