"""`memwarden maintain` on copies of real gateway state: retention, logs, state, config backups."""

from __future__ import annotations

import gzip
import os
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.health.deliveries import receipt_name
from memwarden.process.runtime import JobResult
from memwarden.store.state import StateDB
from memwarden.store.storage import backup_name
from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state

DAY = 86400
CURRENT = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
HOT = "33333333-2222-4333-8444-555555555555"
OLD = "101fbd0d-c6e3-4b83-94f5-65435a94d00e"


def stamp(days_ago: float) -> str:
    moment = datetime.now(UTC) - timedelta(days=days_ago)
    return moment.strftime("%Y-%m-%dT%H-%M-%S.000Z")


def age(path: Path, days: float) -> None:
    moment = time.time() - days * DAY
    os.utime(path, (moment, moment))


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.fixture
def file_era(tmp_path):
    """A file-era state dir: every file 40 days old, the reset archive renamed 20 days ago."""
    state = make_file_era_state(tmp_path)
    sessions = state.sessions_dir
    archive = next(sessions.glob(f"{OLD}.jsonl.reset.*"))
    archive.rename(sessions / f"{OLD}.jsonl.reset.{stamp(20)}")
    (sessions / "99999999-0000-4000-8000-000000000000.jsonl.gz").write_bytes(
        gzip.compress(b'{"type":"session"}\n')
    )
    for path in sessions.iterdir():
        age(path, 40)
    return state


def storage(home: Path) -> Path:
    return home / ".local" / "state" / "memwarden"


