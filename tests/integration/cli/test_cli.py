"""The CLI contract: help everywhere, exit codes, config errors, global options in both places."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from memwarden.cli import build_parser
from memwarden.jobs import JOBS
from memwarden.jobs.common import sentence
from memwarden.process import stopping
from memwarden.process.deadline import call_with_deadline
from memwarden.process.errors import Terminated
from memwarden.store.state import StateDB
from support.cli import run_cli, run_subprocess
from support.deployments import make_sqlite_era_state


def test_help_lists_available_commands_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as raised:
        run_cli(capsys, "--help")
    assert raised.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes: 0 done, 1 done with failures, 2 usage" in out
    for spec in JOBS:
        assert spec.name in out


@pytest.mark.parametrize("name", [spec.name for spec in JOBS])
def test_every_command_help_explains_itself(capsys, name):
    with pytest.raises(SystemExit) as raised:
        run_cli(capsys, name, "--help")
    assert raised.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: memwarden {name}" in out
    assert "--json" in out


def sub_commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """The sub-commands of a parser: name → (its line in the parent's --help, its parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            return {name: (helps.get(name), sub) for name, sub in action.choices.items()}
    return {}


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: spec.name)
def test_every_command_and_sub_command_description_is_its_summary_as_a_sentence(spec):
    parser, _ = build_parser([spec.name])
    summary, command = sub_commands(parser)[spec.name]
    assert summary == spec.summary
    assert command.description == sentence(spec.summary)
    for verb, (verb_summary, sub) in sub_commands(command).items():
        assert verb_summary, f"memwarden {spec.name} {verb} has no line in --help"
        assert sub.description == sentence(verb_summary), f"memwarden {spec.name} {verb}"
        assert sub.description[0].isupper(), f"memwarden {spec.name} {verb}"


@pytest.mark.parametrize("arguments", [(), ("history",), ("install",), ("config",)])
def test_missing_command_or_verb_prints_usage_to_stderr_and_exits_2(capsys, arguments):
    result = run_cli(capsys, *arguments)
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()  # the same one line, time-stamped, for all of them
    assert " ERROR memwarden: the following arguments are required: <" in line
    assert line.endswith(f"(see `{' '.join(('memwarden', *arguments))} --help`)")


@pytest.mark.parametrize(
    ("arguments", "job", "error"),
    [
        (("--json", "checkpoint", "--bogus"), "checkpoint", "unrecognized arguments: --bogus"),
        (("--json", "nosuchcmd"), None, "argument <command>: invalid choice: 'nosuchcmd'"),
        (("--json", "rotate", "--threshold", "abc"), "rotate", "argument --threshold: invalid"),
        (("rotate", "--threshold", "abc", "--json"), "rotate", "argument --threshold: invalid"),
        (("--json", "events", "--since", "-5h"), "events", "argument --since: expected one"),
        (("--json", "--conf", "x", "status"), None, "unrecognized option: --conf"),
        (("history", "list", "--bogus", "--json"), "history", "unrecognized arguments: --bogus"),
        (("--json",), None, "the following arguments are required: <command>"),
        (("--json", "events", "--limit", "0"), "events", "argument --limit: expected a number ≥ 1"),
        (("compactions", "--limit", "-1", "--json"), "compactions", "argument --limit: expected"),
    ],
)
def test_command_line_that_does_not_parse_under_json_prints_the_error_document(
    arguments, job, error
):
    result = run_subprocess(*arguments)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    document = result.json()
    assert document == {"job": job, "exit_code": 2, "error": [document["error"][0]]}
    assert document["error"][0].startswith(error)
    assert line.endswith(f" ERROR memwarden: {document['error'][0]}")


def test_command_line_that_does_not_parse_prints_no_json_without_asking(capsys):
    for arguments in (("checkpoint", "--bogus"), ("status", "--", "--json")):
        result = run_cli(capsys, *arguments)
        assert (result.exit_code, result.stdout) == (2, "")
        assert len(result.stderr.splitlines()) == 1


