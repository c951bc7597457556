"""The checkpoint job's parts; `memwarden.jobs.checkpoint` is its command and its API.

In the order one session's data flows (no import circles: tests/unit/test_import_graph.py):

- What a run shares: `options` (the `checkpoint.*` options, typed), `records` (the state DB's
  rows as plain data), `outcome` (what a run reports per session), `run_state` (built once).
- Which sessions: `unchanged` (the per-agent record behind the fast skip), `select` (which
  sessions of an agent), `handoff_files` (where each conversation's handoff lives, and which
  conversation a file holds; also read by indexing, doctor and maintenance), `agents` (one
  agent: skip, or choose and checkpoint its sessions), `session` (one session: skip when
  nothing is new, else the pipeline).
- Read: `reader` (transcript tails and what is new since the stored position), `gather` (all a
  session needs: its tail, its delta, and the window before a reset).
- Digest (pure): `timed_pattern` and `secret_rules` (secret patterns), `redact` (secrets → typed
  placeholders), `extract` (typed entries → a window digest), `handoff` (the window before a
  reset), `daily_log` (new messages → entries by local date).
- Render (pure): `render` (digests → template values and text; unchanged detection).
- Commit: `pipeline` (gather, render, write one session; its position update), `writer` (atomic
  files in the workspace), `positions` (the state DB: loaded once, saved in one transaction).
- After the run: `report` (summary and lines), `snapshots` (memory history after a write),
  `rewound` (what a history rewind makes the next run write again).
"""
