"""Which transcripts maintain compresses or deletes: never a live one, never too young."""

from __future__ import annotations

from datetime import UTC, datetime

from memwarden.maintenance.facts import FileFacts
from memwarden.maintenance.transcript_step import plan_transcript_retention

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC).timestamp()
DAY = 86400
CURRENT = "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
OLD = "101fbd0d-c6e3-4b83-94f5-65435a94d00e"


def fact(name: str, days_old: float, size: int = 1000) -> FileFacts:
    return FileFacts(name, size, NOW - days_old * DAY)


def plan(files, compress_after=7, delete_after=30, current_names=None):
    return {
        action.name: action.action
        for action in plan_transcript_retention(
            files,
            current_names=current_names if current_names is not None else {f"{CURRENT}.jsonl"},
            current_ids={CURRENT},
            now=NOW,
            compress_after_days=compress_after,
            delete_after_days=delete_after,
        )
    }


def test_old_transcript_no_session_points_at_is_compressed():
    assert plan([fact(f"{OLD}.jsonl", 10)]) == {f"{OLD}.jsonl": "compress"}


def test_current_transcript_is_never_touched_however_old():
    assert plan([fact(f"{CURRENT}.jsonl", 400)]) == {}


def test_side_files_of_a_current_session_are_never_touched():
    files = [
        fact(f"{CURRENT}.trajectory.jsonl", 50),
        fact(f"{CURRENT}-topic-42.jsonl", 50),
        fact(f"{CURRENT}.checkpoint.0b7a5f36-2c1e-4d3f-9a8b-123456789abc.jsonl", 50),
    ]
    assert plan(files) == {}


def test_custom_session_file_named_in_the_store_is_never_touched():
    assert plan([fact("custom-name.jsonl", 50)], current_names={"custom-name.jsonl"}) == {}


def test_young_transcript_is_left_for_later():
    assert plan([fact(f"{OLD}.jsonl", 6.9)]) == {}


def test_reset_archive_age_counts_from_the_reset_in_its_name():
    recent_reset = f"{OLD}.jsonl.reset.2026-11-20T05-35-07.925Z"
    old_reset = f"{OLD}.jsonl.reset.2026-10-01T05-35-07.925Z"
    result = plan([fact(recent_reset, 60), fact(old_reset, 60)])
    assert result == {old_reset: "compress"}


def test_gateway_zstd_archives_and_unrelated_files_are_left_alone():
    files = [
        fact(
            f"{OLD}.jsonl.deleted.2026-09-01T00-00-00.000Z.0123456789abcdef0123456789abcdef.zst", 90
        ),
        fact("sessions.json", 90),
        fact("sessions.json.bak.1", 90),
        fact("notes.txt", 90),
    ]
    assert plan(files) == {}


def test_compressed_transcript_past_retention_is_deleted():
    files = [fact(f"{OLD}.jsonl.gz", 31), fact(f"{OLD}.trajectory.jsonl.gz", 29)]
    assert plan(files) == {f"{OLD}.jsonl.gz": "delete"}


def test_delete_after_zero_keeps_compressed_transcripts_forever():
    assert plan([fact(f"{OLD}.jsonl.gz", 4000)], delete_after=0) == {}


def test_gz_that_is_not_a_transcript_is_never_deleted():
    assert plan([fact("backup.tar.gz", 400)]) == {}
