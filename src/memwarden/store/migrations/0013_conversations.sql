-- What each conversation has held since it began, as the checkpoint accumulates it from new
-- transcript lines (checkpoint.conversation): marked items, open tasks, file paths, its latest
-- messages, resets and compactions. Written in the same transaction as its read position.
-- Health reads the columns after it: the last reset or compaction and the first request after it
-- (its next bootstrap should have carried the handoff; the hook's receipts say whether it did).
CREATE TABLE conversations (
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  data_json TEXT NOT NULL,
  updated_at REAL NOT NULL,
  last_break_kind TEXT,
  last_break_at REAL,
  next_request_at REAL,
  PRIMARY KEY (agent_id, session_key)
);
