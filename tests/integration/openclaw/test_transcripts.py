"""Tail readers on copies of the real captures and on generated transcripts, in both eras."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest

from memwarden.openclaw import jsonl_tail
from memwarden.openclaw.entries import (
    Compaction,
    Message,
    ModelChange,
    Reset,
    SessionHeader,
    current_window,
    parse_line,
)
from memwarden.openclaw.transcripts import (
    ReadPosition,
    TranscriptLocation,
    all_read_to_end,
    has_new_data,
    read_since,
    read_tail,
    transcript_size,
)
from memwarden.process.errors import StoreError
from support.transcripts import (
    MINIMAL_NAVIGATION_JSON,
    assistant_text,
    event_row,
    make_sqlite_agent_db,
    transcript_lines,
    user_text,
    write_jsonl,
    write_jsonl_transcript,
    zstd,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FILE_ERA_SESSIONS = FIXTURES / "openclaw-2026.7.35" / "agents" / "main" / "sessions"
AGENT_DB = FIXTURES / "openclaw-2026.9.6" / "openclaw-agent.sqlite"
FIXTURE_SESSION = "33333333-2222-4333-8444-555555555555"
RESET_ARCHIVE = "101fbd0d-c6e3-4b83-94f5-65435a94d00e.jsonl.reset.2026-11-22T05-35-07.925Z"
MAIN_SESSION = "b5974d71-c717-4e69-b2ad-af312d36f9f1"
HOOKTEST_SESSION = "a9564a35-b31e-4dee-a039-26288e780302"
CANNED_REPLY = "Hello from the fake LLM. (canned reply) "
BIG_TURNS = 19_000
BIG_TEXT_SIZE = 1200


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FILE_ERA_SESSIONS, tmp_path / "sessions"))


@pytest.fixture
def agent_db(tmp_path: Path) -> Path:
    return Path(shutil.copy(AGENT_DB, tmp_path / "openclaw-agent.sqlite"))


@pytest.fixture(scope="session")
def big_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    return write_jsonl_transcript(path, BIG_TURNS, text_size=BIG_TEXT_SIZE)


def _file(path: Path) -> TranscriptLocation:
    return TranscriptLocation("file", path, path.name.split(".")[0])


def _texts(entries) -> list[str]:
    return [entry.text for entry in entries if isinstance(entry, Message)]


def _writable(db: Path) -> sqlite3.Connection:
    """Open a test's own copy for writing; the capture's CHECK calls octet_length()."""
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("PRAGMA ignore_check_constraints = ON")
    return connection


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


# -- file era: the captures --------------------------------------------------------------------


def test_read_tail_file_capture_returns_all_entries_in_order(sessions_dir):
    path = sessions_dir / f"{FIXTURE_SESSION}.jsonl"
    result = read_tail(_file(path))
    header, _, assistant = result.entries
    assert isinstance(header, SessionHeader)
    assert header.id == FIXTURE_SESSION
    assert _texts(result.entries) == ["handwritten fixture", "fixture reply"]
    # sessions.json says totalTokens 5555 for this transcript; the message says 5560 (+ output).
    assert assistant.usage.context_tokens == 5555
    assert result.reached_start and not result.partial_last_line
    assert (result.start.offset, result.end.offset) == (0, path.stat().st_size)
    assert (result.malformed, result.invalid_utf8, result.oversized) == (0, 0, 0)


def test_read_tail_file_reset_archive_reads_the_old_conversation(sessions_dir):
    result = read_tail(_file(sessions_dir / RESET_ARCHIVE))
    assert [entry.type for entry in result.entries] == [
        "session",
        "model_change",
        "thinking_level_change",
        "custom",
        "message",
        "message",
        "custom",
    ]
    assert _texts(result.entries) == ["hello legacy layout", CANNED_REPLY]
    assert current_window(result.entries) == result.entries


def test_read_tail_file_capture_header_only_has_one_entry(sessions_dir):
    result = read_tail(_file(sessions_dir / "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b.jsonl"))
    assert [type(entry) for entry in result.entries] == [SessionHeader]


# -- SQLite era: the capture -------------------------------------------------------------------


def test_read_tail_sqlite_main_session_current_window_starts_after_reset(agent_db):
    result = read_tail(TranscriptLocation("sqlite", agent_db, MAIN_SESSION))
    assert len(result.entries) == 14
    assert (result.start.seq, result.end.seq, result.reached_start) == (-1, 13, True)
    current = current_window(result.entries)
    previous = result.entries[: len(result.entries) - len(current)]
    assert isinstance(previous[-1], Reset)
    assert previous[-1].reason == "reset"
    assert _texts(previous) == ["hello from the cli test", CANNED_REPLY]
    assert isinstance(current[0], ModelChange)
    assert _texts(current) == ["second message after reset", CANNED_REPLY]
    compaction = current[-1]
    assert isinstance(compaction, Compaction)
    assert compaction.first_kept_entry_id == current[3].id
    assert (compaction.tokens_before, compaction.tokens_after) == (1243, 80)


def test_read_tail_sqlite_two_resets_in_a_row_leave_an_empty_window(agent_db):
    result = read_tail(TranscriptLocation("sqlite", agent_db, HOOKTEST_SESSION))
    assert [entry.reason for entry in result.entries[-2:]] == ["reset", "new"]
    assert current_window(result.entries) == []


def test_read_tail_sqlite_max_entries_returns_the_newest_rows(agent_db):
    result = read_tail(TranscriptLocation("sqlite", agent_db, MAIN_SESSION), max_entries=3)
    assert [entry.type for entry in result.entries] == ["message", "custom", "compaction"]
    assert (result.start.seq, result.end.seq, result.reached_start) == (10, 13, False)


def test_read_tail_sqlite_unknown_session_is_empty(agent_db):
    result = read_tail(TranscriptLocation("sqlite", agent_db, "no-such-session"))
    assert result.entries == []
    assert (result.start.seq, result.end.seq, result.reached_start) == (-1, -1, True)


def test_read_tail_sqlite_zstd_rows_are_decompressed(agent_db):
    with _writable(agent_db) as connection:
        rows = connection.execute(
            "SELECT seq, event_json FROM transcript_events WHERE session_id = ? AND seq >= 10",
            (MAIN_SESSION,),
        ).fetchall()
        for seq, event_json in rows:
            line = event_json.encode()
            connection.execute(
                "UPDATE transcript_events SET event_json = NULL, event_zstd = ?,"
                " event_utf8_bytes = ?, navigation_json = ? WHERE session_id = ? AND seq = ?",
                (
                    zstd.compress(line),
                    len(line),
                    MINIMAL_NAVIGATION_JSON,
                    MAIN_SESSION,
                    seq,
                ),
            )
    compressed = read_tail(TranscriptLocation("sqlite", agent_db, MAIN_SESSION))
    plain = read_tail(TranscriptLocation("sqlite", AGENT_DB, MAIN_SESSION))
    assert compressed.entries == plain.entries
    assert _texts(current_window(compressed.entries)) == [
        "second message after reset",
        CANNED_REPLY,
    ]
    assert compressed.malformed == 0


def test_read_tail_sqlite_rows_without_data_or_with_bad_zstd_count_as_malformed(agent_db):
    with _writable(agent_db) as connection:
        connection.execute(
            "UPDATE transcript_events SET event_json = NULL, event_zstd = NULL"
            " WHERE session_id = ? AND seq = 1",
            (MAIN_SESSION,),
        )
        connection.execute(
            "UPDATE transcript_events SET event_json = NULL, event_zstd = X'00112233',"
            " navigation_json = ? WHERE session_id = ? AND seq = 2",
            (MINIMAL_NAVIGATION_JSON, MAIN_SESSION),
        )
    result = read_tail(TranscriptLocation("sqlite", agent_db, MAIN_SESSION))
    assert (len(result.entries), result.malformed) == (12, 2)


def test_read_tail_sqlite_row_past_the_4mib_event_limit_is_skipped_and_reported(tmp_path, caplog):
    db = make_sqlite_agent_db(tmp_path / "agent.sqlite", {"s1": list(transcript_lines(2))})
    huge = orjson.dumps(list(transcript_lines(1, text_size=5 * 1024 * 1024))[1])
    with _writable(db) as connection:
        connection.execute(
            "UPDATE transcript_events SET event_json = NULL, event_zstd = ?,"
            " event_utf8_bytes = 100, navigation_json = ? WHERE seq = 1",
            (zstd.compress(huge), MINIMAL_NAVIGATION_JSON),
        )

    result = read_tail(TranscriptLocation("sqlite", db, "s1"))

    assert (len(result.entries), result.oversized, result.malformed) == (4, 1, 0)
    assert result.bytes_read < len(huge)
    (warning,) = [record.getMessage() for record in caplog.records]
    assert f"{db}: transcript_events row (session s1, seq 1) decompresses past 4194304" in warning
    assert warning.endswith("; skipped")


def test_read_tail_sqlite_invalid_utf8_row_is_counted(tmp_path):
    db = make_sqlite_agent_db(tmp_path / "agent.sqlite", {"s1": list(transcript_lines(2))})
    with _writable(db) as connection:
        connection.execute(
            "UPDATE transcript_events SET event_json = CAST(X'7B22FF227D' AS TEXT) WHERE seq = 1"
        )
    result = read_tail(TranscriptLocation("sqlite", db, "s1"))
    assert (len(result.entries), result.invalid_utf8) == (4, 1)


def test_read_since_sqlite_after_new_rows_returns_only_them(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    position = read_tail(location).end
    assert position == ReadPosition(seq=13)
    assert not has_new_data(location, position)
    new_lines = [line for line in transcript_lines(2) if line["type"] == "message"][:2]
    with _writable(agent_db) as connection:
        for offset, line in enumerate(new_lines):
            row = event_row(MAIN_SESSION, 14 + offset, orjson.dumps(line), 0, compress=offset == 1)
            connection.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    assert has_new_data(location, position)
    result = read_since(location, position)
    assert _texts(result.entries) == [user_text(0), assistant_text(0)]
    assert (result.start.seq, result.end.seq) == (13, 15)
    assert not result.reset_detected and not result.reached_start
    assert read_since(location, result.end).entries == []


def test_read_since_sqlite_max_entries_resumes_where_it_stopped(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    first = read_since(location, ReadPosition(seq=-1), max_entries=5)
    rest = read_since(location, first.end)
    assert first.reached_start and first.end.seq == 4
    assert first.entries + rest.entries == read_tail(location).entries


def test_read_since_sqlite_seq_beyond_the_rows_falls_back_to_tail(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    result = read_since(location, ReadPosition(seq=99), max_entries=2)
    assert result.reset_detected
    assert [entry.type for entry in result.entries] == ["custom", "compaction"]


def test_read_since_sqlite_file_position_falls_back_to_tail(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    result = read_since(location, ReadPosition(offset=10, device=1, inode=2))
    assert result.reset_detected and len(result.entries) == 14


def test_transcript_size_sqlite_sums_the_utf8_sizes(agent_db):
    with sqlite3.connect(agent_db) as connection:
        expected = connection.execute(
            "SELECT sum(event_utf8_bytes) FROM transcript_events WHERE session_id = ?",
            (MAIN_SESSION,),
        ).fetchone()[0]
    assert transcript_size(TranscriptLocation("sqlite", agent_db, MAIN_SESSION)) == expected
    assert transcript_size(TranscriptLocation("sqlite", agent_db, "nobody")) == 0


def test_transcript_size_sqlite_at_most_stops_counting_once_passed(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    whole = transcript_size(location)
    assert transcript_size(location, at_most=whole) == whole
    counted = transcript_size(location, at_most=10)
    assert 10 < counted < whole


def test_make_sqlite_agent_db_compressed_and_plain_read_the_same(tmp_path):
    lines = list(transcript_lines(5, with_reset_at=3))
    plain = make_sqlite_agent_db(tmp_path / "plain.sqlite", {"s1": lines, "s2": lines[:2]})
    packed = make_sqlite_agent_db(tmp_path / "packed.sqlite", {"s1": lines}, compress=True)
    plain_result = read_tail(TranscriptLocation("sqlite", plain, "s1"))
    packed_result = read_tail(TranscriptLocation("sqlite", packed, "s1"))
    assert plain_result.entries == packed_result.entries
    assert _texts(current_window(plain_result.entries)) == [
        user_text(3),
        assistant_text(3),
        user_text(4),
        assistant_text(4),
    ]
    with sqlite3.connect(plain) as connection:
        keys = connection.execute("SELECT session_key FROM session_nodes ORDER BY 1").fetchall()
    assert keys == [("agent:main:main",), ("agent:main:session-1",)]


# -- file era: generated transcripts -----------------------------------------------------------


def test_read_tail_big_file_reads_only_its_end(big_transcript):
    assert big_transcript.stat().st_size >= 50 * 1024 * 1024
    result = read_tail(_file(big_transcript), max_entries=200)
    assert len(result.entries) == 200
    assert result.bytes_read < 1024 * 1024
    assert _texts(result.entries)[-2:] == [
        user_text(BIG_TURNS - 1, BIG_TEXT_SIZE),
        assistant_text(BIG_TURNS - 1, BIG_TEXT_SIZE),
    ]
    assert result.end.offset == big_transcript.stat().st_size
    assert not result.reached_start


def test_read_since_big_file_at_end_reads_almost_nothing(big_transcript):
    location = _file(big_transcript)
    position = read_tail(location).end
    assert not has_new_data(location, position)
    result = read_since(location, position)
    assert (result.entries, result.bytes_read, result.reset_detected) == ([], 1, False)


def test_read_tail_any_chunk_size_matches_a_whole_file_parse(tmp_path, monkeypatch):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 6, text_size=40, with_reset_at=2)
    _append(path, b"\n{broken\n\n")
    lines = path.read_bytes().split(b"\n")
    expected = [entry for entry in map(_parse_or_none, lines) if entry is not None]
    for chunk_size in (1, 2, 3, 7, 64, 4096):
        monkeypatch.setattr(jsonl_tail, "CHUNK_SIZE", chunk_size)
        result = read_tail(_file(path), max_entries=1000)
        assert result.entries == expected, chunk_size
        assert (result.malformed, result.reached_start) == (1, True)
        forward = read_since(_file(path), ReadPosition(offset=0, **_identity(path)))
        assert forward.entries == expected, chunk_size


def _parse_or_none(line: bytes):
    try:
        return parse_line(line)
    except ValueError:
        return None


def _identity(path: Path) -> dict[str, int]:
    status = path.stat()
    return {"device": status.st_dev, "inode": status.st_ino}


def test_read_tail_malformed_lines_are_skipped_and_counted(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = list(transcript_lines(3))
    payload = b"\n".join(orjson.dumps(line) for line in lines[:3])
    payload += b'\n{"type":"message",\nnot json at all\n[1,2]\n'
    payload += b"\n".join(orjson.dumps(line) for line in lines[3:]) + b"\n"
    path.write_bytes(payload)
    result = read_tail(_file(path))
    assert len(result.entries) == len(lines)
    assert (result.malformed, result.invalid_utf8) == (2, 0)
    assert _texts(result.entries)[-1] == assistant_text(2)


def test_read_tail_invalid_utf8_lines_are_skipped_and_counted(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 2)
    _append(path, b'{"type":"label","text":"caf\xe9"}\n\xff\xfe\n')
    _append(path, orjson.dumps(next(transcript_lines(0))) + b"\n")
    result = read_tail(_file(path))
    assert (len(result.entries), result.invalid_utf8, result.malformed) == (6, 2, 0)


def test_read_tail_truncated_last_line_is_left_for_the_next_read(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 2)
    complete = path.stat().st_size
    last = orjson.dumps({"type": "reset", "id": "r9", "reason": "new"})
    _append(path, last[:10])
    result = read_tail(_file(path))
    assert result.partial_last_line
    assert result.end.offset == complete
    assert len(result.entries) == 5
    assert has_new_data(_file(path), result.end)
    assert read_since(_file(path), result.end).partial_last_line
    _append(path, last[10:] + b"\n")
    resumed = read_since(_file(path), result.end)
    assert [entry.type for entry in resumed.entries] == ["reset"]
    assert not resumed.partial_last_line and not resumed.reset_detected


def test_read_tail_line_longer_than_a_chunk_is_returned_intact(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 1)
    huge_text = "x" * (3 * 1024 * 1024)
    _append(path, orjson.dumps({"type": "message", "message": {"content": huge_text}}) + b"\n")
    write_jsonl(tmp_path / "tail.jsonl", transcript_lines(1))
    _append(path, (tmp_path / "tail.jsonl").read_bytes())
    result = read_tail(_file(path))  # in chunks of 64 KiB
    assert [len(text) for text in _texts(result.entries)] == [200, 200, len(huge_text), 200, 200]
    assert _texts(result.entries)[2] == huge_text
    assert result.reached_start and result.oversized == 0


def test_read_tail_line_over_max_line_bytes_is_skipped_and_counted(tmp_path, monkeypatch):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 1)
    _append(path, orjson.dumps({"type": "message", "message": {"content": "y" * 5000}}) + b"\n")
    _append(path, orjson.dumps({"type": "reset", "id": "after"}) + b"\n")
    monkeypatch.setattr(jsonl_tail, "MAX_LINE_BYTES", 1000)
    for chunk_size in (100, 64 * 1024):
        monkeypatch.setattr(jsonl_tail, "CHUNK_SIZE", chunk_size)
        result = read_tail(_file(path))
        assert [entry.type for entry in result.entries] == [
            "session",
            "message",
            "message",
            "reset",
        ]
        assert result.oversized == 1
        since = read_since(_file(path), ReadPosition(offset=0, **_identity(path)))
        assert (since.entries, since.oversized) == (result.entries, 1)


def test_read_tail_oversized_unterminated_last_line_is_partial(tmp_path, monkeypatch):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 1)
    complete = path.stat().st_size
    _append(path, b"z" * 5000)
    monkeypatch.setattr(jsonl_tail, "CHUNK_SIZE", 256)
    monkeypatch.setattr(jsonl_tail, "MAX_LINE_BYTES", 1000)
    result = read_tail(_file(path))
    assert result.partial_last_line and result.end.offset == complete
    assert (len(result.entries), result.oversized) == (3, 0)


def test_read_tail_crlf_line_endings_parse_cleanly(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 3, line_ending=b"\r\n")
    result = read_tail(_file(path))
    assert _texts(result.entries) == [
        text for turn in range(3) for text in (user_text(turn), assistant_text(turn))
    ]
    assert result.malformed == 0 and not result.partial_last_line


def test_read_tail_empty_file_returns_nothing(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.touch()
    result = read_tail(_file(path))
    assert (result.entries, result.bytes_read, result.partial_last_line) == ([], 0, False)
    assert result.reached_start and result.start == result.end
    assert result.end.offset == 0


def test_read_since_file_after_append_returns_only_new_entries(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 3)
    location = _file(path)
    first = read_tail(location)
    assert not has_new_data(location, first.end)
    write_jsonl(tmp_path / "more.jsonl", transcript_lines(5))
    more = (tmp_path / "more.jsonl").read_bytes().split(b"\n", 7)[7]  # turns 3 and 4
    _append(path, more)
    assert has_new_data(location, first.end)
    result = read_since(location, first.end)
    assert _texts(result.entries) == [
        user_text(3),
        assistant_text(3),
        user_text(4),
        assistant_text(4),
    ]
    assert result.start == first.end
    assert result.end.offset == path.stat().st_size
    assert not result.reset_detected and not result.reached_start


def test_read_since_file_max_entries_resumes_where_it_stopped(tmp_path, monkeypatch):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 10)
    location = _file(path)
    start = ReadPosition(offset=0, **_identity(path))
    pages, position = [], start
    monkeypatch.setattr(jsonl_tail, "CHUNK_SIZE", 100)
    while True:
        page = read_since(location, position, max_entries=4)
        if not page.entries:
            break
        pages.append(page.entries)
        position = page.end
    assert [len(page) for page in pages] == [4, 4, 4, 4, 4, 1]
    assert [entry for page in pages for entry in page] == read_tail(location).entries


def test_read_since_file_truncated_falls_back_to_tail(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 5)
    position = read_tail(_file(path)).end
    write_jsonl_transcript(path, 1)  # same inode, shorter
    result = read_since(_file(path), position)
    assert result.reset_detected
    assert _texts(result.entries) == [user_text(0), assistant_text(0)]


def test_read_since_file_replaced_falls_back_to_tail(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 5)
    position = read_tail(_file(path)).end
    replacement = write_jsonl_transcript(tmp_path / "new.jsonl", 8)
    os.replace(replacement, path)
    assert has_new_data(_file(path), position)
    result = read_since(_file(path), position, max_entries=3)
    assert result.reset_detected
    assert len(result.entries) == 3
    assert result.end == read_tail(_file(path)).end


def test_read_since_file_rewritten_in_place_falls_back_to_tail(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 2, text_size=100)
    position = read_tail(_file(path)).end
    with path.open("r+b") as handle:  # same inode, longer, no line ends where the position does
        handle.write(b'{"type":"reset","id":"x","reason":"' + b"n" * position.offset + b'"}\n')
    result = read_since(_file(path), position)
    assert result.reset_detected
    assert [entry.type for entry in result.entries] == ["reset"]


def test_read_position_json_round_trip(tmp_path):
    file_position = ReadPosition(offset=120, device=2049, inode=77)
    seq_position = ReadPosition(seq=-1)
    for position in (file_position, seq_position):
        assert ReadPosition.from_json(position.to_json()) == position
        assert ReadPosition.from_json(orjson.dumps(position.to_json()).decode()) == position
    assert seq_position.to_json() == {"seq": -1}


@pytest.mark.parametrize("value", ["[]", "{}", '{"offset": "12"}', "not json", {"seq": 1.5}])
def test_read_position_from_json_garbage_raises_value_error(value):
    with pytest.raises(ValueError, match=r"position|JSON|char"):
        ReadPosition.from_json(value)


def test_transcript_size_file_is_its_byte_size(sessions_dir):
    path = sessions_dir / f"{FIXTURE_SESSION}.jsonl"
    assert transcript_size(_file(path)) == path.stat().st_size == 831


@pytest.mark.parametrize(
    "read",
    [
        read_tail,
        transcript_size,
        lambda location: read_since(location, ReadPosition(seq=0)),
        lambda location: has_new_data(location, ReadPosition(seq=0)),
    ],
)
@pytest.mark.parametrize("kind", ["file", "sqlite"])
def test_missing_transcript_raises_store_error_naming_the_path(tmp_path, read, kind):
    missing = tmp_path / "gone" / "missing-transcript"
    with pytest.raises(StoreError, match="missing-transcript"):
        read(TranscriptLocation(kind, missing, "s1"))


def test_read_tail_sqlite_the_gateways_own_zstd_row_is_decompressed(tmp_path):
    # Captured from openclaw 2026.9.6 (tests/fixtures/openclaw-2026.9.6-zstd): a 3,213-byte
    # user line the gateway stored in `event_zstd` (302 bytes), `event_json` NULL.
    captured = FIXTURES / "openclaw-2026.9.6-zstd"
    database = Path(shutil.copy(captured / "openclaw-agent.sqlite", tmp_path / "agent.sqlite"))
    result = read_tail(
        TranscriptLocation("sqlite", database, "881d25df-095d-4672-bf3f-c3135eb17097")
    )
    requests = [text for text in _texts(result.entries) if "zstd-capture-marker" in text]
    assert len(requests) == 1
    assert requests[0].startswith("zstd-capture-marker: Please keep these notes")
    assert (result.malformed, result.oversized) == (0, 0)


# -- reads that parse only the lines holding given bytes (the compaction watch) -----------------


def test_read_tail_sqlite_only_lines_with_parses_those_and_counts_the_rest(agent_db):
    location = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    everything = read_tail(location)

    only = read_tail(location, only_lines_with=b'"compaction"')

    compactions = [entry for entry in everything.entries if isinstance(entry, Compaction)]
    assert compactions and only.entries == compactions
    assert only.unparsed == len(everything.entries) - len(compactions)
    assert (only.start, only.end, only.reached_start) == (
        everything.start,
        everything.end,
        everything.reached_start,
    )


def test_read_tail_file_only_lines_with_counts_unparsed_lines_towards_max_entries(tmp_path):
    path = write_jsonl_transcript(tmp_path / "s.jsonl", 20)
    location = _file(path)
    everything = read_tail(location, 7)

    only = read_tail(location, 7, only_lines_with=b'"user"')

    assert only.entries == [
        entry for entry in everything.entries if isinstance(entry, Message) and entry.role == "user"
    ]
    assert len(only.entries) + only.unparsed == 7
    assert (only.start, only.end) == (everything.start, everything.end)


def test_read_since_file_only_lines_with_stops_where_the_full_read_stops(tmp_path):
    path = write_jsonl_transcript(tmp_path / "s.jsonl", 5)
    location = _file(path)
    start = read_tail(location, 3).start

    everything = read_since(location, start)
    only = read_since(location, start, only_lines_with=b"no line holds this")

    assert only.entries == [] and only.unparsed == len(everything.entries)
    assert only.end == everything.end


def _read_to_end(location: TranscriptLocation, stored: object) -> bool:
    (answer,) = all_read_to_end([(location, stored)])
    return answer


def test_all_read_to_end_of_a_file_is_true_only_where_has_new_data_finds_nothing(tmp_path):
    path = write_jsonl_transcript(tmp_path / "t.jsonl", 3)
    location = _file(path)
    position = read_tail(location).end
    stored = position.to_json()
    assert _read_to_end(location, stored) and not has_new_data(location, position)
    assert _read_to_end(location, stored | {"seq": 4, "other": "ignored"})
    # What it cannot settle with one stat: has_new_data (or the first-sight read) decides.
    for odd in (
        None,
        orjson.dumps(stored).decode(),
        stored | {"offset": stored["offset"] - 1},
        stored | {"inode": stored["inode"] + 1},
        stored | {"device": True},
        stored | {"offset": float(stored["offset"])},
        stored | {"seq": "1"},
        {"offset": stored["offset"]},
    ):
        assert not _read_to_end(location, odd), odd
    assert not _read_to_end(_file(tmp_path / "missing.jsonl"), stored)
    with path.open("ab") as handle:  # a line appended
        handle.write(orjson.dumps(next(transcript_lines(1))) + b"\n")
    assert not _read_to_end(location, stored) and has_new_data(location, position)
    replacement = write_jsonl_transcript(tmp_path / "new.jsonl", 3)
    os.replace(replacement, path)  # replaced by a file of the same size
    assert path.stat().st_size == stored["offset"]
    assert not _read_to_end(location, stored) and has_new_data(location, position)


def test_all_read_to_end_asks_a_database_what_has_new_data_asks_each_session(tmp_path, agent_db):
    quiet = TranscriptLocation("sqlite", agent_db, MAIN_SESSION)
    other = TranscriptLocation("sqlite", agent_db, HOOKTEST_SESSION)
    empty = TranscriptLocation("sqlite", agent_db, "no-rows-at-all")
    file = _file(write_jsonl_transcript(tmp_path / "t.jsonl", 2))
    ends = [read_tail(location).end for location in (quiet, other, empty)]
    reads = [
        (quiet, ends[0].to_json()),
        (other, ends[1].to_json()),
        (empty, ends[2].to_json()),  # seq -1: no row yet, none since
        (quiet, {"seq": ends[0].seq - 1}),
        (quiet, {"seq": "13"}),
        (quiet, {"offset": 0}),
        (quiet, None),
        (file, read_tail(file).end.to_json()),  # a file among them: one stat
    ]
    assert all_read_to_end(reads) == [True, True, True, False, False, False, False, True]
    line = next(line for line in transcript_lines(1) if line["type"] == "message")
    with _writable(agent_db) as connection:
        row = event_row(HOOKTEST_SESSION, ends[1].seq + 1, orjson.dumps(line), 0)
        connection.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    assert all_read_to_end(reads[:3]) == [True, False, True]
    for (location, stored), settled in zip(reads[:3], [True, False, True], strict=True):
        assert has_new_data(location, ReadPosition.from_json(stored)) is not settled
    gone = TranscriptLocation("sqlite", tmp_path / "missing.sqlite", MAIN_SESSION)
    assert all_read_to_end([(gone, {"seq": 1})]) == [False]
