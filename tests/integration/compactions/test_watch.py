"""The compaction watch against real files and SQLite, in both storage eras: checkpoint finds
the compaction in the transcript, keeps its lost items in the day's log once (even after a run
that died between the write and the ledger), health names them, `memwarden compactions` lists it."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.compactions import ledger
from support.cli import run_cli
from support.deployments import make_generated_fleet, write_json5_config
from support.health import HealthRunner
from support.transcripts import START, make_sqlite_agent_db, transcript_lines, write_jsonl

SESSION_ID = "00000000-0000-4000-8000-000000000000"
DECISION = "[DECISION] store the ledger in PostgreSQL 16 with logical replication"
TODO = "[TODO] rotate the Stripe webhook secret before Friday"
OPEN_ITEM = "migrate the billing cron to systemd timers"
SECRET = "ghp_" + "x" * 36
REDACTED_DECISION = f"{DECISION} (deploy token [REDACTED:github-token])"
SUMMARY = (
    "## Decisions\nNo prior history.\n\n## Open TODOs\nNone.\n\n## Constraints/Rules\nNone.\n\n"
    "## Exact identifiers\nNone captured.\n\nHello from the fake LLM. (canned reply)"
)
COMPACTION_ID = "c0ffee01-0000-4000-8000-000000000001"
DAY_LOG = "memory/2026-11-22.md"


def conversation(session_id: str = SESSION_ID) -> list[dict]:
    """Eight turns: turn 1 holds a decision (with a secret) and an open item, turn 2 a TODO;
    then a compaction keeping turns 6 and 7, with a generic summary, and one more turn."""
    lines = list(transcript_lines(8, session_id=session_id))
    lines[3]["message"]["content"] = (
        f"We settle it.\n- {DECISION} (deploy token {SECRET})\n- [ ] {OPEN_ITEM}"
    )
    lines[5]["message"]["content"] = [{"type": "text", "text": TODO}]
    compaction = {
        "type": "compaction",
        "id": COMPACTION_ID,
        "parentId": "a0000007",
        "timestamp": "2026-11-22T05:10:00.000Z",
        "summary": SUMMARY,
        "firstKeptEntryId": "u0000006",
        "tokensBefore": 150_000,
        "tokensAfter": 9_000,
    }
    after = list(transcript_lines(9, session_id=session_id))[-2:]
    for line in after:
        line["id"] = "z" + line["id"]
    return [*lines, compaction, *after]


def file_era(tmp_path: Path) -> tuple[Path, Path]:
    state, workspaces = make_generated_fleet(tmp_path, ["main"], int(START.timestamp() * 1000))
    write_jsonl(state / "agents" / "main" / "sessions" / f"{SESSION_ID}.jsonl", conversation())
    return state, workspaces["main"]


def sqlite_era(tmp_path: Path) -> tuple[Path, Path]:
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    workspace.mkdir()
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    make_sqlite_agent_db(database, {SESSION_ID: conversation()}, compress=True)
    write_json5_config(
        state / "openclaw.json", {"agents": {"defaults": {"workspace": str(workspace)}}}
    )
    return state, workspace


@pytest.fixture(params=["file", "sqlite"])
def deployment(request, tmp_path) -> tuple[Path, Path]:
    return (file_era if request.param == "file" else sqlite_era)(tmp_path)


def ledger_rows(tmp_path_factory_home: Path) -> list[dict]:
    databases = list(tmp_path_factory_home.rglob("state.db"))
    assert len(databases) == 1
    with sqlite3.connect(databases[0]) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute("SELECT * FROM compactions")]


def test_checkpoint_keeps_the_lost_items_in_the_days_log_once(
    deployment, capsys, isolated_env, fixture_clock
):
    state, workspace = deployment
    first = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")
    assert first.exit_code == 0, first.stderr
    (found,) = first.json()["compactions"]["compactions"]
    assert found["compaction"] == COMPACTION_ID
    assert found["severity"] == "warning"
    assert [item["text"] for item in found["lost"]] == [
        REDACTED_DECISION,
        TODO,
        OPEN_ITEM,
    ]
    assert found["kept_file"] == DAY_LOG and found["written"] is True

    log = (workspace / DAY_LOG).read_text()
    assert log.count(f"dropped by compaction `{COMPACTION_ID}`") == 1
    assert f"  - {TODO}\n" in log and f"  - TODO: {OPEN_ITEM}\n" in log
    assert SECRET not in log
    assert "compacted 12 messages" in log  # turns 0 to 5: the span up to the first kept entry

    again = run_cli(capsys, "--state-dir", state, "--json", "checkpoint", "--force")
    assert again.exit_code == 0
    assert again.json()["compactions"]["compactions"] == []
    assert (workspace / DAY_LOG).read_text().count(COMPACTION_ID) == 1
    (row,) = ledger_rows(isolated_env)
    assert (row["entry_id"], row["session_key"], row["lost"], row["kept"]) == (
        COMPACTION_ID,
        "agent:main:main",
        3,
        1,
    )
    events = run_cli(capsys, "--state-dir", state, "--json", "events", "--type", "compaction")
    (event,) = events.json()["events"]
    assert event["data"]["compaction"] == COMPACTION_ID and event["data"]["lost"] == 3
    assert (row["tokens_before"], row["tokens_after"], row["summary_chars"]) == (
        150_000,
        9_000,
        len(" ".join(SUMMARY.split())),
    )


def test_quiet_timer_log_names_the_lossy_compaction(deployment, capsys, fixture_clock):
    state, _ = deployment
    result = run_cli(capsys, "--state-dir", state, "-q", "checkpoint")
    assert result.exit_code == 0
    assert result.stdout == ""
    (line,) = [message for message in result.messages if "compaction" in message]
    assert "WARNING" in result.stderr
    assert "agent:main:main" in line and "lost 3 item(s): [DECISION] store the ledger" in line


def test_run_killed_between_write_and_ledger_writes_the_section_once(
    deployment, capsys, monkeypatch, isolated_env, fixture_clock
):
    state, workspace = deployment
    real_record = ledger.record

    def killed(*arguments, **options):
        raise RuntimeError("killed before the ledger's commit")

    monkeypatch.setattr(ledger, "record", killed)
    first = run_cli(capsys, "--state-dir", state, "checkpoint")
    assert first.exit_code == 1
    assert any("killed before the ledger's commit" in line for line in first.messages)
    assert (workspace / DAY_LOG).read_text().count(COMPACTION_ID) == 1
    assert ledger_rows(isolated_env) == []

    monkeypatch.setattr(ledger, "record", real_record)
    second = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")
    assert second.exit_code == 0
    (found,) = second.json()["compactions"]["compactions"]
    assert found["written"] is False  # the file already held it
    assert (workspace / DAY_LOG).read_text().count(COMPACTION_ID) == 1
    (row,) = ledger_rows(isolated_env)
    assert row["kept"] == 1 and row["kept_file"] == DAY_LOG


def test_dry_run_writes_and_records_nothing(deployment, capsys, isolated_env, fixture_clock):
    state, workspace = deployment
    result = run_cli(capsys, "--state-dir", state, "checkpoint", "--dry-run")
    assert result.exit_code == 0
    assert f"would append to {DAY_LOG}" in result.stdout
    assert not (workspace / "memory").exists()
    assert not list(isolated_env.rglob("state.db"))


def test_health_warns_naming_session_and_items_and_compactions_lists_it(deployment, capsys):
    state, _ = deployment
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    runner = HealthRunner(state, env={"MEMWARDEN_HEALTH_GATEWAY_HTTP_URL": "http://127.0.0.1:9"})
    compacted = datetime(2026, 11, 22, 5, 10, tzinfo=UTC)
    results = {c["key"]: c for c in runner.run(at=compacted + timedelta(hours=1)).data["checks"]}
    (key,) = [key for key in results if key.startswith("compaction.lossy:")]
    assert key == f"compaction.lossy:main:agent:main:main:{COMPACTION_ID}"
    check = results[key]
    assert check["status"] == "warning"
    assert check["message"].startswith(
        "agent main: the compaction of agent:main:main at 2026-11-22 05:10 UTC lost 3 item(s): "
        f"{DECISION}"
    )
    assert check["message"].endswith(f"(kept in {DAY_LOG})")

    later = {c["key"]: c for c in runner.run(at=compacted + timedelta(hours=25)).data["checks"]}
    assert later["compaction.lossy"]["status"] == "ok"

    listed = run_cli(capsys, "--state-dir", state, "--json", "compactions", "--lossy")
    assert listed.json()["summary"] == {"compactions": 1, "lossy": 1, "lost_items": 3}
    (row,) = listed.json()["compactions"]
    assert row["lost"] == [
        {"kind": "marker", "text": REDACTED_DECISION, "marker": "DECISION"},
        {"kind": "marker", "text": TODO, "marker": "TODO"},
        {"kind": "todo", "text": OPEN_ITEM},
    ]
    text = run_cli(capsys, "--state-dir", state, "compactions", "--agent", "main")
    assert "agent:main:main  warning  150,000 → 9,000 tokens" in text.stdout
    assert f"; lost 3 item(s): {REDACTED_DECISION}; {TODO}; TODO: {OPEN_ITEM} (kept" in text.stdout
    assert f"(kept in {DAY_LOG})" in text.stdout


def test_one_failing_agent_never_stops_the_others(tmp_path, capsys, isolated_env, fixture_clock):
    moment = int(START.timestamp() * 1000)
    state, workspaces = make_generated_fleet(tmp_path, ["alpha", "beta"], moment)
    for index, name in enumerate(["alpha", "beta"]):
        session_id = f"0000000{index}-0000-4000-8000-000000000000"
        write_jsonl(
            state / "agents" / name / "sessions" / f"{session_id}.jsonl", conversation(session_id)
        )
    (workspaces["alpha"] / DAY_LOG).mkdir(parents=True)  # a folder where the day's log goes

    result = run_cli(capsys, "--state-dir", state, "--json", "checkpoint")
    assert result.exit_code == 1
    found = {item["agent"]: item for item in result.json()["compactions"]["compactions"]}
    assert "error" in found["alpha"] and "error" not in found["beta"]
    assert COMPACTION_ID in (workspaces["beta"] / DAY_LOG).read_text()
    assert [row["agent_id"] for row in ledger_rows(isolated_env)] == ["beta"]


def test_transcript_compacted_after_a_first_read_is_found_from_the_new_lines(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, workspace = file_era(tmp_path)
    transcript = state / "agents" / "main" / "sessions" / f"{SESSION_ID}.jsonl"
    lines = conversation()
    write_jsonl(transcript, lines[:17])  # before the compaction
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    assert ledger_rows(isolated_env) == []
    with transcript.open("ab") as handle:
        handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines[17:]))
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    assert [row["entry_id"] for row in ledger_rows(isolated_env)] == [COMPACTION_ID]
    assert COMPACTION_ID in (workspace / DAY_LOG).read_text()


def test_first_sight_reads_the_tail_and_a_new_compaction_records_the_older_ones(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, workspace = file_era(tmp_path)
    transcript = state / "agents" / "main" / "sessions" / f"{SESSION_ID}.jsonl"
    later = list(transcript_lines(120, session_id=SESSION_ID))[1:]  # 240 entries
    for line in later:
        line["id"] = "y" + line["id"]
    write_jsonl(transcript, [*conversation(), *later])
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    assert ledger_rows(isolated_env) == []  # older than the last 200 entries: before the watch

    second = {**conversation()[17], "id": "c0ffee02", "firstKeptEntryId": later[-2]["id"]}
    with transcript.open("ab") as handle:
        handle.write(orjson.dumps(second) + b"\n")
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    assert sorted(row["entry_id"] for row in ledger_rows(isolated_env)) == [
        COMPACTION_ID,
        "c0ffee02",
    ]
    assert COMPACTION_ID in (workspace / DAY_LOG).read_text()


def test_compactions_limit_below_one_is_a_usage_error(tmp_path, capsys):
    state, _ = file_era(tmp_path)
    result = run_cli(capsys, "--state-dir", state, "compactions", "--limit", "0")
    assert result.exit_code == 2
    assert result.messages == [
        "memwarden: argument --limit: expected a number ≥ 1, got 0 "
        "(see `memwarden compactions --help`)"
    ]


def test_a_reset_archive_whose_compaction_failed_once_is_read_again(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, workspace = file_era(tmp_path)
    sessions = state / "agents" / "main" / "sessions"
    transcript = sessions / f"{SESSION_ID}.jsonl"
    lines = conversation()
    write_jsonl(transcript, lines[:17])  # before the compaction
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    with transcript.open("ab") as handle:
        handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines[17:]))
    # The gateway resets the session (2026.7.35): the transcript is renamed, a new one starts.
    transcript.rename(sessions / f"{SESSION_ID}.jsonl.reset.2026-11-22T06-00-00.000Z")
    new_id = "00000000-0000-4000-8000-0000000000bb"
    write_jsonl(sessions / f"{new_id}.jsonl", list(transcript_lines(2, session_id=new_id)))
    store = orjson.loads((sessions / "sessions.json").read_bytes())
    store["agent:main:main"].update(
        sessionId=new_id, updatedAt=store["agent:main:main"]["updatedAt"] + 1
    )
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    day_log = workspace / DAY_LOG
    kept_aside = day_log.rename(tmp_path / "day-log.md")
    day_log.symlink_to(tmp_path / "elsewhere.md")  # this run cannot keep the lost items

    failed = run_cli(capsys, "--state-dir", state, "checkpoint")
    day_log.unlink()
    kept_aside.rename(day_log)
    retried = run_cli(capsys, "--state-dir", state, "checkpoint", "--force")

    assert failed.exit_code == 1 and "is a symlink" in failed.stderr
    assert retried.exit_code == 0, retried.stderr
    assert [row["entry_id"] for row in ledger_rows(isolated_env)] == [COMPACTION_ID]
    assert day_log.read_text().count(f"dropped by compaction `{COMPACTION_ID}`") == 1


def test_memory_folder_leading_out_of_the_workspace_is_refused_not_read(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, workspace = file_era(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    # A day's log out of the workspace that seems to hold the lost items already.
    (outside / Path(DAY_LOG).name).write_text(f"dropped by compaction `{COMPACTION_ID}`\n")
    if (workspace / "memory").exists():
        shutil.rmtree(workspace / "memory")
    (workspace / "memory").symlink_to(outside)

    dry = run_cli(capsys, "--state-dir", state, "checkpoint", "--dry-run")
    result = run_cli(capsys, "--state-dir", state, "checkpoint")

    refused = f"compaction watch: agent main agent:main:main: compaction {COMPACTION_ID}: "
    for run in (dry, result):
        assert run.exit_code == 1
        (line,) = [line for line in run.messages if refused in line]
        assert "outside the workspace" in line and "does not follow links" in line
    assert ledger_rows(isolated_env) == []  # found again once memory/ is back in the workspace


def test_compactions_unknown_agent_exits_2_and_a_removed_agent_keeps_its_ledger(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, workspace = file_era(tmp_path)
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0

    unknown = run_cli(capsys, "--state-dir", state, "compactions", "--agent", "nosuch")
    assert unknown.exit_code == 2
    assert unknown.messages == ["memwarden: unknown agent(s): nosuch (agents found: main)"]

    (state / "agents" / "main").rename(state / "agents" / "ops")
    config = {"agents": {"list": [{"id": "ops", "workspace": str(workspace)}]}}
    write_json5_config(state / "openclaw.json", config)
    removed = run_cli(capsys, "--state-dir", state, "--json", "compactions", "--agent", "MAIN")
    assert removed.exit_code == 0, removed.stderr
    assert [row["compaction"] for row in removed.json()["compactions"]] == [COMPACTION_ID]
    unknown = run_cli(capsys, "--state-dir", state, "compactions", "--agent", "nosuch")
    assert unknown.messages == ["memwarden: unknown agent(s): nosuch (agents found: main, ops)"]


def test_compactions_unknown_session_exits_2_and_filters_matching_nothing_say_so(
    tmp_path, capsys, isolated_env, fixture_clock
):
    state, _ = file_era(tmp_path)
    assert run_cli(capsys, "--state-dir", state, "checkpoint").exit_code == 0
    store = state / "agents" / "main" / "sessions" / "sessions.json"
    sessions = orjson.loads(store.read_bytes())
    sessions["agent:main:ops"] = {"sessionId": "0000000f-0000-4000-8000-000000000000"}
    store.write_bytes(orjson.dumps(sessions))

    for typed in ("main:main", "agent:main:mian"):
        unknown = run_cli(capsys, "--state-dir", state, "compactions", "--session", typed)
        assert unknown.exit_code == 2, typed
        assert unknown.messages == [
            f"memwarden: unknown session: {typed} (neither memwarden's records nor the gateway's "
            "session stores holds it; did you mean agent:main:main?)"
        ]
    stored = run_cli(capsys, "--state-dir", state, "compactions", "--session", "agent:main:ops")
    assert stored.exit_code == 0, stored.stderr
    assert stored.stdout.splitlines() == [
        "compactions: none of the 1 recorded matches --session agent:main:ops"
    ]
    del sessions["agent:main:main"]  # the ledger still knows it
    store.write_bytes(orjson.dumps(sessions))
    listed = run_cli(capsys, "--state-dir", state, "compactions", "--session", "AGENT:MAIN:MAIN")
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.startswith("compactions: 1 recorded, 1 lossy, 3 item(s) lost\n")
