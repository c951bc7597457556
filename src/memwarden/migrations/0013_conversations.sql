-- What each conversation has held since it began, as the checkpoint accumulates it from new
-- transcript lines (checkpoint.conversation): marked items, open tasks, file paths, its latest
-- messages, resets and compactions. Written in the same transaction as its read position.
CREATE TABLE conversations (
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  data_json TEXT NOT NULL,
  updated_at REAL NOT NULL,
  PRIMARY KEY (agent_id, session_key)
);
