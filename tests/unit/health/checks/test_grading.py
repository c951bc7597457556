"""The pure halves of the checks: grading measured values against thresholds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwarden.health.checks import is_disabled
from memwarden.health.checks.context import grade_context
from memwarden.health.checks.cron import grade_cron
from memwarden.health.checks.disk import FilesystemUsage, grade_disk
from memwarden.health.checks.gateway import grade_rpc, is_loopback_url
from memwarden.health.checks.jobs import JobFreshness, grade_rotation, grade_staleness
from memwarden.health.checks.memory_files import MemoryFile, grade_memory_files
from memwarden.health.checks.process import ProcessInfo, grade_process, is_gateway_command
from memwarden.health.checks.volume import grade_volume
from memwarden.health.model import Status, graded
from memwarden.openclaw.cron import CronRun, parse_run_line
from memwarden.openclaw.sessions import SessionRecord
from memwarden.rotation.lineage import RotationFailure
from memwarden.store.state import Run

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
GIB = 1024**3
NAMES = ("openclaw", "clawdbot")


@pytest.mark.parametrize(
    ("value", "expected", "threshold"),
    [
        (10, Status.OK, 85),
        (85, Status.WARNING, 85),
        (94.9, Status.WARNING, 85),
        (95, Status.CRITICAL, 95),
    ],
)
def test_graded_value_against_warning_and_critical(value, expected, threshold):
    result = graded("disk:/", value, 85, 95, "m")
    assert (result.status, result.threshold) == (expected, threshold)


def test_grade_disk_percent_like_df_and_names_what_it_holds():
    usage = FilesystemUsage(Path("/srv"), ("state dir", "workspace main"), 90 * GIB, 10 * GIB)
    result = grade_disk(usage, 85, 95)
    assert result.key == "disk:/srv"
    assert result.status is Status.WARNING
    assert result.value == 90.0
    assert result.message == "disk /srv: 90% used, 10.0 GiB free (holds state dir, workspace main)"
    many = FilesystemUsage(Path("/"), tuple(f"workspace a{n}" for n in range(5)), 1, 1)
    assert grade_disk(many, 85, 95).message.endswith(
        "(holds workspace a0, workspace a1, workspace a2 and 2 more)"
    )


def test_grade_volume_over_threshold_warns_and_names_largest_agents():
    result = grade_volume({"main": 400 * 1024 * 1024, "ops": 150 * 1024 * 1024}, 500)
    assert result.status is Status.WARNING
    assert result.value == 550.0
    assert "main 400.0 MB, ops 150.0 MB" in result.message
    assert "memwarden maintain" in result.message
    assert grade_volume({"main": 0}, 500).status is Status.OK


def test_grade_memory_files_names_the_worst_few():
    files = [
        MemoryFile("main", Path(f"/w/memory/{n}.md"), n * 1024, f"memory/{n}.md")
        for n in (60, 200, 80)
    ]
    result = grade_memory_files(files, 50, 2, [])
    assert result.status is Status.WARNING
    assert result.message == (
        "3 memory file(s) over 50 KB: main:memory/200.md 200 KB, main:memory/80.md 80 KB and 1 more"
    )
    assert grade_memory_files([], 50, 2, []).status is Status.OK


def test_parse_run_line_accepts_finished_lines_only():
    line = b'{"ts": 1795000000000, "jobId": "j1", "action": "finished", "status": "error", '
    line += b'"error": "boom"}'
    assert parse_run_line(line) == CronRun("j1", 1795000000000, "error", "boom")
    assert parse_run_line(b'{"ts": 1, "jobId": "j1", "action": "started"}') is None
    assert parse_run_line(b'{"ts": "soon", "jobId": "j1", "action": "finished"}') is None
    assert parse_run_line(b'{"ts": 1, "action": "finished"}') is None
    assert parse_run_line(b"not json") is None


def test_grade_cron_counts_only_errors():
    runs = [
        CronRun("j1", 3, "error", "e1"),
        CronRun("j1", 5, "error", "e2"),
        CronRun("j2", 4, "ok", None),
    ]
    result = grade_cron(runs, {"j1": "digest"}, 2, 60)
    assert result.status is Status.WARNING
    assert result.message == "2 cron run(s) failed in the last 60 min (digest x2); last error: e2"
    assert grade_cron(runs, {}, 3, 60).status is Status.OK


def test_grade_staleness_multiples_of_the_interval():
    hour_ago = (NOW - timedelta(hours=1)).timestamp()
    fresh = JobFreshness("checkpoint", 20, (NOW - timedelta(minutes=10)).timestamp())
    late = JobFreshness("checkpoint", 20, hour_ago)
    dead = JobFreshness("checkpoint", 20, (NOW - timedelta(hours=2)).timestamp())
    assert grade_staleness(fresh, NOW, hour_ago, 3, 6).status is Status.OK
    assert grade_staleness(late, NOW, hour_ago, 3, 6).status is Status.WARNING
    result = grade_staleness(dead, NOW, hour_ago, 3, 6)
    assert result.status is Status.CRITICAL
    assert result.value == 6.0
    assert "timer installed" in result.message


def test_grade_staleness_never_ran_measures_from_first_memwarden_run():
    never = JobFreshness("index", 360, None)
    recent_install = (NOW - timedelta(hours=1)).timestamp()
    assert grade_staleness(never, NOW, recent_install, 3, 6).status is Status.OK
    assert grade_staleness(never, NOW, None, 3, 6).status is Status.OK
    long_ago = (NOW - timedelta(hours=19)).timestamp()
    result = grade_staleness(never, NOW, long_ago, 3, 6)
    assert result.status is Status.WARNING
    assert "no success yet (memwarden first ran 19.0 h ago)" in result.message


def run(exit_code: int, error: str | None = None) -> Run:
    return Run(1, "rotate", 0.0, 1.0, exit_code, False, {"error": error} if error else {})


def test_grade_rotation_consecutive_failures_then_per_session():
    assert grade_rotation([run(1, "boom")] * 3, [], 3).status is Status.CRITICAL
    assert grade_rotation([run(1), run(0), run(1)], [], 3).status is Status.OK
    assert grade_rotation([run(1)] * 2, [], 3).status is Status.OK, "fewer runs than the threshold"
    failing = [RotationFailure("agent:main:main", "main", 4, "session-changed", NOW.timestamp())]
    result = grade_rotation([run(0)], failing, 3)
    assert result.status is Status.WARNING
    assert "agent:main:main x4; last error: session-changed" in result.message


def conversation(key: str, tokens: int, window: int) -> SessionRecord:
    unknown = dict.fromkeys(SessionRecord._fields)
    return SessionRecord(
        **unknown
        | {"agent_id": "main", "key": key, "total_tokens": tokens, "context_tokens": window}
    )


def test_grade_context_high_water():
    pressures = [
        conversation("agent:main:main", 190_000, 200_000),
        conversation("agent:main:telegram:direct:1", 100_000, 200_000),
    ]
    result = grade_context(pressures, 0.9)
    assert result.status is Status.WARNING
    assert result.value == 0.95
    assert len(result.details["ratios"]) == 2
    assert grade_context(pressures, 0.96).status is Status.OK


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["openclaw-gateway"], True),
        (["openclaw"], False),
        (["openclaw-hooks"], False),
        (["/usr/bin/openclaw", "gateway", "run", "--port", "1"], True),
        (["node", "/opt/lib/node_modules/openclaw/openclaw.mjs", "gateway", "run"], True),
        (["clawdbot", "gateway"], True),
        (["openclaw", "agent", "--message", "hi"], False),
        (["grep", "openclaw", "gateway"], False),
        (["node", "/srv/app.js", "gateway"], False),
        (["vim", "openclaw-gateway.md"], False),
        ([], False),
    ],
)
def test_is_gateway_command(argv, expected):
    assert is_gateway_command(argv, NAMES) is expected


def test_grade_process_found_or_missing():
    assert grade_process([], NAMES).status is Status.CRITICAL
    found = grade_process([ProcessInfo(42, ("openclaw",))], NAMES)
    assert found.status is Status.OK and "pid 42" in found.message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:18789", True),
        ("http://localhost:1", True),
        ("http://[::1]:1", True),
        ("https://gateway.example.com", False),
        ("http://10.0.0.2:18789", False),
    ],
)
def test_is_loopback_url(url, expected):
    assert is_loopback_url(url) is expected


def test_grade_rpc_ok_only_when_payload_says_so():
    assert grade_rpc({"ok": True, "durationMs": 3}).status is Status.OK
    assert grade_rpc({"ok": False}).status is Status.CRITICAL
    assert grade_rpc("<html>").status is Status.CRITICAL


def test_is_disabled_exact_keys_and_globs():
    assert is_disabled("gateway.process", ["gateway.process"])
    assert is_disabled("disk:/srv", ["disk:*"])
    assert not is_disabled("disk:/srv", ["gateway.*"])
