"""Benchmark: hostile and huge inputs, and what bounds each (issue 14).

Targets (issue 14): a session store of 100k entries costs `sessions`, `checkpoint` and `health`
≤ 2 s each; a 5 MB JSON5 gateway config ≤ 1 s per command. The other figures have no target of
their own: they show that an input which used to run for minutes (a one-line 5 MB memory file,
a 131 KB zstd row claiming gigabytes, a catastrophic redaction pattern, a server sending a byte a
second, a SIGTERM during a run) now ends within its limit (docs/operations.md, "Limits").

Each figure is a whole `python -m memwarden` child process (interpreter start included). The
inputs are generated once under bench/.fleet/limits/ and reused.
Run: `.venv/bin/python bench/run.py limits` (writes bench/REPORT.md), or this file alone.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from bench_health import healthy_gateway  # noqa: E402
from harness import (  # noqa: E402
    PYTHON,
    Measurement,
    Report,
    Target,
    child_environment,
    measure,
    memwarden_accepting_1,
)

from support.drip_server import DripServer, http_body_drip, http_headers_drip  # noqa: E402
from support.transcripts import (  # noqa: E402
    MINIMAL_NAVIGATION_JSON,
    SESSION_NODES_SQL,
    SESSION_WINDOWS_SQL,
    TRANSCRIPT_EVENTS_SQL,
    transcript_lines,
    zstd,
)

WORK = BENCH_DIR / ".fleet" / "limits"
ENTRIES = 100_000
CONFIG_BYTES = 5 * 1024 * 1024
MEMORY_LINE_BYTES = 5 * 1024 * 1024
BOMB_BYTES = 1 << 30
TIMEOUT_S = 1.0
REPEAT = 3
STORE_TARGET = Target(wall_s=2.0)
CONFIG_TARGET = Target(wall_s=1.0)
# Of every 10 entries: 6 automation (cron runs, sub-agents, heartbeats), 4 conversations.
KEY_SHAPES = (
    "cron:job{n}:run:{id}",
    "cron:job{n}:run:{id}",
    "cron:job{n}:run:{id}",
    "subagent:{id}",
    "subagent:{id}",
    "telegram:direct:{n}:heartbeat",
    "telegram:direct:{n}",
    "slack:group:c{n}",
    "discord:channel:{n}:thread:{id}",
    "whatsapp:direct:+{n}",
)


def run(report: Report) -> None:
    section = report.section(
        "limits",
        "Huge and hostile inputs as an adversarial review produced them (issue 14), each "
        "through a whole `memwarden -q …` child process, medians of "
        f"{REPEAT} runs after one warm-up run. Stores of {ENTRIES:,} entries: 6 in 10 are "
        "automation (cron runs, sub-agents, heartbeats), the rest conversations; every entry "
        "has its transcript (file era: a small `.jsonl` each, named by an absolute "
        "`sessionFile` as the gateway writes it), the main session a real one; their update "
        "times are moved to now before the runs, so about 5,700 conversations are active within "
        "`checkpoint.staleness_hours` however old the inputs are. Before each checkpoint the "
        "store is touched, as the gateway does all day, so the run cannot be skipped as "
        "unchanged. The gateway's /healthz answers on 127.0.0.1 (a stand-in).",
    )
    file_state = _file_store_state()
    sqlite_state = _sqlite_store_state()
    results: list[Measurement] = []
    targets: dict[str, Target] = {}
    with healthy_gateway() as gateway_url:
        for era, state in (("file era", file_state), ("SQLite era", sqlite_state)):
            env = _environment(MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=gateway_url)
            for command, argv, prepare in (
                ("sessions", ["sessions"], None),
                ("checkpoint", ["checkpoint"], _touch_store(state)),
                ("health", ["health"], None),
            ):
                name = f"{ENTRIES // 1000}k-entry store ({era}): {command}"
                results.append(
                    measure(name, _argv(state, *argv), env=env, repeat=REPEAT, prepare=prepare)
                )
                targets[name] = STORE_TARGET
        json_name = f"{ENTRIES // 1000}k-entry store (file era): sessions --json (all of them)"
        results.append(
            measure(
                json_name,
                _argv(file_state, "--json", "sessions"),
                env=_environment(),
                repeat=REPEAT,
            )
        )
    for kind, state in (("JSON5", _config_state(json5=True)), ("JSON", _config_state(json5=False))):
        name = f"5 MB {kind} openclaw.json: sessions"
        results.append(measure(name, _argv(state, "sessions"), env=_environment(), repeat=REPEAT))
        targets[name] = CONFIG_TARGET
    results += _hostile_inputs()
    section.measurements(results, targets)
    stop_s = _sigterm_seconds()
    section.headline(
        "SIGTERM during a checkpoint: exit", "≤ 2 s", f"{stop_s * 1000:.0f} ms", stop_s <= 2
    )
    section.text(
        f"- SIGTERM: a checkpoint of the {ENTRIES // 1000}k-entry store waiting for another "
        f"run's memory lock gets SIGTERM; from the signal to the process's exit: "
        f"{stop_s * 1000:.0f} ms (the run is recorded with exit 143).\n"
        "- The zstd row claims 1 GiB in 32 KB; decompression stops at the gateway's 4 MiB per "
        "event, the row is skipped and reported (a warning naming it).\n"
        "- The redaction pattern `(a|aa)+$` meets forty a's and a b: it is stopped after 1 s of "
        "CPU, the session fails naming the rule, nothing is written.\n"
        f"- The dripping servers send a byte every 0.2 s without end; the probe and Slack "
        f"timeouts are {TIMEOUT_S:g} s each and are deadlines on the whole call."
    )


# --- the inputs -----------------------------------------------------------------------------------


def _built(name: str, build: Callable[[Path], None]) -> Path:
    """Return the state dir of input `name`, built by `build(root)` unless already there."""
    root = WORK / name
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        build(root)
        (root / ".complete").touch()
    return root / "state"


def _file_store_state() -> Path:
    state = _built(f"file-store-{ENTRIES}", _build_file_store)
    _bring_file_store_up_to_date(state / "agents" / "main" / "sessions" / "sessions.json")
    return state


def _build_file_store(root: Path) -> None:
    state = root / "state"
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (root / "workspace").mkdir()
    store: dict[str, Any] = {}
    small = _small_transcript()
    for key, session_id, updated in _entries():
        path = sessions / f"{session_id}.jsonl"
        path.write_bytes(small)
        store[key] = _entry(session_id, updated) | {"sessionFile": str(path)}
    main_id = str(uuid.UUID(int=1, version=4))
    main_path = sessions / f"{main_id}.jsonl"
    main_lines = transcript_lines(200, session_id=main_id)
    main_path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in main_lines))
    store["agent:main:main"] = _entry(main_id, _now_ms()) | {"sessionFile": str(main_path)}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    _write_config(state, root / "workspace")


def _sqlite_store_state() -> Path:
    state = _built(f"sqlite-store-{ENTRIES}", _build_sqlite_store)
    _bring_sqlite_store_up_to_date(state / "agents" / "main" / "agent" / "openclaw-agent.sqlite")
    return state


# A store built hours ago has fewer conversations within checkpoint.staleness_hours (4 h: 5,736
# when built) than one built now, and a checkpoint has less to look at: before the runs, every
# update time moves by as much as the store aged, so each run sees the store as it was built.
def _bring_file_store_up_to_date(store_path: Path) -> None:
    store = orjson.loads(store_path.read_bytes())
    shift = _shift_ms(max(entry["updatedAt"] for entry in store.values()))
    if shift:
        for entry in store.values():
            entry["updatedAt"] += shift
        staged = store_path.with_name(store_path.name + ".tmp")
        staged.write_bytes(orjson.dumps(store))
        staged.replace(store_path)


def _bring_sqlite_store_up_to_date(database: Path) -> None:
    connection = sqlite3.connect(database)
    try:
        (newest,) = connection.execute("SELECT max(updated_at) FROM session_nodes").fetchone()
        shift = _shift_ms(newest)
        if shift:
            with connection:
                connection.execute(
                    "UPDATE session_nodes SET updated_at = updated_at + ?1, "
                    "entry_json = json_set(entry_json, '$.updatedAt', updated_at + ?1)",
                    (shift,),
                )
                connection.execute(
                    "UPDATE session_windows SET updated_at = updated_at + ?1", (shift,)
                )
    finally:
        connection.close()


def _shift_ms(newest_ms: int) -> int:
    """How far to move the update times so the newest (the main session's) is now again, as
    when the store was built (0: less than a minute off)."""
    shift = _now_ms() - newest_ms
    return shift if abs(shift) >= 60_000 else 0


def _build_sqlite_store(root: Path) -> None:
    state = root / "state"
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    (root / "workspace").mkdir()
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA journal_mode = WAL")
    main_id = str(uuid.UUID(int=1, version=4))
    rows = [*_entries(), ("agent:main:main", main_id, _now_ms())]
    with connection:
        for statement in (SESSION_NODES_SQL, SESSION_WINDOWS_SQL, TRANSCRIPT_EVENTS_SQL):
            connection.execute(statement)
        connection.executemany(
            "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at,"
            " status) VALUES (?, ?, ?, ?, 'done')",
            ((key, sid, orjson.dumps(_entry(sid, at)).decode(), at) for key, sid, at in rows),
        )
        connection.executemany(
            "INSERT INTO session_windows (session_id, session_key, created_at, updated_at)"
            " VALUES (?, ?, ?, ?)",
            ((sid, key, at, at) for key, sid, at in rows),
        )
        lines = list(transcript_lines(200, session_id=main_id))
        connection.executemany(
            "INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (main_id, seq, orjson.dumps(line).decode(), 0, None, None, None)
                for seq, line in enumerate(lines)
            ),
        )
    connection.close()
    _write_config(state, root / "workspace")


def _entries():
    """Yield (key, session id, updated at ms) of ENTRIES sessions, newest first."""
    rng = random.Random(14)
    now = _now_ms() - 60_000
    for number in range(ENTRIES):
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        shape = KEY_SHAPES[number % len(KEY_SHAPES)]
        key = "agent:main:" + shape.format(n=number, id=session_id[:8])
        yield key, session_id, now - number * 1000


def _entry(session_id: str, updated: int) -> dict[str, Any]:
    """A store entry shaped like the captures' (tokens, model, provider)."""
    return {
        "sessionId": session_id,
        "updatedAt": updated,
        "systemSent": True,
        "abortedLastRun": False,
        "model": "fake-model",
        "modelProvider": "fake",
        "inputTokens": 1234,
        "outputTokens": 56,
        "totalTokens": 1290,
        "totalTokensFresh": True,
        "contextTokens": 200_000,
    }


def _small_transcript() -> bytes:
    lines = list(transcript_lines(1))
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _write_config(state: Path, workspace: Path, extra: dict[str, Any] | None = None) -> None:
    config = {
        "gateway": {"port": 18789},
        "agents": {"list": [{"id": "main", "workspace": str(workspace)}]},
    }
    (state / "openclaw.json").write_bytes(orjson.dumps(config | (extra or {})))


def _config_state(json5: bool) -> Path:
    """A state dir with one small agent and a 5 MB openclaw.json (JSON5 as a person edits it:
    comments, unquoted keys, single quotes, trailing commas; or the plain JSON the gateway
    writes), its bulk in a provider's model list."""
    return _built(f"config-{'json5' if json5 else 'json'}", lambda root: _build_config(root, json5))


def _build_config(root: Path, json5: bool) -> None:
    state = root / "state"
    (state / "agents" / "main" / "sessions").mkdir(parents=True)
    (root / "workspace").mkdir()
    models, number = [], 0
    size = 0
    while size < CONFIG_BYTES:
        if json5:
            model = (
                f"      // model {number}\n      {{ id: 'model-{number}', name: \"Model {number}\","
                f" contextWindow: 200000, maxTokens: 8192, reasoning: false, }},\n"
            )
        else:
            model = (
                orjson.dumps(
                    {"id": f"model-{number}", "name": f"Model {number}", "contextWindow": 200000}
                ).decode()
                + ",\n"
            )
        models.append(model)
        size += len(model)
        number += 1
    workspace = str(root / "workspace")
    if json5:
        text = (
            "// the operator's own config\n{\n  gateway: { port: 18789, },\n"
            f"  agents: {{ list: [ {{ id: 'main', workspace: '{workspace}', }}, ], }},\n"
            "  models: { providers: { big: { models: [\n" + "".join(models) + "  ], }, }, },\n}\n"
        )
    else:
        text = (
            '{"gateway": {"port": 18789}, '
            f'"agents": {{"list": [{{"id": "main", "workspace": "{workspace}"}}]}}, '
            '"models": {"providers": {"big": {"models": [\n'
            + "".join(models).rstrip(",\n")
            + "\n]}}}}\n"
        )
    (state / "openclaw.json").write_text(text)


# --- hostile inputs ---------------------------------------------------------------------------


def _hostile_inputs() -> list[Measurement]:
    results = []
    root = WORK / "hostile"
    shutil.rmtree(root, ignore_errors=True)
    # A one-line 5 MB memory file: markers between inline code spans, as the review wrote it.
    memory_state = _small_state(root / "memory-line")
    memory = root / "memory-line" / "workspace" / "memory"
    memory.mkdir(parents=True)
    line = b"[TODO] `x` " * (MEMORY_LINE_BYTES // 11)
    (memory / "notes.md").write_bytes(line)
    results.append(
        measure(
            "one-line 5 MB memory file: index --force",
            _argv(memory_state, "index", "--force"),
            env=_environment(),
            repeat=REPEAT,
        )
    )
    # A zstd row claiming 1 GiB in the main transcript (SQLite era).
    results.append(
        measure(
            "zstd row claiming 1 GiB: checkpoint",
            memwarden_accepting_1(
                "--state-dir", str(_bomb_state(root / "bomb")), "checkpoint", "--force"
            ),
            env=_environment(),
            repeat=REPEAT,
        )
    )
    # A catastrophic operator redaction pattern.
    pattern_state = _small_state(root / "pattern", user_text="note: " + "a" * 40 + "b")
    config = root / "pattern" / "memwarden.toml"
    config.write_text(
        "[checkpoint]\nredact_patterns = [{name = 'runaway', pattern = '(a|aa)+$'}]\n"
    )
    results.append(
        measure(
            "redaction pattern (a|aa)+$ on forty a's and a b: checkpoint",
            memwarden_accepting_1(
                "--config", str(config), "--state-dir", str(pattern_state), "checkpoint", "--force"
            ),
            env=_environment(),
            repeat=REPEAT,
        )
    )
    # Gateway and Slack both sending a byte every 0.2 s, without end.
    health_state = _small_state(root / "drip")
    with DripServer(http_headers_drip()) as gateway, DripServer(http_body_drip()) as slack:
        env = _environment(
            MEMWARDEN_HEALTH_GATEWAY_HTTP_URL=gateway.http_url,
            MEMWARDEN_SLACK_WEBHOOK_URL=slack.http_url + "/services/T/B/x",
        )
        results.append(
            measure(
                f"gateway and Slack dripping bytes (timeouts {TIMEOUT_S:g} s + {TIMEOUT_S:g} s): "
                "health",
                memwarden_accepting_1("--state-dir", str(health_state), "health"),
                env=env,
                repeat=REPEAT,
                prepare=lambda: _reset_alerts(),
            )
        )
    return results


def _small_state(root: Path, user_text: str | None = None) -> Path:
    state = root / "state"
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (root / "workspace").mkdir(parents=True, exist_ok=True)
    session_id = str(uuid.UUID(int=2, version=4))
    lines = list(transcript_lines(3, session_id=session_id))
    if user_text is not None:
        lines[1]["message"]["content"] = user_text
    (sessions / f"{session_id}.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    store = {"agent:main:main": _entry(session_id, _now_ms())}
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    _write_config(state, root / "workspace")
    return state


def _bomb_state(root: Path) -> Path:
    state = root / "state"
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    database.parent.mkdir(parents=True)
    (root / "workspace").mkdir()
    session_id = str(uuid.UUID(int=3, version=4))
    lines = list(transcript_lines(3, session_id=session_id))
    compressor = zstd.ZstdCompressor(level=1)
    chunk = bytes(16 * 1024 * 1024)
    bomb = b"".join(compressor.compress(chunk) for _ in range(BOMB_BYTES // len(chunk)))
    bomb += compressor.flush()
    connection = sqlite3.connect(database)
    with connection:
        for statement in (SESSION_NODES_SQL, SESSION_WINDOWS_SQL, TRANSCRIPT_EVENTS_SQL):
            connection.execute(statement)
        now = _now_ms()
        entry = orjson.dumps(_entry(session_id, now)).decode()
        connection.execute(
            "INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at)"
            " VALUES ('agent:main:main', ?, ?, ?)",
            (session_id, entry, now),
        )
        connection.execute(
            "INSERT INTO session_windows (session_id, session_key, created_at, updated_at)"
            " VALUES (?, 'agent:main:main', ?, ?)",
            (session_id, now, now),
        )
        rows = [
            (session_id, seq, orjson.dumps(x).decode(), 0, None, None, None)
            for seq, x in enumerate(lines)
        ]
        rows.insert(2, (session_id, len(lines), None, 0, bomb, 131_000, MINIMAL_NAVIGATION_JSON))
        connection.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    connection.close()
    _write_config(state, root / "workspace")
    return state


# --- running ----------------------------------------------------------------------------------


def _argv(state: Path, *arguments: str) -> list[str]:
    if arguments and arguments[0] == "health":
        return memwarden_accepting_1("--state-dir", str(state), *arguments)
    return [PYTHON, "-m", "memwarden", "-q", "--state-dir", str(state), *arguments]


def _environment(**extra: str) -> dict[str, str]:
    settings = {
        "HOME": str(WORK / "home"),
        "XDG_STATE_HOME": str(WORK / "xdg-state"),
        "XDG_CONFIG_HOME": str(WORK / "xdg-config"),
        "MEMWARDEN_HISTORY_ENABLED": "false",
        "MEMWARDEN_HEALTH_PROCESS_CHECK": "false",
        "MEMWARDEN_HEALTH_PROBE_TIMEOUT_SECONDS": str(TIMEOUT_S),
        "MEMWARDEN_SLACK_TIMEOUT_SECONDS": str(TIMEOUT_S),
        "MEMWARDEN_HEALTH_METRICS_FILE": str(WORK / "memwarden.prom"),
    }
    return child_environment(**(settings | extra))


def _touch_store(state: Path):
    store = state / "agents" / "main" / "sessions" / "sessions.json"
    database = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    target = store if store.exists() else database

    def touch() -> None:
        os.utime(target)

    return touch


def _reset_alerts() -> None:
    """Each run finds the same alert to send (none delivered before)."""
    shutil.rmtree(WORK / "xdg-state", ignore_errors=True)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _sigterm_seconds() -> float:
    """Start a checkpoint of the 100k store that waits for another run's memory lock, send it
    SIGTERM, and return the seconds from the signal to its exit (median of REPEAT)."""
    from memwarden.process.locks import RunLock

    state = _file_store_state()
    env = _environment(MEMWARDEN_HISTORY_ENABLED="true", MEMWARDEN_HISTORY_LOCK_WAIT_SECONDS="300")
    lock = RunLock(WORK / "xdg-state" / "memwarden" / "locks", "memory-main")
    times = []
    for _ in range(REPEAT):
        _touch_store(state)()
        lock.acquire()
        try:
            process = subprocess.Popen(
                [
                    PYTHON,
                    "-m",
                    "memwarden",
                    "-q",
                    "--state-dir",
                    str(state),
                    "checkpoint",
                    "--force",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(4)  # the store read; then it waits for the lock
            started = time.perf_counter()
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
            times.append(time.perf_counter() - started)
        finally:
            lock.release()
    return sorted(times)[len(times) // 2]


if __name__ == "__main__":
    standalone = Report()
    standalone.current = "limits"
    run(standalone)
    print(standalone.sections["limits"].markdown())
