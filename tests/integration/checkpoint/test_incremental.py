"""Incremental runs over generated transcripts: new turns, nothing new, resets of both eras."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.checkpoint.read import gather
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.transcripts import (
    START,
    assistant_text,
    event_row,
    make_sqlite_agent_db,
    transcript_lines,
    user_text,
    write_jsonl,
)

NOW = START + timedelta(hours=1)
SESSION = "5e551011-0000-4000-8000-000000000001"
NEW_SESSION = "5e551011-0000-4000-8000-000000000002"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


class FileAgent:
    """A file-era gateway state with one agent `main` whose main session we can grow."""

    def __init__(self, root: Path, turns: int = 4) -> None:
        self.state = root / "state"
        self.workspace = root / "workspace"
        self.workspace.mkdir(parents=True)
        self.sessions = self.state / "agents" / "main" / "sessions"
        config = {"agents": {"list": [{"id": "main", "workspace": str(self.workspace)}]}}
        self.state.mkdir(parents=True)
        (self.state / "openclaw.json").write_bytes(orjson.dumps(config))
        self.lines = list(transcript_lines(turns, session_id=SESSION))
        self.session_id = SESSION
        self.write()

    @property
    def transcript(self) -> Path:
        return self.sessions / f"{self.session_id}.jsonl"

    def write(self, updated: datetime = NOW) -> None:
        write_jsonl(self.transcript, self.lines)
        store = {
            "agent:main:main": {
                "sessionId": self.session_id,
                "updatedAt": int(updated.timestamp() * 1000),
            }
        }
        (self.sessions / "sessions.json").write_bytes(orjson.dumps(store))

    def append(self, *lines: dict) -> None:
        self.lines.extend(lines)
        with self.transcript.open("ab") as handle:
            handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))

    def memory(self, name: str) -> str:
        return (self.workspace / "memory" / name).read_text(encoding="utf-8")

    def reset(self) -> None:
        """What a file-era reset does: rename the transcript (at 05:25), begin a new one."""
        os.rename(
            self.transcript, self.sessions / f"{SESSION}.jsonl.reset.2026-11-22T05-25-00.000Z"
        )
        self.session_id = NEW_SESSION
        self.lines = list(transcript_lines(0, session_id=NEW_SESSION))
        self.write()


def turn(number: int, at: datetime, text: str | None = None) -> list[dict]:
    """Return the user and assistant lines of one turn at `at`."""
    stamp = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    millis = int(at.timestamp() * 1000)
    return [
        {
            "type": "message",
            "id": f"nu{number}",
            "timestamp": stamp,
            "message": {"role": "user", "content": text or user_text(number), "timestamp": millis},
        },
        {
            "type": "message",
            "id": f"na{number}",
            "timestamp": stamp,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": assistant_text(number)}],
                "timestamp": millis + 500,
            },
        },
    ]


def checkpoint(capsys, agent, *extra: str):
    return run_cli(capsys, "--state-dir", agent.state, "--json", "checkpoint", *extra)


def entries_in(daily: str) -> int:
    return daily.count("\n### ")


def test_checkpoint_new_turn_appends_one_entry_with_only_the_new_messages(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    agent.append(*turn(10, START + timedelta(minutes=30), "please rotate the logs now"))

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["outcome"] == "written"
    assert outcome["counts"]["new_messages"] == 2
    daily = agent.memory("2026-11-22.md")
    assert entries_in(daily) == 2
    last_entry = daily.rsplit("\n### ", 1)[1]
    assert last_entry.startswith("05:30 · checkpoint · `agent:main:main`\n")
    assert "1 request, 1 reply\n" in last_entry
    assert "- 05:30 user: please rotate the logs now\n" in last_entry
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert "please rotate the logs now" in context


def test_checkpoint_nothing_new_leaves_files_alone_and_force_rewrites(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    context = agent.workspace / "memory" / "ACTIVE_CONTEXT.md"
    stat = context.stat()
    daily = agent.memory("2026-11-22.md")

    idle = checkpoint(capsys, agent)
    forced = checkpoint(capsys, agent, "--force")

    assert idle.json()["agents"][0]["outcome"] == "unchanged"
    assert forced.json()["agents"][0]["outcome"] == "written"
    assert forced.json()["agents"][0]["files"] == [str(context)]
    assert context.stat().st_ino != stat.st_ino  # replaced by a new file
    assert agent.memory("2026-11-22.md") == daily


def test_checkpoint_deleted_context_file_is_written_again_though_nothing_is_new(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    (agent.workspace / "memory" / "ACTIVE_CONTEXT.md").unlink()

    result = checkpoint(capsys, agent)

    assert result.json()["agents"][0]["outcome"] == "written"
    assert user_text(3).strip() in agent.memory("ACTIVE_CONTEXT.md")
    assert entries_in(agent.memory("2026-11-22.md")) == 1


def test_checkpoint_only_non_message_lines_new_appends_no_daily_entry(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    agent.append({"type": "custom", "id": "c1", "timestamp": "2026-11-22T05:40:00Z"})

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["outcome"] == "unchanged"
    assert outcome["counts"]["entries_read"] == 1
    assert outcome["counts"]["new_messages"] == 0
    assert entries_in(agent.memory("2026-11-22.md")) == 1


def test_checkpoint_new_lines_that_change_nothing_write_nothing(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    with agent.transcript.open("ab") as handle:
        handle.write(b"this line is not JSON\n")

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["outcome"] == "unchanged"
    assert outcome["reason"] == "new lines, but nothing that changes the files"
    assert outcome["counts"]["skipped_lines"] == 1


def test_checkpoint_rewritten_transcript_counts_only_messages_after_the_last_seen(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    agent.lines += turn(20, START + timedelta(minutes=40))
    agent.write()  # a new file (new inode) with the old lines and one new turn

    result = checkpoint(capsys, agent)

    assert result.json()["agents"][0]["counts"]["new_messages"] == 2
    assert entries_in(agent.memory("2026-11-22.md")) == 2


def test_checkpoint_partial_last_line_waits_for_its_newline(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    line = orjson.dumps(turn(30, START + timedelta(minutes=50))[0])
    with agent.transcript.open("ab") as handle:
        handle.write(line[:40])

    partial = checkpoint(capsys, agent)
    with agent.transcript.open("ab") as handle:
        handle.write(line[40:] + b"\n")
    complete = checkpoint(capsys, agent)

    assert partial.json()["agents"][0]["counts"]["new_messages"] == 0
    assert complete.json()["agents"][0]["counts"]["new_messages"] == 1
    assert entries_in(agent.memory("2026-11-22.md")) == 2


def test_checkpoint_messages_across_midnight_go_to_both_days(tmp_path, capsys, monkeypatch):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    agent.append(*turn(40, datetime(2026, 11, 22, 23, 50, tzinfo=UTC)))
    agent.append(*turn(41, datetime(2026, 11, 23, 0, 10, tzinfo=UTC)))
    monkeypatch.setattr(JobContext, "now", lambda self: datetime(2026, 11, 23, 0, 20, tzinfo=UTC))

    checkpoint(capsys, agent)

    before, after = agent.memory("2026-11-22.md"), agent.memory("2026-11-23.md")
    assert entries_in(before) == 2
    assert "### 23:50 · checkpoint" in before
    assert after.startswith("# 2026-11-23\n")
    assert after.count("### ") == 1
    assert "### 00:10 · checkpoint" in after
    assert "- 00:10 user: " + user_text(41).strip() in after
    assert user_text(40).strip() not in after


def test_checkpoint_daily_log_appends_to_the_agents_own_file(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    memory = agent.workspace / "memory"
    memory.mkdir()
    own = "# Notes of the day\n\n- met Alice about the migration\n"
    (memory / "2026-11-22.md").write_text(own)

    checkpoint(capsys, agent)

    daily = agent.memory("2026-11-22.md")
    assert daily.startswith(own)
    assert "Daily log of agent" not in daily
    assert entries_in(daily) == 1


def test_checkpoint_leaves_a_handoff_file_it_did_not_write_and_says_how_to_resolve_it(
    tmp_path, capsys
):
    agent = FileAgent(tmp_path)
    memory = agent.workspace / "memory"
    memory.mkdir()
    theirs = memory / "ACTIVE_CONTEXT.md"
    own = "# My notes\nIMPORTANT: prod DB password rotation on Friday.\n"
    theirs.write_text(own)
    theirs.chmod(0o644)

    result = checkpoint(capsys, agent)

    assert result.exit_code == 1
    assert theirs.read_text() == own
    assert theirs.stat().st_mode & 0o777 == 0o644
    assert entries_in(agent.memory("2026-11-22.md")) == 1  # the daily log goes on
    (outcome,) = result.json()["agents"]
    assert outcome["files"] == [str(memory / "2026-11-22.md")]
    assert outcome["kept_in_place"] == str(theirs)
    (problem,) = outcome["warnings"]
    assert problem.startswith(f"{theirs}: exists and was not written by memwarden")
    assert problem.endswith("then run `memwarden checkpoint --force`")
    assert problem in result.stderr

    theirs.rename(agent.workspace / "MY_NOTES.md")
    resolved = checkpoint(capsys, agent, "--force")

    assert resolved.exit_code == 0, resolved.stderr
    assert user_text(3).strip() in agent.memory("ACTIVE_CONTEXT.md")
    assert entries_in(agent.memory("2026-11-22.md")) == 1


def test_checkpoint_takes_over_the_reference_scripts_active_context(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    memory = agent.workspace / "memory"
    memory.mkdir()
    (memory / "ACTIVE_CONTEXT.md").write_text(
        "# Active Context — main\n"
        "> Auto-generated by memory-checkpoint at 2026-11-21T10:00:00.000Z\n"
        "> Session: 1234\n> Messages captured: 60\n\n## Recent Requests\n- old\n"
    )

    result = checkpoint(capsys, agent)

    assert result.exit_code == 0, result.stderr
    assert "> - session: `agent:main:main`" in agent.memory("ACTIVE_CONTEXT.md")


def test_checkpoint_file_era_reset_carries_the_conversation_and_logs_its_unseen_tail(
    tmp_path, capsys
):
    agent = FileAgent(tmp_path)
    agent.append(*turn(49, START + timedelta(minutes=10), "[DECISION] keep the blue theme"))
    checkpoint(capsys, agent)
    agent.append(*turn(50, START + timedelta(minutes=20), "last words before the reset"))
    agent.reset()

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["outcome"] == "written"
    assert outcome["previous_session_id"] == SESSION
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert f"(id `{NEW_SESSION}`" in context
    assert "[DECISION] keep the blue theme" in context.split("## Open Tasks")[0]
    assert "last words before the reset" in context
    assert user_text(0).strip() in context  # the conversation since it began
    daily = agent.memory("2026-11-22.md")
    assert entries_in(daily) == 2
    assert f"- session `{SESSION}`: 1 request, 1 reply\n" in daily
    assert "- 05:20 user: last words before the reset\n" in daily
    assert daily.count("keep the blue theme") == 1


def test_checkpoint_conversation_goes_on_across_file_era_resets(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    agent.reset()
    checkpoint(capsys, agent)

    agent.append(*turn(60, START + timedelta(minutes=30), "- [ ] write the release notes"))
    after_reset = checkpoint(capsys, agent)
    agent.append(*turn(61, START + timedelta(minutes=31), "- [x] write the release notes"))
    closed = checkpoint(capsys, agent)

    assert after_reset.json()["agents"][0]["previous_session_id"] is None
    assert after_reset.json()["agents"][0]["counts"]["open_tasks"] == 1
    assert closed.json()["agents"][0]["counts"]["open_tasks"] == 0
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert "> - conversation: since 2026-11-22T05:00+00:00, 12 messages, 1 reset" in context
    assert user_text(0).strip() in context and "- [x] write the release notes" in context
    assert "## Open Tasks\n_None._" in context


def sqlite_agent(root: Path, lines: list[dict], key: str = "agent:main:main") -> FileAgent:
    """A SQLite-era state for agent `main` holding one session with `lines`."""
    agent = FileAgent.__new__(FileAgent)
    agent.state = root / "state"
    agent.workspace = root / "workspace"
    agent.workspace.mkdir(parents=True)
    database = agent.state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    make_sqlite_agent_db(database, {SESSION: lines}, compress=True, session_keys={SESSION: key})
    config = {"agents": {"list": [{"id": "main", "workspace": str(agent.workspace)}]}}
    (agent.state / "openclaw.json").write_bytes(orjson.dumps(config))
    agent.database = database
    return agent


def append_rows(database: Path, lines: list[dict]) -> None:
    import sqlite3

    with sqlite3.connect(database) as connection:
        (last,) = connection.execute("SELECT max(seq) FROM transcript_events").fetchone()
        connection.executemany(
            "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                event_row(SESSION, last + 1 + index, orjson.dumps(line), 0)
                for index, line in enumerate(lines)
            ],
        )
    connection.close()


def test_checkpoint_sqlite_era_in_place_reset_carries_the_conversation(tmp_path, capsys):
    agent = sqlite_agent(tmp_path, list(transcript_lines(6, session_id=SESSION)))
    checkpoint(capsys, agent)
    reset = {"type": "reset", "id": "r1", "timestamp": "2026-11-22T05:30:00.000Z", "reason": "new"}
    append_rows(agent.database, [reset, *turn(70, START + timedelta(minutes=31), "fresh start")])

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["outcome"] == "written"
    assert outcome["counts"]["messages"] == 14
    assert outcome["counts"]["resets"] == 1
    assert outcome["counts"]["new_messages"] == 2
    assert outcome["counts"]["entries_read"] == 3  # only the new rows
    context = agent.memory("ACTIVE_CONTEXT.md")
    before, _, after = context.partition("- _2026-11-22T05:30+00:00: the session was reset here_")
    assert user_text(5).strip() in before and "fresh start" in after
    assert entries_in(agent.memory("2026-11-22.md")) == 2


def long_conversation() -> list[dict]:
    """150 turns, a reset, one more turn: 304 lines."""
    lines = list(transcript_lines(150, session_id=SESSION))
    lines.append(
        {"type": "reset", "id": "r1", "timestamp": "2026-11-22T05:30:00Z", "reason": "new"}
    )
    return lines + turn(180, START + timedelta(minutes=32), "after a long pause")


def test_checkpoint_first_run_reads_the_recent_lines_of_a_long_transcript(
    tmp_path, capsys, monkeypatch
):
    # A transcript past what a first run reads whole (it began before memwarden watched it).
    monkeypatch.setattr(gather, "FIRST_SIGHT_WHOLE_BYTES", 10_000)
    agent = sqlite_agent(tmp_path, long_conversation())

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["counts"]["entries_read"] == 60  # its last 30 turns hold requests enough
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert "after a long pause" in context and user_text(149).strip() in context
    assert user_text(100).strip() not in context  # before the lines a first run reads
    assert "- _2026-11-22T05:30+00:00: the session was reset here_" in context


def test_checkpoint_first_run_reads_a_small_older_conversation_whole(tmp_path, capsys):
    # Under FIRST_SIGHT_WHOLE_BYTES: its handoff holds it from its first turn, while its daily
    # log gets only the messages of its recent lines, as a first read of them would give.
    agent = sqlite_agent(tmp_path, long_conversation())

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["counts"]["entries_read"] == 304
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert "> - conversation: since 2026-11-22T05:00+00:00, 302 messages, 1 reset" in context
    assert "after a long pause" in context
    memory = agent.workspace / "memory"
    daily = "".join(path.read_text() for path in memory.glob("20??-??-??.md"))
    assert user_text(149).strip() in daily and "after a long pause" in daily
    assert user_text(100).strip() not in daily


def tool_loop(number: int, calls: int, at: datetime) -> list[dict]:
    """Return a turn in which the assistant runs `calls` tools before it answers."""
    stamp = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    request, reply = turn(number, at)
    lines = [request]
    for call in range(calls):
        block = {"type": "toolCall", "id": f"c{call}", "name": "exec", "arguments": {}}
        lines.append(
            {
                "type": "message",
                "id": f"t{number}-{call}",
                "timestamp": stamp,
                "message": {"role": "assistant", "content": [block]},
            }
        )
        lines.append(
            {
                "type": "message",
                "id": f"r{number}-{call}",
                "timestamp": stamp,
                "message": {"role": "toolResult", "content": [{"type": "text", "text": "ok"}]},
            }
        )
    return [*lines, reply]


def test_checkpoint_long_tool_loops_keep_every_request(tmp_path, capsys):
    agent = FileAgent(tmp_path, turns=0)
    for number in range(6):
        agent.append(*tool_loop(number, 15, START + timedelta(minutes=number)))

    result = checkpoint(capsys, agent)

    (outcome,) = result.json()["agents"]
    assert outcome["counts"]["entries_read"] == 193  # the whole transcript
    context = agent.memory("ACTIVE_CONTEXT.md")
    assert all(user_text(number).strip() in context for number in range(6))
    assert outcome["counts"]["tools"] == 90
    assert "- exec × 90\n" in context  # noqa: RUF001
    # Its daily log gets the recent lines a first read takes: four times 60 when the last 60
    # hold fewer than 5 requests.
    daily = "".join(path.read_text() for path in (agent.workspace / "memory").glob("20??-*.md"))
    assert all(user_text(number).strip() in daily for number in range(6))


def test_checkpoint_daily_log_off_its_position_gets_the_requests_of_long_tool_loops(
    tmp_path, capsys
):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    for number in range(10, 16):
        agent.lines += tool_loop(number, 15, START + timedelta(minutes=30 + number))
    copy = agent.transcript.with_name("copy.jsonl")
    write_jsonl(copy, agent.lines)
    os.replace(copy, agent.transcript)  # a new file: the read positions no longer fit

    result = checkpoint(capsys, agent)

    assert result.json()["agents"][0]["outcome"] == "written"
    # Its messages newer than the last entry logged, in the recent lines a first read takes
    # (four times 60 when the last 60 hold fewer than 5 requests), as the handoff has them.
    daily = agent.memory("2026-11-22.md")
    assert all(user_text(number).strip() in daily for number in range(10, 16))
    assert all(
        user_text(number).strip() in agent.memory("ACTIVE_CONTEXT.md") for number in (10, 15)
    )
    assert entries_in(daily) == 2


def test_checkpoint_writes_each_active_conversation_to_its_own_file(tmp_path, capsys):
    agent = FileAgent(tmp_path)
    other = "5e551011-0000-4000-8000-0000000000aa"
    write_jsonl(agent.sessions / f"{other}.jsonl", transcript_lines(3, session_id=other))
    store = orjson.loads((agent.sessions / "sessions.json").read_bytes())
    store["agent:main:telegram:direct:42"] = {
        "sessionId": other,
        "updatedAt": int(NOW.timestamp() * 1000),
    }
    (agent.sessions / "sessions.json").write_bytes(orjson.dumps(store))

    result = run_cli(capsys, "--state-dir", agent.state, "--json", "checkpoint")

    keys = [outcome["session_key"] for outcome in result.json()["agents"]]
    assert keys == ["agent:main:main", "agent:main:telegram:direct:42"]
    main, peer = (
        agent.memory("ACTIVE_CONTEXT.md"),
        agent.memory("sessions/main.telegram.direct.42.md"),
    )
    assert "(id `" + SESSION in main and other not in main
    assert "(id `" + other in peer and SESSION not in peer
    handoff = agent.workspace / "memory" / "ACTIVE_CONTEXT.md"
    before = (handoff.stat().st_ino, handoff.stat().st_mtime_ns)
    with (agent.sessions / f"{other}.jsonl").open("ab") as transcript:
        for line in turn(90, START + timedelta(minutes=40), "only the peer said this"):
            transcript.write(orjson.dumps(line) + b"\n")
    store["agent:main:telegram:direct:42"]["updatedAt"] += 1000
    (agent.sessions / "sessions.json").write_bytes(orjson.dumps(store))

    again = checkpoint(capsys, agent)

    outcomes = {item["session_key"]: item["outcome"] for item in again.json()["agents"]}
    assert outcomes == {"agent:main:main": "unchanged", "agent:main:telegram:direct:42": "written"}
    assert (handoff.stat().st_ino, handoff.stat().st_mtime_ns) == before
    assert "only the peer said this" in agent.memory("sessions/main.telegram.direct.42.md")
    assert "only the peer said this" not in agent.memory("ACTIVE_CONTEXT.md")
    daily = agent.memory("2026-11-22.md")
    assert "`agent:main:main`" in daily and "`agent:main:telegram:direct:42`" in daily


def test_checkpoint_from_a_second_storage_folder_logs_no_entry_twice(tmp_path, capsys, monkeypatch):
    # The read positions live in memwarden's state: a second state (a gateway checkpointed from
    # another storage folder, a restored backup) reads the same messages again.
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)
    before = agent.memory("2026-11-22.md")
    monkeypatch.setenv("MEMWARDEN_GENERAL_STORAGE_DIR", str(tmp_path / "other-storage"))

    result = checkpoint(capsys, agent)

    assert result.exit_code == 0, result.stderr
    assert agent.memory("2026-11-22.md") == before
    assert entries_in(before) == 1


def test_checkpoint_storage_whose_path_has_uri_characters_works_and_leaves_nothing_beside(
    tmp_path, capsys, monkeypatch
):
    storage = tmp_path / "mw#1?x=%20"
    monkeypatch.setenv("MEMWARDEN_GENERAL_STORAGE_DIR", str(storage))
    agent = FileAgent(tmp_path / "deployment")
    checkpoint(capsys, agent)
    agent.append(*turn(10, START + timedelta(minutes=30), "[DECISION] keep the blue theme"))

    result = checkpoint(capsys, agent)

    assert result.exit_code == 0, result.stderr
    assert "[DECISION] keep the blue theme" in agent.memory("ACTIVE_CONTEXT.md")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["deployment", storage.name]


def test_checkpoint_reads_a_conversation_begun_since_the_last_run_from_its_first_line(
    tmp_path, capsys
):
    agent = FileAgent(tmp_path)
    checkpoint(capsys, agent)  # memwarden watches this agent from now on
    peer, key = "5e551011-0000-4000-8000-0000000000bb", "agent:main:telegram:direct:7"
    lines = [*transcript_lines(0, session_id=peer), *turn(0, START, "[DECISION] keep Ada")]
    for number in range(1, 80):
        lines += turn(number, START + timedelta(seconds=number))
    write_jsonl(agent.sessions / f"{peer}.jsonl", lines)
    store = orjson.loads((agent.sessions / "sessions.json").read_bytes())
    store[key] = {"sessionId": peer, "updatedAt": int(NOW.timestamp() * 1000)}
    (agent.sessions / "sessions.json").write_bytes(orjson.dumps(store))

    result = checkpoint(capsys, agent)

    outcomes = {outcome["session_key"]: outcome for outcome in result.json()["agents"]}
    assert outcomes[key]["counts"]["entries_read"] == len(lines)
    handoff = agent.memory("sessions/main.telegram.direct.7.md")
    assert "[DECISION] keep Ada" in handoff.split("## Open Tasks")[0]
