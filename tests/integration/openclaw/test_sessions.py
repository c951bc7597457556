"""openclaw/sessions.py on copies of both real captures, plus corrupt, locked and odd stores."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from memwarden.openclaw import sessions, sqlite_ro
from memwarden.openclaw.keys import SessionKind
from memwarden.openclaw.layout import discover
from memwarden.openclaw.transcripts import TranscriptLocation
from memwarden.process.errors import StoreError
from support.deployments import make_file_era_state, make_sqlite_era_state

MAIN_9_6 = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
HOOKTEST_9_6 = "a9564a35-b31e-4dee-a039-26288e780302"
AGENTRPC_9_6 = "8c265b64-a9e9-4d00-8ea7-a00b8d150583"
MAIN_7_35 = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
SHARED_7_35 = "33333333-2222-4333-8444-555555555555"
RESET_7_35 = "101fbd0d-c6e3-4b83-94f5-65435a94d00e"


def by_key(records: list[sessions.SessionRecord]) -> dict[str, sessions.SessionRecord]:
    return {record.key: record for record in records}


def load_main(state_dir: Path) -> list[sessions.SessionRecord]:
    return sessions.load_sessions(discover(state_dir, env={}).agent("main"))


# --- SQLite era ----------------------------------------------------------------------------------


def test_load_sessions_sqlite_capture_exact_records(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    records = load_main(state.state_dir)
    assert [record.key for record in records] == [
        "agent:main:agentrpc",
        "agent:main:main",
        "agent:main:hooktest",
    ]
    main = by_key(records)["agent:main:main"]
    assert main == sessions.SessionRecord(
        agent_id="main",
        key="agent:main:main",
        session_id=MAIN_9_6,
        kind=SessionKind.MAIN,
        updated_at=1795325503954,
        status="done",
        total_tokens=1234,
        total_tokens_fresh=False,
        context_tokens=32000,
        model="fake-model",
        transcript=TranscriptLocation("sqlite", state.sqlite_path, MAIN_9_6),
        last_interaction_at=1795325340600,
    )
    assert main.context_ratio == pytest.approx(1234 / 32000)
    assert main.updated == datetime.fromtimestamp(1795325503.954, tz=UTC)


def test_load_sessions_sqlite_capture_other_sessions_fields(tmp_path):
    records = by_key(load_main(make_sqlite_era_state(tmp_path).state_dir))
    hooktest, agentrpc = records["agent:main:hooktest"], records["agent:main:agentrpc"]
    assert (hooktest.session_id, hooktest.kind, hooktest.status) == (
        HOOKTEST_9_6,
        SessionKind.NAMED,
        None,
    )
    assert (hooktest.total_tokens, hooktest.total_tokens_fresh, hooktest.context_tokens) == (
        0,
        True,
        None,
    )
    assert hooktest.context_ratio is None
    assert hooktest.last_interaction_at is None
    assert agentrpc.session_id == AGENTRPC_9_6 and agentrpc.total_tokens_fresh is True


def test_load_sessions_sqlite_transcripts_have_rows_in_the_copy(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    records = load_main(state.state_dir)
    with sqlite3.connect(state.sqlite_path) as connection:
        for record in records:
            assert record.transcript.kind == "sqlite"
            assert record.transcript.path == state.sqlite_path
            (count,) = connection.execute(
                "SELECT count(*) FROM transcript_events WHERE session_id = ?",
                (record.transcript.session_id,),
            ).fetchone()
            assert count > 0


def test_load_sessions_sqlite_other_agent_folder(tmp_path):
    state = make_sqlite_era_state(tmp_path, agent_id="ops")
    records = sessions.load_sessions(discover(state.state_dir, env={}).agent("ops"))
    assert {record.agent_id for record in records} == {"ops"}
    assert len(records) == 3


def test_load_sessions_sqlite_locked_database_retries_then_store_error(tmp_path, monkeypatch):
    state = make_sqlite_era_state(tmp_path)
    agent = discover(state.state_dir, env={}).agent("main")
    monkeypatch.setattr(sqlite_ro, "BUSY_TIMEOUT_SECONDS", 0.01)
    monkeypatch.setattr(sqlite_ro, "RETRY_PAUSE_SECONDS", 0.001)
    attempts = []
    original_connect = sqlite_ro.connect_readonly

    def counting_connect(path):
        attempts.append(path)
        return original_connect(path)

    monkeypatch.setattr(sqlite_ro, "connect_readonly", counting_connect)
    holder = sqlite3.connect(state.sqlite_path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreError) as caught:
            sessions.load_sessions(agent)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(attempts) == sqlite_ro.RETRY_ATTEMPTS
    assert str(state.sqlite_path) in caught.value.message
    assert "locked" in caught.value.message
    assert "\n" not in caught.value.message
    assert len(sessions.load_sessions(agent)) == 3  # readable again once the lock is gone


def test_load_sessions_sqlite_unreadable_file_store_error(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    agent = discover(state.state_dir, env={}).agent("main")
    state.sqlite_path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match=str(state.sqlite_path)):
        sessions.load_sessions(agent)


def test_load_sessions_sqlite_database_without_session_nodes_store_error(tmp_path):
    database = tmp_path / "empty.sqlite"
    sqlite3.connect(database).close()
    with pytest.raises(StoreError, match="no session_nodes table"):
        sessions.load_sqlite_store("main", database)


def test_load_sessions_sqlite_odd_rows_and_missing_columns_tolerated(tmp_path):
    database = tmp_path / "minimal.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "CREATE TABLE session_nodes (session_key TEXT, current_session_id TEXT, "
            "entry_json TEXT, something_new TEXT)"
        )
        connection.executemany(
            "INSERT INTO session_nodes VALUES (?, ?, ?, 'x')",
            [
                ("agent:main:main", "s1", '{"totalTokens": null, "totalTokensFresh": false}'),
                ("agent:main:cron:daily", "s2", "{not json"),
                ("agent:main:subagent:abc", "s3", '["a list"]'),
                ("agent:main:x", "s4", '{"totalTokens": "many", "updatedAt": 5, "brandNew": 1}'),
            ],
        )
    records = by_key(sessions.load_sqlite_store("main", database))
    imported = records["agent:main:main"]
    assert (imported.total_tokens, imported.total_tokens_fresh, imported.updated_at) == (
        None,
        False,
        None,
    )
    assert records["agent:main:cron:daily"].kind == SessionKind.CRON
    assert records["agent:main:cron:daily"].total_tokens is None
    assert records["agent:main:subagent:abc"].model is None
    assert records["agent:main:x"].total_tokens is None
    assert records["agent:main:x"].updated_at == 5
    conversations = sessions.load_sqlite_store("main", database, automation=False)
    assert sorted(record.key for record in conversations) == ["agent:main:main", "agent:main:x"]


def test_load_sessions_sqlite_edited_entry_in_capture_copy_tolerated(tmp_path):
    state = make_sqlite_era_state(tmp_path)
    with sqlite3.connect(state.sqlite_path) as connection:
        connection.execute(
            "UPDATE session_nodes SET entry_json = '{' WHERE session_key = 'agent:main:hooktest'"
        )
    hooktest = by_key(load_main(state.state_dir))["agent:main:hooktest"]
    assert hooktest.session_id == HOOKTEST_9_6
    assert hooktest.updated_at == 1795325306336  # from the column
    assert hooktest.total_tokens is None


# --- file era ------------------------------------------------------------------------------------


def test_load_sessions_file_capture_exact_records(tmp_path):
    state = make_file_era_state(tmp_path)
    records = load_main(state.state_dir)
    assert [record.key for record in records] == [
        "agent:main:hot",
        "agent:main:fixture",
        "agent:main:main",
    ]
    fixture = by_key(records)["agent:main:fixture"]
    assert fixture == sessions.SessionRecord(
        agent_id="main",
        key="agent:main:fixture",
        session_id=SHARED_7_35,
        kind=SessionKind.NAMED,
        updated_at=1795325726071,
        status=None,
        total_tokens=5555,
        total_tokens_fresh=True,
        context_tokens=32000,
        model="fake-model",
        transcript=TranscriptLocation(
            "file", state.sessions_dir / f"{SHARED_7_35}.jsonl", SHARED_7_35
        ),
        last_interaction_at=None,
    )
    assert fixture.context_ratio == pytest.approx(5555 / 32000)


def test_load_sessions_file_capture_shared_session_id_both_kept(tmp_path):
    state = make_file_era_state(tmp_path)
    records = by_key(load_main(state.state_dir))
    hot, fixture = records["agent:main:hot"], records["agent:main:fixture"]
    assert hot.session_id == fixture.session_id == SHARED_7_35
    assert hot.transcript == fixture.transcript
    assert (hot.total_tokens, hot.context_tokens) == (999, 32000)


def test_load_sessions_file_capture_moved_state_dir_transcripts_found_by_name(tmp_path):
    state = make_file_era_state(tmp_path)
    records = load_main(state.state_dir)
    main = by_key(records)["agent:main:main"]
    assert (main.session_id, main.kind, main.total_tokens, main.total_tokens_fresh) == (
        MAIN_7_35,
        SessionKind.MAIN,
        0,
        True,
    )
    assert main.transcript.path == state.sessions_dir / f"{MAIN_7_35}.jsonl"
    for record in records:
        assert record.transcript.kind == "file"
        assert record.transcript.path.is_file()
        assert record.transcript.path.is_relative_to(state.state_dir)


def write_store(sessions_dir: Path, store: object) -> Path:
    sessions_dir.mkdir(parents=True, exist_ok=True)
    path = sessions_dir / "sessions.json"
    path.write_bytes(orjson.dumps(store))
    return path


def test_load_file_store_session_file_relative_wins_over_session_id(tmp_path):
    sessions_dir = tmp_path / "sessions"
    write_store(sessions_dir, {"agent:main:main": {"sessionId": "abc", "sessionFile": "t/x.jsonl"}})
    (sessions_dir / "t").mkdir()
    (sessions_dir / "t" / "x.jsonl").write_text("{}\n")
    (sessions_dir / "abc.jsonl").write_text("{}\n")
    (record,) = sessions.load_file_store("main", sessions_dir)
    assert record.transcript == TranscriptLocation("file", sessions_dir / "t" / "x.jsonl", "abc")


def test_load_file_store_absolute_session_file_existing_used(tmp_path):
    elsewhere = tmp_path / "elsewhere" / "topic.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text("{}\n")
    sessions_dir = tmp_path / "sessions"
    write_store(sessions_dir, {"k": {"sessionId": "abc", "sessionFile": str(elsewhere)}})
    (sessions_dir / "abc.jsonl").write_text("{}\n")
    assert sessions.load_file_store("main", sessions_dir)[0].transcript.path == elsewhere


def test_load_file_store_no_transcript_yet_none(tmp_path):
    sessions_dir = tmp_path / "sessions"
    write_store(sessions_dir, {"agent:main:main": {"sessionId": "abc", "sessionFile": "../x"}})
    assert sessions.load_file_store("main", sessions_dir)[0].transcript is None


def test_load_file_store_transcript_is_a_file_or_a_link_to_one_never_a_folder(tmp_path):
    sessions_dir = tmp_path / "sessions"
    target = tmp_path / "kept" / "real.jsonl"
    target.parent.mkdir()
    target.write_text("{}\n")
    store = {"linked": {"sessionId": "linked"}, "folder": {"sessionId": "folder"}}
    store["same-folder"] = {"sessionId": "x", "sessionFile": str(sessions_dir / "linked.jsonl")}
    write_store(sessions_dir, store)
    (sessions_dir / "linked.jsonl").symlink_to(target)
    (sessions_dir / "folder.jsonl").mkdir()

    records = {record.key: record for record in sessions.load_file_store("main", sessions_dir)}

    assert records["linked"].transcript.path == sessions_dir / "linked.jsonl"
    assert records["same-folder"].transcript.path == sessions_dir / "linked.jsonl"
    assert records["folder"].transcript is None


def test_load_file_store_folder_named_another_way_finds_what_each_lookup_finds(
    tmp_path, monkeypatch
):
    # The gateway wrote its state dir's path through a link (macOS: /var is /private/var).
    real = tmp_path / "real"
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    sessions_dir, written = real / "sessions", alias / "sessions"
    store = {f"conversation:{n}": {"sessionId": f"s{n}"} for n in range(40)}
    for n, entry in enumerate(store.values()):
        entry["sessionFile"] = str(written / f"t{n}.jsonl")
    write_store(sessions_dir, store)
    for n in range(36):
        (sessions_dir / f"t{n}.jsonl").write_text("{}\n")
    (sessions_dir / "t36.jsonl").symlink_to(sessions_dir / "t0.jsonl")  # a link to a file
    (sessions_dir / "t37.jsonl").mkdir()  # a folder: its session's own name is looked for
    (sessions_dir / "s37.jsonl").write_text("{}\n")
    # t38: not written yet, nor s38.jsonl; t39: gone, but s39.jsonl is there
    (sessions_dir / "s39.jsonl").write_text("{}\n")
    stats = []
    real_stat = sessions.os.stat
    monkeypatch.setattr(
        sessions.os, "stat", lambda *a, **k: stats.append(a[0]) or real_stat(*a, **k)
    )

    records = by_key(sessions.load_file_store("main", sessions_dir))

    # Each transcript as looking it up alone (a stat per candidate) finds it, with one stat
    # of the alias for the folder's 36 files (and the lookups of the three odd entries).
    assert len(stats) <= 2 + 3 * 3
    monkeypatch.setattr(sessions.os, "stat", real_stat)
    for key, entry in store.items():
        alone = sessions.resolve_transcript_file(
            sessions_dir, entry["sessionId"], entry["sessionFile"]
        )
        found = records[key].transcript
        assert (found.path if found else None) == alone, key
    assert records["conversation:0"].transcript.path == written / "t0.jsonl"
    assert records["conversation:37"].transcript.path == sessions_dir / "s37.jsonl"
    assert records["conversation:38"].transcript is None
    assert records["conversation:39"].transcript.path == sessions_dir / "s39.jsonl"


def test_load_file_store_without_automation_leaves_cron_and_subagents_out(tmp_path):
    sessions_dir = tmp_path / "sessions"
    keys = ["agent:main:main", "agent:main:cron:nightly:run:1", "agent:main:subagent:x"]
    write_store(sessions_dir, {key: {"sessionId": f"s{n}"} for n, key in enumerate(keys)})

    everything = sessions.load_file_store("main", sessions_dir)
    conversations = sessions.load_file_store("main", sessions_dir, automation=False)

    assert sorted(record.key for record in everything) == sorted(keys)
    assert [record.key for record in conversations] == ["agent:main:main"]


def test_load_sessions_newest_first_ties_by_key_unknown_times_last(tmp_path):
    state = make_file_era_state(tmp_path)
    store = {
        "agent:main:b": {"sessionId": "b", "updatedAt": 5},
        "agent:main:a": {"sessionId": "a", "updatedAt": 5},
        "agent:main:z": {"sessionId": "z"},
        "agent:main:c": {"sessionId": "c", "updatedAt": 9},
        "agent:main:y": {"sessionId": "y", "updatedAt": "soon"},
    }
    write_store(state.sessions_dir, store)

    ordered = [record.key for record in load_main(state.state_dir)]

    assert ordered == [
        "agent:main:c",
        "agent:main:a",
        "agent:main:b",
        "agent:main:y",
        "agent:main:z",
    ]


def test_load_file_store_unknown_and_missing_fields_tolerated(tmp_path):
    sessions_dir = tmp_path / "sessions"
    write_store(
        sessions_dir,
        {
            "agent:main:main": {"sessionId": "a", "updatedAt": 10.9, "surprise": {"deep": [1]}},
            "agent:main:cron:nightly:run:42": {
                "sessionId": "b",
                "totalTokens": "lots",
                "totalTokensFresh": "yes",
                "contextTokens": True,
                "status": "running",
                "lastInteractionAt": 7,
            },
            "agent:main:no-id": {"updatedAt": 99},
            "agent:main:not-an-object": [1, 2],
        },
    )
    records = by_key(sessions.load_file_store("main", sessions_dir))
    assert set(records) == {"agent:main:main", "agent:main:cron:nightly:run:42"}
    assert records["agent:main:main"].updated_at == 10
    assert records["agent:main:main"].total_tokens_fresh is None
    cron = records["agent:main:cron:nightly:run:42"]
    assert (cron.kind, cron.status, cron.last_interaction_at) == (
        SessionKind.CRON_RUN,
        "running",
        7,
    )
    assert (cron.total_tokens, cron.total_tokens_fresh, cron.context_tokens) == (None, None, None)
    assert cron.updated is None


def test_load_file_store_corrupt_json_one_line_store_error(tmp_path):
    sessions_dir = tmp_path / "sessions"
    sessions_dir.mkdir()
    store = sessions_dir / "sessions.json"
    store.write_text('{"agent:main:main": {"sessionId": "a",\n')
    with pytest.raises(StoreError) as caught:
        sessions.load_file_store("main", sessions_dir)
    assert caught.value.message.startswith(f"{store}: the session store is not valid JSON")
    assert "\n" not in caught.value.message


def test_load_file_store_not_an_object_store_error(tmp_path):
    write_store(tmp_path, [1, 2])
    with pytest.raises(StoreError, match="not a JSON object"):
        sessions.load_file_store("main", tmp_path)


def test_load_file_store_missing_store_no_sessions(tmp_path):
    assert sessions.load_file_store("main", tmp_path / "nowhere") == []


def test_load_sessions_agent_without_store_empty(tmp_path):
    agent = discover(tmp_path / "state", env={}).agent("main")
    assert agent.era == "none"
    assert sessions.load_sessions(agent) == []


# --- several agents ------------------------------------------------------------------------------


def test_load_sessions_one_corrupt_agent_others_still_read(tmp_path):
    state = make_file_era_state(tmp_path)
    broken = state.state_dir / "agents" / "broken" / "sessions"
    broken.mkdir(parents=True)
    (broken / "sessions.json").write_text("{oops")
    deployment = discover(state.state_dir, env={})
    records = sessions.load_sessions(deployment.agent("main"))
    assert [record.key for record in records] == [
        "agent:main:hot",
        "agent:main:fixture",
        "agent:main:main",
    ]
    with pytest.raises(StoreError) as caught:
        sessions.load_sessions(deployment.agent("broken"))
    assert str(broken / "sessions.json") in caught.value.message


def test_load_sessions_mixed_eras_sorted_together(tmp_path):
    state = make_file_era_state(tmp_path / "a")
    sqlite_copy = make_sqlite_era_state(tmp_path / "b")
    target = state.state_dir / "agents" / "ops" / "agent"
    target.mkdir(parents=True)
    sqlite_copy.sqlite_path.rename(target / "openclaw-agent.sqlite")
    deployment = discover(state.state_dir, env={})
    records = sessions.sort_newest_first(
        [record for agent in deployment.agents for record in sessions.load_sessions(agent)]
    )
    assert [(record.agent_id, record.transcript.kind) for record in records][:2] == [
        ("ops", "sqlite"),
        ("main", "file"),
    ]
    assert len(records) == 6


# --- files in a sessions folder ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (f"{MAIN_7_35}.jsonl", "live"),
        (f"{MAIN_7_35}-topic-42.jsonl", "live"),
        (f"{RESET_7_35}.jsonl.reset.2026-11-22T05-35-07.925Z", "reset_archive"),
        (f"{RESET_7_35}.jsonl.reset.2026-11-22T05-35-07Z", "reset_archive"),
        (f"{RESET_7_35}.jsonl.deleted.2026-11-22T05-35-07.925Z", "deleted_archive"),
        (
            f"{RESET_7_35}.jsonl.deleted.2026-11-22T05-35-07.925Z.{'a' * 32}.zst",
            "deleted_archive",
        ),
        (f"{RESET_7_35}.jsonl.bak.2026-11-22T05-35-07.925Z", "backup"),
        (f"{RESET_7_35}.trajectory.jsonl", "trajectory"),
        (f"{RESET_7_35}.trajectory-path.json", "trajectory"),
        (f"{RESET_7_35}.checkpoint.0b9f7b52-3c2d-4e5f-8a6b-7c8d9e0f1a2b.jsonl", "checkpoint"),
        ("sessions.json.bak.1795325707916", "backup"),
        (f"{RESET_7_35}.jsonl.migrated", "backup"),
        ("sessions.json", "other"),
        ("sessions.json.0b9f7b52-3c2d-4e5f-8a6b-7c8d9e0f1a2b.tmp", "other"),
        (f"{RESET_7_35}.jsonl.reset.yesterday", "other"),
        (f"{RESET_7_35}.jsonl.zst", "other"),
        ("notes.txt", "other"),
    ],
)
def test_classify_session_file_names_kinds(name, kind):
    assert sessions.classify_session_file(name) == kind


def test_archive_timestamp_parsed_aware():
    name = f"{RESET_7_35}.jsonl.reset.2026-11-22T05-35-07.925Z"
    assert sessions.archive_timestamp(name) == datetime(2026, 11, 22, 5, 35, 7, 925000, tzinfo=UTC)
    assert sessions.archive_timestamp(f"{RESET_7_35}.jsonl") is None


def test_reset_archives_file_capture_previous_window_found(tmp_path):
    state = make_file_era_state(tmp_path)
    expected = state.sessions_dir / f"{RESET_7_35}.jsonl.reset.2026-11-22T05-35-07.925Z"
    assert sessions.reset_archives(state.sessions_dir, RESET_7_35) == [expected]
    assert sessions.reset_archives(state.sessions_dir) == [expected]
    assert sessions.reset_archives(state.sessions_dir, MAIN_7_35) == []


def test_reset_archives_several_newest_first_topics_included(tmp_path):
    names = [
        "s.jsonl.reset.2026-01-02T00-00-00.000Z",
        "s.jsonl.reset.2026-03-01T10-00-00.000Z",
        "s-topic-7.jsonl.reset.2026-02-01T00-00-00Z",
        "other.jsonl.reset.2026-12-01T00-00-00.000Z",
        "s.jsonl.deleted.2026-12-01T00-00-00.000Z",
        "s.jsonl",
    ]
    for name in names:
        (tmp_path / name).write_text("{}\n")
    assert [path.name for path in sessions.reset_archives(tmp_path, "s")] == [
        "s.jsonl.reset.2026-03-01T10-00-00.000Z",
        "s-topic-7.jsonl.reset.2026-02-01T00-00-00Z",
        "s.jsonl.reset.2026-01-02T00-00-00.000Z",
    ]
    assert sessions.reset_archives(tmp_path / "missing", "s") == []
