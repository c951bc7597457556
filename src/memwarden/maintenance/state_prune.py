"""Pruning memwarden's own state.db: old runs and events, then VACUUM when it pays."""

from __future__ import annotations

from dataclasses import dataclass

from memwarden.store.state import StateDB

MIN_FREE_BYTES = 1 << 20

# The latest run of each job, and its latest success, are kept whatever their age: health and
# doctor judge a job by them.
_KEPT_RUNS = (
    "SELECT max(id) FROM runs GROUP BY job "
    "UNION SELECT max(id) FROM runs WHERE exit_code = 0 AND dry_run = 0 GROUP BY job"
)


@dataclass(frozen=True)
class PruneCounts:
    runs: int
    events: int


@dataclass(frozen=True)
class PageStats:
    page_size: int
    page_count: int
    freelist_count: int

    @property
    def free_bytes(self) -> int:
        return self.page_size * self.freelist_count


def prune_state(db: StateDB, cutoff: float, dry_run: bool) -> PruneCounts:
    """Given the state DB and a Unix time, delete (or with `dry_run` count) older runs and events.

    The latest run and latest success of every job are kept.
    """
    runs_where = f"started_at < ? AND finished_at IS NOT NULL AND id NOT IN ({_KEPT_RUNS})"
    with db.transaction() as connection:
        if dry_run:
            runs = connection.execute(f"SELECT count(*) FROM runs WHERE {runs_where}", (cutoff,))  # noqa: S608
            events = connection.execute("SELECT count(*) FROM events WHERE ts < ?", (cutoff,))
            return PruneCounts(runs.fetchone()[0], events.fetchone()[0])
        runs = connection.execute(f"DELETE FROM runs WHERE {runs_where}", (cutoff,))  # noqa: S608
        events = connection.execute("DELETE FROM events WHERE ts < ?", (cutoff,))
        return PruneCounts(runs.rowcount, events.rowcount)


def page_stats(db: StateDB) -> PageStats:
    connection = db.connection
    return PageStats(
        connection.execute("PRAGMA page_size").fetchone()[0],
        connection.execute("PRAGMA page_count").fetchone()[0],
        connection.execute("PRAGMA freelist_count").fetchone()[0],
    )


def vacuum_pays(stats: PageStats, min_free_percent: int) -> bool:
    """Given the page counts, return True when VACUUM would free enough to be worth it."""
    if stats.page_count == 0 or stats.free_bytes < MIN_FREE_BYTES:
        return False
    return stats.freelist_count * 100 >= min_free_percent * stats.page_count


def vacuum(db: StateDB) -> None:
    """Rebuild state.db without its free pages (outside any transaction) and truncate the WAL."""
    db.connection.execute("VACUUM")
    db.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