def test_maintain_compresses_old_transcripts_and_never_touches_live_ones(
    capsys, file_era, isolated_env, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_DELETE_COMPRESSED_AFTER_DAYS", "30")
    sessions = file_era.sessions_dir
    live = {name: (sessions / name).read_bytes() for name in (f"{CURRENT}.jsonl", f"{HOT}.jsonl")}
    live_times = {name: (sessions / name).stat().st_mtime_ns for name in live}
    trajectory = sessions / f"{OLD}.trajectory.jsonl"
    original = trajectory.read_bytes()
    original_mtime = trajectory.stat().st_mtime_ns

    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--json")

    assert result.exit_code == 0, result.stderr
    packed = sessions / f"{OLD}.trajectory.jsonl.gz"
    assert gzip.decompress(packed.read_bytes()) == original
    assert packed.stat().st_mtime_ns == original_mtime
    assert stat.S_IMODE(packed.stat().st_mode) == 0o600
    assert not trajectory.exists()
    assert len(list(sessions.glob(f"{OLD}.jsonl.reset.*.gz"))) == 1
    assert not (sessions / "99999999-0000-4000-8000-000000000000.jsonl.gz").exists()
    for name, content in live.items():
        assert (sessions / name).read_bytes() == content
        assert (sessions / name).stat().st_mtime_ns == live_times[name]
    assert (sessions / "sessions.json").exists()
    steps = result.json()["summary"]
    assert steps["transcripts"]["compressed"] == 2
    assert steps["transcripts"]["deleted"] == 1
    assert steps["transcripts"]["bytes_saved"] > len(original) // 2


def test_maintain_by_default_compresses_but_deletes_no_gateway_transcript(
    capsys, file_era, isolated_env
):
    packed_before = file_era.sessions_dir / "99999999-0000-4000-8000-000000000000.jsonl.gz"
    content = packed_before.read_bytes()

    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--json")

    assert result.exit_code == 0, result.stderr
    assert packed_before.read_bytes() == content  # 40 days old, compressed: still kept
    assert (file_era.sessions_dir / f"{OLD}.trajectory.jsonl.gz").exists()
    transcripts = result.json()["summary"]["transcripts"]
    assert transcripts["compressed"] == 2
    assert transcripts["deleted"] == 0
    assert "a later run deletes it" not in result.stdout


def test_maintain_dry_run_changes_nothing_and_says_what_it_would_do(
    capsys, file_era, isolated_env, monkeypatch
):
    monkeypatch.setenv("MEMWARDEN_MAINTAIN_DELETE_COMPRESSED_AFTER_DAYS", "30")
    before = snapshot(file_era.state_dir)
    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert snapshot(file_era.state_dir) == before
    assert not (storage(isolated_env) / "config-backups").exists()
    assert f"would compress {OLD}.trajectory.jsonl" in result.stdout
    assert "would delete 99999999-0000-4000-8000-000000000000.jsonl.gz" in result.stdout
    assert "config: would back up" in result.stdout


def test_maintain_never_compresses_over_a_gz_already_there(capsys, file_era):
    trajectory = file_era.sessions_dir / f"{OLD}.trajectory.jsonl"
    original = trajectory.read_bytes()
    theirs = trajectory.with_name(trajectory.name + ".gz")
    theirs.write_bytes(gzip.compress(b"OPERATOR COPY\n"))
    args = ("--state-dir", file_era.state_dir, "maintain")

    for dry_run in (("--dry-run",), ()):
        result = run_cli(capsys, *args, *dry_run)

        assert result.exit_code == 1, dry_run
        assert f"{theirs.name}: a file of that name is already there" in result.stderr
        assert gzip.decompress(theirs.read_bytes()) == b"OPERATOR COPY\n"
        assert trajectory.read_bytes() == original
    assert not list(file_era.sessions_dir.glob(".*.tmp"))


def test_maintain_finishes_a_compression_a_killed_run_left_with_both_files(capsys, file_era):
    trajectory = file_era.sessions_dir / f"{OLD}.trajectory.jsonl"
    original = trajectory.read_bytes()
    packed = trajectory.with_name(trajectory.name + ".gz")
    packed.write_bytes(gzip.compress(original))  # linked into place, killed before the unlink

    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain")

    assert result.exit_code == 0, result.stderr
    assert not trajectory.exists()
    assert gzip.decompress(packed.read_bytes()) == original


def test_maintain_unreadable_store_skips_that_agent_only_and_exits_1(
    capsys, file_era, isolated_env
):
    broken = file_era.state_dir / "agents" / "ops" / "sessions"
    broken.mkdir(parents=True)
    (broken / "sessions.json").write_text("{not json")
    orphan = broken / "aaaaaaaa-0000-4000-8000-000000000000.jsonl"
    orphan.write_text("{}\n")
    age(orphan, 60)
    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain")
    assert result.exit_code == 1
    assert "agent ops: transcripts left as they are" in result.stderr
    assert orphan.exists()
    assert (file_era.sessions_dir / f"{OLD}.trajectory.jsonl.gz").exists()
    assert len(list((storage(isolated_env) / "config-backups").iterdir())) == 1


def keeping_two_backups(file_era, tmp_path) -> tuple:
    """The maintain command line with `config_backups_keep = 2`."""
    config = tmp_path / "memwarden.toml"
    config.write_text("[maintain]\nconfig_backups_keep = 2\n")
    return ("--config", config, "--state-dir", file_era.state_dir, "maintain")


def test_maintain_backs_up_config_once_per_change_and_warns_when_it_shrank(
    capsys, file_era, isolated_env, tmp_path
):
    arguments = keeping_two_backups(file_era, tmp_path)
    backups = storage(isolated_env) / "config-backups"

    assert run_cli(capsys, *arguments).exit_code == 0
    (first,) = backups.iterdir()
    assert first.read_bytes() == file_era.config_path.read_bytes()
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert run_cli(capsys, *arguments).exit_code == 0
    assert list(backups.iterdir()) == [first]

    file_era.config_path.write_text('{"gateway": {"port": 18789}}\n')
    result = run_cli(capsys, *arguments)
    assert result.exit_code == 0
    assert " WARNING memwarden: the gateway config" in result.stderr and "shrank" in result.stderr
    db = StateDB(storage(isolated_env) / "state.db")
    (event,) = db.events(types=["config.shrunk"])
    assert event["data"]["current_bytes"] < event["data"]["previous_bytes"] / 2
    assert len(list(backups.iterdir())) == 2

    file_era.config_path.write_text('{"gateway": {"port": 18790}}\n')
    assert run_cli(capsys, *arguments).exit_code == 0
    names = sorted(path.name for path in backups.iterdir())
    assert len(names) == 2 and first.name not in names
    db.close()


def test_maintain_keeps_the_last_good_config_through_a_series_of_broken_edits(
    capsys, file_era, isolated_env, tmp_path
):
    arguments = keeping_two_backups(file_era, tmp_path)
    backups = storage(isolated_env) / "config-backups"
    good = file_era.config_path.read_bytes()
    run_cli(capsys, *arguments)

    for broken in ("{ gateway: { port: 1 ", "{ gateway: ", "{"):
        file_era.config_path.write_text(broken)
        result = run_cli(capsys, *arguments)
    file_era.config_path.write_bytes(b"")
    result = run_cli(capsys, *arguments)

    kept = [path.read_bytes() for path in sorted(backups.iterdir())]
    assert good in kept  # not pushed out by the broken copies
    assert kept[-1] == b""  # and what is there now is kept too
    assert "shrank from" in result.stderr and "to 0 B" in result.stderr


def test_maintain_never_writes_over_a_config_backup_taken_at_the_same_moment(
    capsys, file_era, isolated_env, fixture_clock
):
    backups = storage(isolated_env) / "config-backups"
    backups.mkdir(parents=True)
    taken = backups / backup_name(file_era.config_path.name, fixture_clock)  # by a hooks install
    taken.write_text("{ the config before the install }\n")

    assert run_cli(capsys, "--state-dir", file_era.state_dir, "maintain").exit_code == 0

    assert taken.read_text() == "{ the config before the install }\n"
    (new,) = set(backups.iterdir()) - {taken}
    assert new.read_bytes() == file_era.config_path.read_bytes()


def test_maintain_rotates_oversized_logs(capsys, file_era, isolated_env, tmp_path):
    logs = storage(isolated_env) / "logs"
    logs.mkdir(parents=True)
    (logs / "health.log").write_bytes(b"x" * 3000)
    (logs / "health.log.1").write_bytes(b"older")
    (logs / "index.log").write_bytes(b"small")
    config = tmp_path / "memwarden.toml"
    config.write_text("[maintain]\nlog_max_kb = 2\nlog_keep = 1\n")
    result = run_cli(capsys, "--config", config, "--state-dir", file_era.state_dir, "maintain")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in logs.iterdir()) == ["health.log.1", "index.log"]
    assert (logs / "health.log.1").read_bytes() == b"x" * 3000


