-- The compaction watch's ledger: each compaction of a conversation, recorded once, with what it
-- dropped. `entry_id` is the compaction line's id in its transcript; `lost_json` the lost items
-- (redacted, [{kind, text, marker?}]); `kept_file` the daily log (relative to the workspace)
-- holding them and `kept` 1 once they are there. `severity` is ok, warning (lost items) or
-- critical (an empty or near-empty summary of a large span).
CREATE TABLE compactions (
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  compacted_at REAL,
  recorded_at REAL NOT NULL,
  run_id INTEGER,
  tokens_before INTEGER,
  tokens_after INTEGER,
  summary_chars INTEGER NOT NULL,
  span_messages INTEGER NOT NULL,
  items INTEGER NOT NULL,
  lost INTEGER NOT NULL,
  lost_json TEXT NOT NULL,
  severity TEXT NOT NULL CHECK (severity IN ('ok', 'warning', 'critical')),
  kept_file TEXT,
  kept INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, session_id, entry_id)
);
CREATE INDEX compactions_time ON compactions (coalesce(compacted_at, recorded_at));
