-- Rotation lineage: every reset memwarden attempted, what the session was before and after.
CREATE TABLE rotations (
  id INTEGER PRIMARY KEY,
  ts REAL NOT NULL,
  run_id INTEGER,
  agent_id TEXT,
  session_key TEXT NOT NULL,
  old_session_id TEXT,
  new_session_id TEXT,
  old_revision TEXT,
  new_revision TEXT,
  tokens INTEGER,
  token_source TEXT,
  context_tokens INTEGER,
  token_limit INTEGER,
  why TEXT NOT NULL,
  reset_reason TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('rotated', 'failed')),
  error TEXT,
  checkpoint_json TEXT
);
CREATE INDEX rotations_key_ts ON rotations (session_key, ts);
CREATE INDEX rotations_outcome_ts ON rotations (outcome, ts);
