"""The checkpoint job's parts; `memwarden.jobs.checkpoint` is its command and its API.

Pure (plain data in, plain data out): `select` (which sessions), `handoff_files` (where each
conversation's handoff lives, and which conversation a file holds; also read by indexing and
maintenance), `extract` (typed entries → a window digest), `redact` (secrets → typed
placeholders), `handoff` (the window before a reset), `daily_log` (new messages → entries by
local date), `render` (digests → template values; unchanged detection), `unchanged` (the
per-agent record behind the fast skip), `limits`, `outcome`, `report`.

Acting: `run_state` (what a run shares), `agents` (one agent: skip, or choose and checkpoint
its sessions), `session` (one session: skip when nothing is new), `pipeline` (gather, render,
write), `gather` and `reader` (transcript tails and deltas), `writer` (atomic files in the
workspace), `positions` (the state DB), `snapshots` (memory history after a write).
"""