def test_maintain_prunes_old_runs_and_events_but_keeps_each_jobs_last_success(
    capsys, file_era, isolated_env
):
    db = StateDB(storage(isolated_env) / "state.db")
    old = time.time() - 200 * DAY
    kept_success = db.start_run("rotate", now=old)
    db.finish_run(kept_success, 0, {}, now=old + 5)
    stale = db.start_run("checkpoint", now=old)
    db.finish_run(stale, 0, {}, now=old + 5)
    recent = db.start_run("checkpoint", now=time.time() - DAY)
    db.finish_run(recent, 0, {})
    db.record_event("alert.sent", ts=old)
    db.record_event("alert.sent")
    db.close()
    receipts = storage(isolated_env) / "deliveries"
    receipts.mkdir()
    for key, at in (("agent:main:old", old), ("agent:main:new", time.time() - DAY)):
        delivery = {"at": datetime.fromtimestamp(at, UTC).isoformat(), "handoff": "whole"}
        receipt = {"version": 1, "sessionKey": key, "deliveries": [delivery]}
        (receipts / receipt_name(key)).write_bytes(orjson.dumps(receipt))

    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--json")

    assert result.exit_code == 0, result.stderr
    assert [path.name for path in receipts.iterdir()] == [receipt_name("agent:main:new")]
    assert result.json()["summary"]["state"] == {
        "runs": 1,
        "events": 1,
        "receipts": 1,
        "vacuum": False,
        "free_bytes": result.json()["summary"]["state"]["free_bytes"],
    }
    db = StateDB(storage(isolated_env) / "state.db")
    ids = {row[0] for row in db.connection.execute("SELECT id FROM runs")}
    assert kept_success in ids and recent in ids and stale not in ids
    assert len(db.events(types=["alert.sent"])) == 1
    db.close()


def test_maintain_archives_old_daily_logs_when_enabled(capsys, file_era, isolated_env, tmp_path):
    memory = file_era.workspace / "memory"
    memory.mkdir(parents=True)
    today = datetime.now(UTC).date()
    old_day = today - timedelta(days=45)
    old_name = f"{old_day:%Y-%m-%d}.md"
    recent_name = f"{today - timedelta(days=2):%Y-%m-%d}.md"
    for name in (old_name, recent_name, "MEMORY.md"):
        (memory / name).write_text(f"# {name}\n")
    config = tmp_path / "memwarden.toml"
    config.write_text("[maintain]\narchive_daily_logs_after_days = 30\n")
    result = run_cli(capsys, "--config", config, "--state-dir", file_era.state_dir, "maintain")
    assert result.exit_code == 0, result.stderr
    archived = memory / "archive" / f"{old_day:%Y-%m}" / old_name
    assert archived.read_text() == f"# {old_name}\n"
    assert sorted(p.name for p in memory.iterdir()) == sorted(["MEMORY.md", "archive", recent_name])


