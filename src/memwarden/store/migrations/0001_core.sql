-- Job runs, typed events, and per-session read positions.
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  job TEXT NOT NULL,
  started_at REAL NOT NULL,
  finished_at REAL,
  exit_code INTEGER,
  dry_run INTEGER NOT NULL DEFAULT 0,
  pid INTEGER,
  summary_json TEXT
);
CREATE INDEX runs_job_started ON runs (job, started_at);

CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  ts REAL NOT NULL,
  type TEXT NOT NULL,
  job TEXT,
  run_id INTEGER,
  agent_id TEXT,
  session_key TEXT,
  session_id TEXT,
  data_json TEXT
);
CREATE INDEX events_ts ON events (ts);
CREATE INDEX events_agent_ts ON events (agent_id, ts);
CREATE INDEX events_type_ts ON events (type, ts);

CREATE TABLE read_positions (
  consumer TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  position_json TEXT NOT NULL,
  last_entry_at REAL,
  data_json TEXT,
  updated_at REAL NOT NULL,
  PRIMARY KEY (consumer, agent_id, session_key)
);
