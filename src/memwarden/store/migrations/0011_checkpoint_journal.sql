-- The checkpoint's journal: the renames a run has committed to (in the same transaction as the
-- read positions they go with) and not yet done. A run deletes its rows once its files are in
-- place; rows a killed run left are rolled forward by the next checkpoint before anything else.
-- `token` names the run (its temp files are `.<name>.mw-<token>-<n>.tmp`); `before_json` is
-- the target's [inode, size, mtime_ns] when it was read (NULL: missing); `appended` the text an
-- append adds, appended again to a daily log someone changed meanwhile or whose temp is gone.
CREATE TABLE checkpoint_journal (
  token TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  target TEXT NOT NULL,
  temp TEXT NOT NULL,
  workspace TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  before_json TEXT,
  appended TEXT,
  temp_inode INTEGER,
  PRIMARY KEY (token, temp)
);
