-- The length of each of the gateway's bootstrap files (AGENTS.md, MEMORY.md, …) a snapshot holds,
-- as the gateway counts it (UTF-16 units, end trimmed): {path: characters}. Health's bootstrap
-- budget forecast reads their growth from here, without git. NULL for snapshots taken before.
ALTER TABLE history_snapshots ADD COLUMN bootstrap_json TEXT;
