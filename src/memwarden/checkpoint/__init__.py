"""The checkpoint job's parts; `memwarden.jobs.checkpoint` is its command and its API.

In the order one session's data flows (no import circles: tests/unit/test_import_graph.py):

- What a run shares: `options` (the `checkpoint.*` options, typed), `records` (the state DB's
  rows as plain data), `outcome` (what a run reports per session), `run_state` (built once).
- Which sessions: `unchanged` (the per-agent record behind the fast skip), `select` (which
  sessions of an agent), `agents` (one agent: skip, or choose and checkpoint its sessions),
  `session` (one session: skip when nothing is new, else the pipeline). Where each handoff
  lives is `memwarden.handoff_files`, which indexing, doctor and maintenance read too.
- Read: `reader` (the lines after the stored position, or a transcript's recent lines the first
  time; what the daily log has not logged), `gather` (a session's new lines, and the rest of
  its earlier id's transcript after a file-era reset, into its conversation).
- Digest (pure): `timed_pattern` and `secret_rules` (secret patterns), `redact` (secrets → typed
  placeholders), `extract` (which messages are kept), `conversation` (what a conversation held
  since it began, accumulated from new entries), `daily_log` (new messages → entries by local
  date).
- Render (pure): `render` (values and text of the files; unchanged detection), `handoff` (a
  conversation's handoff fitted into its budget), `bundled` (the bundled templates as Python).
- Stage: `pipeline` (gather, render and stage one session's files; its position update),
  `writer` (where files go in the workspace), `staging` (an agent's writes as temp files).
- Commit: `positions` (the state DB: loaded once), `journal` (the renames recorded with the
  positions, finished by the next run after a kill), `commit` (the whole batch: one
  transaction, renames), `durable_run` (a run's first and last steps: finish what a killed run
  left, clear its own journal).
- After the run: `report` (summary and lines), `snapshots` (memory history after a write),
  `rewound` (what a history rewind makes the next run write again).
"""