def test_bad_config_value_exits_2_with_one_line_per_problem(capsys, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[schedule]\nhealth_minutes = "soon"\nbogus = 1\n')
    result = run_cli(capsys, "--config", config, "config", "show")
    assert result.exit_code == 2
    lines = result.messages
    assert len(lines) == 2
    assert lines[0].startswith(f"memwarden: {config}: schedule.health_minutes: expected an integer")


def test_global_options_accepted_after_the_command(capsys, tmp_path):
    result = run_cli(capsys, "config", "show", "--json")
    assert result.exit_code == 0
    data = result.json()
    assert data["job"] == "config"
    assert data["values"]["schedule.checkpoint_minutes"] == 20


def test_config_show_masks_secret_from_environment(capsys, monkeypatch):
    monkeypatch.setenv("MEMWARDEN_GATEWAY_TOKEN", "tok-very-secret")
    result = run_cli(capsys, "config", "show")
    assert result.exit_code == 0
    assert "tok-very-secret" not in result.stdout
    assert "********" in result.stdout


def test_version_runs_as_a_module():
    result = run_subprocess("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("memwarden ")


def test_config_error_with_json_prints_error_document(capsys, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[schedule]\nhealth_minutes = 0\n")
    result = run_cli(capsys, "--config", config, "--json", "config", "show")
    assert result.exit_code == 2
    document = result.json()
    assert document["exit_code"] == 2
    assert "schedule.health_minutes" in document["error"][0]


def test_sigterm_during_a_job_records_the_run_as_failed(tmp_path, isolated_env):
    # A listening socket that never answers keeps the health job waiting on its probe.
    with socket.socket() as silent_gateway:
        silent_gateway.bind(("127.0.0.1", 0))
        silent_gateway.listen()
        env = dict(
            os.environ,
            MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS="30",
            MEMWARDEN_GATEWAY_URL=f"ws://127.0.0.1:{silent_gateway.getsockname()[1]}",
        )
        state = make_sqlite_era_state(tmp_path).state_dir
        command = [sys.executable, "-m", "memwarden", "--state-dir", state, "health"]
        process = subprocess.Popen(
            [*command, "--no-alert"], env=env, stderr=subprocess.PIPE, text=True
        )
        state_db = isolated_env / ".local" / "state" / "memwarden" / "state.db"
        _wait_for_a_started_run(state_db)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    assert process.returncode == 143, stderr
    assert "stopped by SIGTERM" in stderr
    (run,) = StateDB(state_db).last_runs("health", limit=1)
    assert run.exit_code == 143


@pytest.fixture
def stop_request(monkeypatch):
    """The process's stop request, fresh for the test (what the SIGTERM handler sets)."""
    requested = threading.Event()
    monkeypatch.setattr(stopping, "requested", requested)
    return requested


@pytest.mark.parametrize("ending", ["returns", "raises"])
def test_a_stop_whose_exception_was_lost_still_stops_the_job(
    capsys, tmp_path, isolated_env, monkeypatch, stop_request, ending
):
    # Python 3.11 turns the handler's exception into a RuntimeError when it lands in a class's
    # __set_name__, and ignores it in a finalizer: the job then returns or fails on its own.
    import memwarden.jobs.index as index_job

    real_run = index_job.run

    def stopped_inside(context, options):
        stopping.request()
        if ending == "raises":
            raise RuntimeError("Error calling __set_name__ on 'Field' instance 'env'")
        return real_run(context, options)

    monkeypatch.setattr(index_job, "run", stopped_inside)
    state = make_sqlite_era_state(tmp_path)
    result = run_cli(capsys, "--state-dir", state.state_dir, "index")

    assert result.exit_code == 143
    assert "stopped by SIGTERM" in result.stderr
    assert "RuntimeError" not in result.stderr
    state_db = isolated_env / ".local" / "state" / "memwarden" / "state.db"
    (run,) = StateDB(state_db).last_runs("index", limit=1)
    assert run.exit_code == 143


def test_a_stop_lost_in_one_workspace_stops_the_job_before_the_next(
    capsys, tmp_path, isolated_env, monkeypatch, stop_request
):
    import json5

    import memwarden.indexing.refresh as refresh
    from support.deployments import write_json5_config

    state = make_sqlite_era_state(tmp_path)
    other = tmp_path / "other-workspace"
    (other / "memory").mkdir(parents=True)
    (other / "memory" / "notes.md").write_text("[DECISION] kept\n" * 200)
    config_value = json5.loads(state.config_path.read_text())
    config_value["agents"]["list"] = [
        {"id": "main", "default": True},
        {"id": "other", "workspace": str(other)},
    ]
    write_json5_config(state.config_path, config_value)
    indexed = []

    def stopped_in_the_first(context, target, *arguments, **options):
        indexed.append(target.workspace)
        stopping.request()
        raise RuntimeError("Error calling __set_name__ on 'Field' instance 'env'")

    monkeypatch.setattr(refresh, "index_workspace", stopped_in_the_first)
    result = run_cli(capsys, "--state-dir", state.state_dir, "index", "--force")

    assert result.exit_code == 143
    assert "stopped by SIGTERM" in result.stderr and "RuntimeError" not in result.stderr
    assert len(indexed) == 1
    assert not (other / "memory" / "INDEX.md").exists()


def test_a_stop_of_an_earlier_run_in_this_process_does_not_stop_the_next(
    capsys, tmp_path, isolated_env, stop_request
):
    stop_request.set()
    state = make_sqlite_era_state(tmp_path)
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0


def test_a_stop_after_the_job_ended_keeps_its_exit_code_and_record(
    capsys, tmp_path, isolated_env, monkeypatch, stop_request
):
    import memwarden.cli as cli

    real_print = cli._print_result

    def stopped_while_printing(*arguments):
        real_print(*arguments)
        stopping.request()

    monkeypatch.setattr(cli, "_print_result", stopped_while_printing)
    state = make_sqlite_era_state(tmp_path)
    assert run_cli(capsys, "--state-dir", state.state_dir, "index").exit_code == 0
    state_db = isolated_env / ".local" / "state" / "memwarden" / "state.db"
    (run,) = StateDB(state_db).last_runs("index", limit=1)
    assert run.exit_code == 0


def test_a_stop_ends_a_wait_on_a_network_call_without_its_exception(stop_request):
    never_answers = threading.Event()
    threading.Timer(0.2, stop_request.set).start()
    started = time.monotonic()
    with pytest.raises(Terminated):
        call_with_deadline(30, never_answers.wait)
    assert time.monotonic() - started < 5


def _wait_for_a_started_run(state_db, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if state_db.exists():
            with contextlib.closing(sqlite3.connect(state_db, timeout=5)) as connection:
                try:
                    if connection.execute("SELECT count(*) FROM runs").fetchone()[0]:
                        return
                except sqlite3.OperationalError:
                    pass  # the job is still creating its tables
        time.sleep(0.05)
    raise AssertionError(f"no run was recorded in {state_db} within {timeout} s")


@pytest.mark.parametrize("job", ["checkpoint", "index", "maintain"])
def test_dry_run_records_no_run_and_no_event(capsys, tmp_path, isolated_env, job):
    state = make_sqlite_era_state(tmp_path)
    assert run_cli(capsys, "--state-dir", state.state_dir, job, "--dry-run").exit_code == 0
    db = StateDB(isolated_env / ".local" / "state" / "memwarden" / "state.db")
    assert db.connection.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert db.connection.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    assert run_cli(capsys, "--state-dir", state.state_dir, job).exit_code == 0
    assert [run.job for run in db.last_runs(job)] == [job]


def all_parsers(parser: argparse.ArgumentParser):
    yield parser
    for _summary, sub in sub_commands(parser).values():
        yield from all_parsers(sub)


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: spec.name)
def test_no_parser_accepts_abbreviated_options(spec):
    parser, _ = build_parser([spec.name])
    found = list(all_parsers(parser))
    assert len(found) > 1
    assert [p.prog for p in found if p.allow_abbrev] == []


def test_a_reader_that_goes_away_ends_the_run_quietly_with_the_sigpipe_status():
    # `memwarden completion bash | head -1` where head has already exited: no reader is left.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "memwarden", "completion", "bash"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert completed.returncode == 128 + signal.SIGPIPE
    assert completed.stderr == ""
