"""Is a gateway process running on this machine? Found by its command line, without extra
dependencies: /proc on Linux, `ps` elsewhere (macOS).

Observed with openclaw 2026.9.6 and 2026.7.35 (`openclaw gateway run`): a launcher process
`node …/.bin/openclaw gateway run --port …` and its child, the gateway itself, whose process
title `openclaw-gateway` replaces its whole command line in /proc and `ps`. A bare `openclaw`
title is not the gateway: every CLI command shows one while it runs (`openclaw hooks enable`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memwarden.health.checks import HealthInputs
from memwarden.health.checks.gateway import gateway_base_url, is_loopback_url
from memwarden.health.model import CheckResult, critical, ok
from memwarden.settings.urls import shown_url

KEY = "gateway.process"
INTERPRETERS = frozenset({"node", "nodejs", "bun", "deno", "tsx", "npx", "pnpm", "sh", "bash"})
PS_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    argv: tuple[str, ...]


def check_process(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, look for the gateway's process; return `gateway.process`."""
    if not inputs.health.process_check:
        return []
    base_url = gateway_base_url(inputs)
    if not is_loopback_url(base_url):
        return [
            ok(KEY, f"not checked: the gateway at {shown_url(base_url)} is not on this machine")
        ]
    names = [name.lower() for name in inputs.health.process_names]
    found = [info for info in list_processes() if is_gateway_command(info.argv, names)]
    return [grade_process(found, names)]


def grade_process(found: Sequence[ProcessInfo], names: Sequence[str]) -> CheckResult:
    """Given the matching processes and the names looked for, return `gateway.process`."""
    if not found:
        wanted = " or ".join(names)
        return critical(KEY, f"no gateway process ({wanted} gateway) is running", 0, 1)
    pids = ", ".join(str(info.pid) for info in found[:5])
    return ok(
        KEY, f"gateway process running (pid {pids})", len(found), 1, pids=[i.pid for i in found]
    )


def is_gateway_command(argv: Sequence[str], names: Sequence[str]) -> bool:
    """Given a command line and the gateway's program names, return True if it is the gateway.

    Matches `<name> gateway …`, `<interpreter> …/<name>… gateway …` and a process titled
    `<name>-gateway`.
    """
    if not argv:
        return False
    program = argv[0].rsplit("/", 1)[-1].lower()  # its base name
    if program in {f"{name}-gateway" for name in names}:
        return True
    if "gateway" not in (argument.lower() for argument in argv[1:]):
        return False
    if any(name in program for name in names):
        return True
    if program in INTERPRETERS:
        script = next((arg for arg in argv[1:] if not arg.startswith("-")), "")
        return any(name in script.lower() for name in names)
    return False


def list_processes() -> list[ProcessInfo]:
    """Return the processes of this machine with their command lines (not this process)."""
    found = _from_proc() if Path("/proc/self/cmdline").exists() else _from_ps()
    return [info for info in found if info.pid != os.getpid()]


def _from_proc() -> list[ProcessInfo]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            raw = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue  # gone, or not ours to read
        argv = tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
        if len(argv) == 1 and " " in argv[0]:
            argv = tuple(argv[0].split())  # a title set over argv, as one string with spaces
        if argv:
            found.append(ProcessInfo(int(entry.name), argv))
    return found


def _from_ps() -> list[ProcessInfo]:
    completed = subprocess.run(
        ["ps", "-axww", "-o", "pid=,command="],
        capture_output=True,
        text=True,
        timeout=PS_TIMEOUT_SECONDS,
        check=False,
    )
    found = []
    for line in completed.stdout.splitlines():
        pid_text, _, command = line.strip().partition(" ")
        if pid_text.isdigit() and command.strip():
            found.append(ProcessInfo(int(pid_text), tuple(command.split())))
    if not found and completed.returncode != 0:
        raise OSError(f"ps failed: {completed.stderr.strip() or completed.returncode}")
    return found
