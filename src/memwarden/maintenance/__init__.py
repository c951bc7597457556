"""`memwarden maintain`'s steps, each a pure decision over plain facts (`facts`) and its careful
file operations: `transcript_step` (compress and delete old transcripts), `archive_step` (daily
logs), `handoff_step` (idle conversations' handoffs), `config_step` (backups of the gateway
config), `housekeeping` (memwarden's logs, state.db, history).
"""
