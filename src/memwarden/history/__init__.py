"""Memory history: snapshots of each agent's workspace memory (memory/ and the root memory and
bootstrap files), diffs, rewind, retention, and the guard against destructive rewrites.

Snapshots live outside the workspace, in `<storage_dir>/history/snapshots.git`: a bare git
repository shared by every agent, driven through a sanitized environment (`git.py`), written
once per run whatever the number of agents (`snapshots.py`). A stat manifest per agent lets an
unchanged workspace be checked without reading a file (`manifest.py`). Their metadata (id,
agent, time, trigger, session, commit, file count) is in the state database (`records.py`).
Reading in data-flow order: scan → manifest → plan → snapshots (→ guard) → git/store →
records; then diffing, rewind and retention.
"""
