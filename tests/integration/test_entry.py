"""The `memwarden` program ends its process without Python's teardown (memwarden.entry), and
loses nothing for it: the exit code, every byte of output, the exit handlers' work."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from support.deployments import make_sqlite_era_state


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
        from memwarden.entry import end_process
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
        from memwarden.entry import end_process
        def late():
            time.sleep(0.3)
            print("thread done", flush=True)
        threading.Thread(target=late).start()
        end_process(4)
        """
    )
    assert completed.returncode == 4
    assert completed.stdout == "thread done\n"


def test_output_that_cannot_be_flushed_exits_as_python_does():
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away: the flush at the end fails
    try:
        completed = run_python(
            """
            import sys
            from memwarden.entry import end_process
            sys.stdout.write("lost")
            end_process(0)
            """,
            stdout=writer,
            env={name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"},
        )
    finally:
        os.close(writer)
    assert completed.returncode == 120


def test_the_program_keeps_the_exit_code_output_and_dataclass_cache(tmp_path, isolated_env):
    state = make_sqlite_era_state(tmp_path)
    cache = tmp_path / "cache"
    environment = dict(os.environ, XDG_CACHE_HOME=str(cache))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "memwarden", "--state-dir", str(state.state_dir)]
    status = subprocess.run(
        [*command, "--json", "status"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    assert status.returncode == 0, status.stderr
    assert status.stdout.rstrip().endswith("}")  # the JSON document whole
    assert list((cache / "memwarden" / "dataclasses").iterdir())  # written by an exit handler
    bad = subprocess.run(
        [*command, "checkpoint", "--agent", "nobody"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    assert bad.returncode == 2
    assert "nobody" in bad.stderr


def test_the_collector_is_off_in_the_program_only():
    completed = run_python(
        """
        import gc, runpy, sys
        sys.argv = ["memwarden", "--version"]
        try:
            runpy.run_module("memwarden", run_name="__main__")
        except SystemExit:
            print("collector on" if gc.isenabled() else "collector off")
        """
    )
    assert completed.stdout.splitlines()[-1] == "collector off"
    assert run_python("import gc, memwarden.cli; print(gc.isenabled())").stdout == "True\n"
