-- Memory history covers the whole workspace (memory/ and the root memory and bootstrap files) in
-- one store shared by every agent. `layout` 1: a snapshot of memory/ alone, in the agent's own
-- repository (history/<agent>/repo.git), paths relative to memory/ (before this migration);
-- 2: in the shared store (history/snapshots.git), paths relative to the workspace.
-- `roots_json` lists the root files the snapshot covered (layout 2); `marks_json` what the jobs
-- that read transcripts had taken in when it was taken ({consumer: {key: [id, last entry]}}),
-- so a rewind can make them take in again what the restored files no longer hold.
ALTER TABLE history_snapshots ADD COLUMN layout INTEGER NOT NULL DEFAULT 1;
ALTER TABLE history_snapshots ADD COLUMN roots_json TEXT;
ALTER TABLE history_snapshots ADD COLUMN marks_json TEXT;
-- The stat manifest of each agent's last snapshot (was history/<agent>/manifest.json): what each
-- file looked like when it was hashed, so an unchanged workspace is checked without reading it.
CREATE TABLE history_manifests (
  agent_id TEXT PRIMARY KEY,
  snapshot_id TEXT,
  commit_sha TEXT,
  hashed_at_ns INTEGER NOT NULL,
  files_json TEXT NOT NULL
);
