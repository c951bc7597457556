"""The checkpoint job's parts, in the order one session's data flows; `memwarden.jobs.checkpoint`
is the command, `run.job` the run (no import circles: tests/unit/test_import_graph.py).

- What a run shares: `records` (the state DB's rows as plain data), `outcome` (what a run
  reports per session, and its summary and lines), `run_state` (built once, with the
  `checkpoint.*` options).
- `read/`: `unchanged` (the per-agent record behind the fast skip), `select` (which sessions of
  an agent), `reader` (the lines after the stored position, or a transcript's recent lines the
  first time; what the daily log has not logged), `gather` (a session's new lines, and the rest
  of its earlier id's transcript after a file-era reset, into its conversation).
- `digest/` (pure): `secret_rules` (secret patterns, operators' with a time limit), `redact`
  (secrets → typed placeholders), `extract` (which messages are kept), `conversation` (what a
  conversation held since it began, accumulated from new entries), `daily_log` (new messages →
  entries by local date).
- `render/` (pure): `values` (values and text of the files; unchanged detection), `handoff` (a
  conversation's handoff fitted into its budget), `bundled` (the bundled templates as Python).
- `commit/`: `staging` (where files go in the workspace; an agent's writes as temp files),
  `positions` (the state DB: loaded once; what a history rewind makes the next run write
  again), `journal` (the renames recorded with the positions,
  finished by the next run after a kill), `durable_run` (a run's first and last steps: finish
  what a killed run left, commit each batch in one transaction, then rename; clear its own
  journal).
- `run/`: `session` (one session: skip when nothing is new, else the `pipeline`: gather, render,
  stage; its position update), `agents` (one agent: skip, or choose and checkpoint its
  sessions), `fanout` (agents in worker processes), `job` (a run over the agents, or one given
  session; committed as results arrive, then the memory history snapshot). Where each handoff
  lives is `memwarden.agent_memory.handoff_files`, which indexing, doctor and maintenance read
  too.
"""
