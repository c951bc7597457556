"""`memwarden sessions`: the read-only listing of what memwarden discovers, both storage eras."""

from __future__ import annotations

from support.cli import run_cli
from support.deployments import make_file_era_state, make_sqlite_era_state


def sessions_by_key(data: dict, agent: str = "main") -> dict[str, dict]:
    (entry,) = [a for a in data["agents"] if a["id"] == agent]
    return {session["key"]: session for session in entry["sessions"]}


def test_sessions_json_sqlite_era_lists_fixture_sessions(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    result = run_cli(capsys, "--state-dir", state.state_dir, "sessions", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.json()
    (agent,) = data["agents"]
    assert (agent["id"], agent["era"], agent["workspace"]) == (
        "main",
        "sqlite",
        str(state.workspace),
    )
    sessions = sessions_by_key(data)
    assert set(sessions) == {"agent:main:main", "agent:main:hooktest", "agent:main:agentrpc"}
    main = sessions["agent:main:main"]
    assert main["kind"] == "main"
    assert main["session_id"] == "b5974d71-c717-4e69-b2ad-af312d36f9f1"
    assert (main["total_tokens"], main["total_tokens_fresh"]) == (1234, False)
    assert main["transcript"]["kind"] == "sqlite"
    assert sessions["agent:main:hooktest"]["kind"] == "named"
    assert sessions["agent:main:hooktest"]["total_tokens"] == 0


def test_sessions_json_file_era_lists_fixture_sessions(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    result = run_cli(capsys, "--state-dir", state.state_dir, "sessions", "--json")
    assert result.exit_code == 0, result.stderr
    sessions = sessions_by_key(result.json())
    assert set(sessions) == {"agent:main:main", "agent:main:fixture", "agent:main:hot"}
    assert sessions["agent:main:main"]["session_id"] == "f02065fb-f8d4-455b-b680-d2e5c4e5cf9b"
    assert sessions["agent:main:main"]["total_tokens"] == 0
    fixture = sessions["agent:main:fixture"]
    assert (fixture["total_tokens"], fixture["context_tokens"]) == (5555, 32000)
    assert sessions["agent:main:hot"]["total_tokens"] == 999
    assert fixture["transcript"]["path"] == str(
        state.sessions_dir / "33333333-2222-4333-8444-555555555555.jsonl"
    )


def test_sessions_human_output_names_agent_and_kinds(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    result = run_cli(capsys, "--state-dir", state.state_dir, "sessions")
    assert result.exit_code == 0
    assert "agent main (default): file era" in result.stdout
    assert "agent:main:fixture" in result.stdout
    assert "context 5,555 of 32,000 tokens (gateway count, fresh)" in result.stdout


def test_sessions_broken_gateway_config_is_one_line_exit_2(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    state.config_path.write_text("{ gateway: { port: 1, }\n")
    result = run_cli(capsys, "--state-dir", state.state_dir, "sessions")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert str(state.config_path) in line and "restore" in line


def test_sessions_corrupt_store_fails_that_agent_only(capsys, tmp_path):
    state = make_file_era_state(tmp_path)
    state.session_store.write_text("{not json")
    result = run_cli(capsys, "--state-dir", state.state_dir, "sessions", "--json")
    assert result.exit_code == 1
    (agent,) = result.json()["agents"]
    assert "sessions.json" in agent["error"]


def test_sessions_unknown_agent_exits_2_as_checkpoint_does(capsys, tmp_path):
    state = make_sqlite_era_state(tmp_path)
    for command in ("sessions", "checkpoint"):
        result = run_cli(
            capsys, "--state-dir", state.state_dir, command, "--agent", "main", "--agent", "nosuch"
        )
        assert result.exit_code == 2, command
        assert result.messages == ["memwarden: unknown agent(s): nosuch (agents found: main)"]
        assert result.stdout == ""
