"""The `memwarden` program ends its process without Python's teardown (memwarden.entry), and
loses nothing for it: the exit code, every byte of output, the exit handlers' work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memwarden.cli import EXIT_BROKEN_PIPE
from memwarden.entry import EXIT_FLUSH_FAILED
from support.cli import CliResult, run_subprocess
from support.deployments import make_sqlite_era_state

MEMWARDEN = (sys.executable, "-m", "memwarden")


def buffered_environment() -> dict[str, str]:
    """The test's environment with Python's output buffered, as an operator's shell has it (the
    output is then written at the end, by the flush this program makes)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def run_python(program: str, **options) -> subprocess.CompletedProcess:
    options.setdefault("stdout", subprocess.PIPE)
    options.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)],
        text=True,
        timeout=60,
        check=False,
        **options,
    )


def test_the_exit_handlers_run_and_the_output_is_flushed_before_the_end():
    completed = run_python(
        """
        import atexit, sys
        from memwarden.entry import end_process, start
        start()
        atexit.register(lambda: print("handler ran", file=sys.stderr))
        sys.stdout.write("x" * 100_000)  # buffered, not written yet
        end_process(3)
        """
    )
    assert completed.returncode == 3
    assert completed.stdout == "x" * 100_000
    assert completed.stderr == "handler ran\n"


def test_a_thread_still_running_is_waited_for_as_python_does():
    completed = run_python(
        """
        import threading, time
        from memwarden.entry import end_process, start
        start()
        def late():
            time.sleep(0.3)
            print("thread done", flush=True)
        threading.Thread(target=late).start()
        end_process(4)
        """
    )
    assert completed.returncode == 4
    assert completed.stdout == "thread done\n"


def test_a_reader_gone_at_the_end_is_the_broken_pipe_status_without_a_word():
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away: the flush at the end fails
    try:
        completed = run_python(
            """
            import sys
            from memwarden.entry import end_process, start
            start()
            sys.stdout.write("lost")
            end_process(0)
            """,
            stdout=writer,
            env=buffered_environment(),
        )
    finally:
        os.close(writer)
    assert completed.returncode == EXIT_BROKEN_PIPE
    assert completed.stderr == ""


@pytest.mark.parametrize(("run_code", "exit_code"), [(0, EXIT_FLUSH_FAILED), (1, 1)])
def test_output_that_cannot_be_written_is_one_line_and_keeps_a_failed_runs_code(
    run_code, exit_code
):
    with open("/dev/full", "w") as full:
        completed = run_python(
            f"""
            import sys
            from memwarden.entry import end_process, start
            start()
            sys.stdout.write("the report")
            end_process({run_code})
            """,
            stdout=full,
            env=buffered_environment(),
        )
    assert completed.returncode == exit_code
    (line,) = completed.stderr.splitlines()
    assert "the output could not be written: no space left on device" in line.lower()


@pytest.mark.parametrize(
    ("arguments", "exit_code"),
    [(("doctor", "--skip-gateway"), 1), (("sessions",), EXIT_FLUSH_FAILED)],
)
def test_a_report_lost_to_a_full_disk_is_one_line_whatever_the_run_found(
    tmp_path, isolated_env, arguments, exit_code
):
    state = make_sqlite_era_state(tmp_path)  # no hooks, no timers: doctor finds actions
    with open("/dev/full", "w") as full:
        completed = subprocess.run(
            [*MEMWARDEN, "--state-dir", str(state.state_dir), *arguments],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=buffered_environment(),
            timeout=60,
            check=False,
        )
    assert completed.returncode == exit_code
    (line,) = completed.stderr.splitlines()
    assert line.endswith(
        " ERROR memwarden: the output could not be written: no space left on device "
        "(the disk is full: free space there)"
    )


def test_output_that_failed_while_the_run_went_on_is_said_once(tmp_path, isolated_env):
    state = make_sqlite_era_state(tmp_path)
    arguments = [*MEMWARDEN, "--state-dir", str(state.state_dir), "--json", "config", "show"]
    options = {"env": buffered_environment(), "timeout": 60, "check": False}
    whole = subprocess.run(arguments, capture_output=True, **options)
    assert len(whole.stdout) > 8192, "more than the buffer: the write fails while the run goes"
    with open("/dev/full", "w") as full:
        completed = subprocess.run(
            arguments, stdout=full, stderr=subprocess.PIPE, text=True, **options
        )
    assert completed.returncode == 1
    (line,) = completed.stderr.splitlines()  # not again when the error document fails too
    assert "no space left on device" in line


def test_a_stop_while_the_process_ends_ends_it_at_once_without_a_traceback():
    # The job's SIGTERM handler raises; once the job is over, a stop kills the process.
    completed = run_python(
        """
        import atexit, os, signal
        from memwarden.entry import end_process, start
        start()
        def terminated(signum, frame):
            raise RuntimeError("the job's handler")
        signal.signal(signal.SIGTERM, terminated)
        atexit.register(lambda: os.kill(os.getpid(), signal.SIGTERM))
        end_process(0)
        """
    )
    assert completed.returncode == -signal.SIGTERM
    assert completed.stderr == ""


def test_the_program_keeps_the_exit_code_and_output(tmp_path, isolated_env):
    state = make_sqlite_era_state(tmp_path)

    def memwarden(*arguments: str) -> CliResult:
        return run_subprocess("--state-dir", state.state_dir, *arguments, timeout=120)

    dry = memwarden("--json", "checkpoint", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert dry.stdout.rstrip().endswith("}")  # the JSON document whole
    run = memwarden("--json", "checkpoint")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.rstrip().endswith("}")
    bad = memwarden("checkpoint", "--agent", "nobody")  # a usage error found by the job
    assert bad.exit_code == 2
    assert "nobody" in bad.stderr


def test_the_collector_is_off_in_the_program_only():
    completed = run_python(
        """
        import atexit, gc, runpy, sys
        import memwarden.cli
        real_main = memwarden.cli.main
        def main():  # a handler of the run's: runs before the end of the process
            atexit.register(lambda: print("collector on" if gc.isenabled() else "collector off"))
            return real_main()
        memwarden.cli.main = main
        sys.argv = ["memwarden", "--version"]
        runpy.run_module("memwarden", run_name="__main__")
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["memwarden 0.3.0", "collector off"]
    assert run_python("import gc, memwarden.cli; print(gc.isenabled())").stdout == "True\n"


@pytest.mark.parametrize(
    ("arguments", "code"), [(["--help"], 0), (["--version"], 0), (["nosuch"], 2)], ids=str
)
def test_runs_argparse_ends_go_through_the_end_of_the_process(arguments, code):
    # Their output too: a reader gone is the broken-pipe status, without Python's warning.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        completed = subprocess.run(
            [*MEMWARDEN, *arguments],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
            env=buffered_environment(),
        )
    finally:
        os.close(writer)
    assert completed.returncode == (code or EXIT_BROKEN_PIPE)
    assert "Exception ignored" not in completed.stderr


def test_a_signal_the_process_started_with_ignored_stays_ignored():
    completed = run_python(
        """
        import atexit, os, signal
        from memwarden.entry import end_process, start
        start()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job of a script
        atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
        atexit.register(lambda: print("handlers ran"))
        end_process(0)
        """
    )
    assert completed.returncode == 0
    assert completed.stdout == "handlers ran\n"
