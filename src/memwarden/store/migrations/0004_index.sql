-- memwarden index up to 0.3.0: what each memory file holds, reused while its (size, mtime_ns,
-- inode) stays the same. Nothing reads it since; it stays because 0.3.0's index reads and writes
-- it (a state DB without it fails every index run of a memwarden taken back to 0.3.0).
CREATE TABLE index_file_facts (
  workspace TEXT NOT NULL,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  title TEXT NOT NULL,
  markers_json TEXT NOT NULL,
  PRIMARY KEY (workspace, path)
) WITHOUT ROWID;

-- memwarden summarize: the conversation windows already summarised, so a window that two hook
-- events name (reset, then new) is written once.
CREATE TABLE session_summaries (
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  window_start TEXT NOT NULL,
  window_end TEXT NOT NULL,
  path TEXT NOT NULL,
  written_at REAL NOT NULL,
  PRIMARY KEY (agent_id, session_key, session_id, window_start, window_end)
);

-- memwarden index: the INDEX.md last written per workspace and a digest of what it was made from
-- (file stats, cap, rules, template), so an unchanged folder is not rendered again.
CREATE TABLE index_outputs (
  workspace TEXT PRIMARY KEY,
  inputs_sha256 TEXT NOT NULL,
  index_sha256 TEXT NOT NULL,
  outcome_json TEXT NOT NULL,
  written_at REAL NOT NULL
);
