-- The checkpoint job's record of each agent as its last run left it: the stat signatures of the
-- session store and transcripts it read, the settings it ran with, and what it concluded for
-- each chosen session. While nothing of that changed, the next run skips the agent after a few
-- stats, without opening its store.
CREATE TABLE checkpoint_agents (
  agent_id TEXT PRIMARY KEY,
  data_json TEXT NOT NULL,
  valid_until REAL,
  updated_at REAL NOT NULL
);