def test_maintain_daily_log_archive_never_overwrites(capsys, file_era, tmp_path):
    memory = file_era.workspace / "memory"
    old_day = datetime.now(UTC).date() - timedelta(days=45)
    name = f"{old_day:%Y-%m-%d}.md"
    (memory / "archive" / f"{old_day:%Y-%m}").mkdir(parents=True)
    (memory / "archive" / f"{old_day:%Y-%m}" / name).write_text("already archived\n")
    (memory / name).write_text("newer text\n")
    config = tmp_path / "memwarden.toml"
    config.write_text("[maintain]\narchive_daily_logs_after_days = 30\n")
    args = ("--config", config, "--state-dir", file_era.state_dir, "maintain")

    for dry_run in (("--dry-run",), ()):
        result = run_cli(capsys, *args, *dry_run)

        assert result.exit_code == 1, dry_run
        assert f"{name}: a file of that name is already there" in result.stderr
        assert "compare it with" in result.stderr
        assert f"would move {name}" not in result.stdout
        assert (memory / name).read_text() == "newer text\n"
        assert (memory / "archive" / f"{old_day:%Y-%m}" / name).read_text() == "already archived\n"


def test_maintain_daily_log_archive_finishes_a_move_a_killed_run_left(capsys, file_era, tmp_path):
    memory = file_era.workspace / "memory"
    old_day = datetime.now(UTC).date() - timedelta(days=45)
    name = f"{old_day:%Y-%m-%d}.md"
    archived = memory / "archive" / f"{old_day:%Y-%m}" / name
    archived.parent.mkdir(parents=True)
    (memory / name).write_text("the log\n")
    os.link(memory / name, archived)  # linked into the archive, killed before the unlink
    config = tmp_path / "memwarden.toml"
    config.write_text("[maintain]\narchive_daily_logs_after_days = 30\n")
    args = ("--config", config, "--state-dir", file_era.state_dir, "maintain")

    assert f"would move {name}" in run_cli(capsys, *args, "--dry-run").stdout
    result = run_cli(capsys, *args)

    assert result.exit_code == 0, result.stderr
    assert not (memory / name).exists()
    assert archived.read_text() == "the log\n"


def test_maintain_sqlite_era_leaves_the_database_alone(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    before = state.sqlite_path.read_bytes()
    result = run_cli(capsys, "--state-dir", state.state_dir, "maintain", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()["summary"]["transcripts"]["compressed"] == 0
    assert state.sqlite_path.read_bytes() == before


def test_maintain_calls_history_prune_with_dry_run(capsys, file_era, monkeypatch):
    calls = []

    def prune(context, dry_run):
        calls.append(dry_run)
        return JobResult("history", {"pruned": 3}, ["history: would prune 3 snapshots"])

    monkeypatch.setattr("memwarden.maintenance.housekeeping.prune", prune)
    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert calls == [True]
    assert "history: would prune 3 snapshots" in result.stdout


def test_maintain_json_summary_is_the_run_record_and_appears_once(capsys, file_era, isolated_env):
    result = run_cli(capsys, "--state-dir", file_era.state_dir, "maintain", "--json")

    assert result.exit_code == 0, result.stderr
    assert "steps" not in result.json()  # was the same dict as `summary`, twice
    db = StateDB(storage(isolated_env) / "state.db")
    (run,) = db.last_runs("maintain")
    db.close()
    assert run.summary == result.json()["summary"]


def test_an_odd_session_store_entry_is_said_once_per_run(file_era, caplog):
    import orjson

    from memwarden.openclaw.layout import discover
    from memwarden.openclaw.sessions import load_sessions

    store_path = file_era.sessions_dir / "sessions.json"
    store = orjson.loads(store_path.read_bytes())
    store["agent:main:odd"] = {"sessionId": 42, "updatedAt": 1}
    store_path.write_bytes(orjson.dumps(store))
    (agent,) = discover(file_era.state_dir).agents

    load_sessions(agent)  # maintain's steps each read the store
    load_sessions(agent)

    odd = [r.getMessage() for r in caplog.records if "sessionId is" in r.getMessage()]
    assert len(odd) == 1
