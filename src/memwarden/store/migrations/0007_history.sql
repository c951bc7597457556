-- Memory history: one row per snapshot of an agent's memory/ folder (the files are in git).
CREATE TABLE history_snapshots (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  created_at REAL NOT NULL,
  trigger_kind TEXT NOT NULL,
  session_key TEXT,
  session_id TEXT,
  commit_sha TEXT NOT NULL,
  file_count INTEGER NOT NULL,
  total_bytes INTEGER NOT NULL,
  changes_json TEXT,
  run_id INTEGER
);
CREATE INDEX history_snapshots_agent_created ON history_snapshots (agent_id, created_at);
