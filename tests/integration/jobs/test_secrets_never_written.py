"""No secret of a transcript reaches any file memwarden writes, nor its memory history.

Two conversations of one agent hold every sample of tests/support/secret_samples.py in every
placement (mid-sentence, after `=`, in a URL, in JSON, in a tool call's arguments, in a file
path, in TODOs, marked observations and a compaction summary). The real jobs run over them as
an operator's timers would: checkpoint (a handoff per conversation, the daily log, INDEX.md and a
history snapshot), the session summary, a manual snapshot, then a second checkpoint after more
messages. Then every file under the workspace and memwarden's storage (state database, logs,
history manifest) is read, with every object of the history's git repository, and none may hold
a raw secret, while each masked type shows that its samples were read.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import write_json5_config
from support.secret_samples import SAMPLES, file_path, placements, tool_arguments
from support.transcripts import START, write_jsonl
from support.written import history_objects, written_files

MAIN = "5ec2e7a1-0000-4000-8000-00000000000a"
PEER = "5ec2e7a1-0000-4000-8000-00000000000b"
PEER_KEY = "agent:main:telegram:direct:4242"
CONFIG = """
[checkpoint]
sessions = "all"
message_max_chars = 20000
summary_max_chars = 50000
daily_log_max_chars = 5000

[index]
threshold_kb = 0
summary_excerpt_messages = 200
"""


def stamp(minute: int) -> dict:
    moment = START + timedelta(minutes=minute)
    return {
        "timestamp": moment.isoformat().replace("+00:00", "Z"),
        "ms": int(moment.timestamp() * 1000),
    }


def message(entry_id: str, role: str, content: list[dict], minute: int) -> dict:
    at = stamp(minute)
    return {
        "type": "message",
        "id": entry_id,
        "timestamp": at["timestamp"],
        "message": {"role": role, "content": content, "timestamp": at["ms"]},
    }


def turn(prefix: str, samples, minute: int) -> list[dict]:
    """A request and a reply that carry `samples` in every placement."""
    request = "\n".join(
        [f"[DECISION] keep {sample.snippet} for now" for sample in samples]
        + [f"- [ ] rotate {sample.snippet}" for sample in samples]
        + [text for sample in samples for text in placements(sample.snippet).values()]
    )
    reply = [{"type": "text", "text": f"TODO: revoke {samples[0].snippet}\n{request}"}]
    reply += [
        {
            "type": "toolCall",
            "id": f"{prefix}-{n}",
            "name": "exec",
            "arguments": tool_arguments(s.snippet),
        }
        for n, s in enumerate(samples)
    ]
    reply += [
        {
            "type": "toolCall",
            "id": f"{prefix}-p{n}",
            "name": "read",
            "arguments": {"paths": [file_path(s.snippet)]},
        }
        for n, s in enumerate(samples)
    ]
    return [
        message(f"{prefix}-u", "user", [{"type": "text", "text": request}], minute),
        message(f"{prefix}-a", "assistant", reply, minute),
    ]


def conversation(session_id: str, name: str, minute: int) -> list[dict]:
    lines = [{"type": "session", "version": 3, "id": session_id, **stamp(0), "cwd": "/srv"}]
    lines[0].pop("ms")
    pairs = [SAMPLES[index : index + 2] for index in range(0, len(SAMPLES), 2)]
    for number, pair in enumerate(pairs):
        lines += turn(f"{name}{number}", pair, minute + number)
    lines.append(
        {
            "type": "compaction",
            "id": f"{name}-compaction",
            "timestamp": stamp(minute + len(pairs))["timestamp"],
            "summary": "## Identifiers\n" + "\n".join(sample.snippet for sample in SAMPLES),
        }
    )
    return lines


@pytest.fixture
def deployment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setattr(JobContext, "now", lambda self: START + timedelta(hours=2))
    state, workspace = tmp_path / "state", tmp_path / "workspace"
    workspace.mkdir()
    sessions = state / "agents" / "main" / "sessions"
    # A timer run comes halfway through each conversation; the rest arrives before the next.
    rest = {}
    for session_id, name, minute in ((MAIN, "m", 1), (PEER, "p", 2)):
        lines = conversation(session_id, name, minute)
        write_jsonl(sessions / f"{session_id}.jsonl", lines[:50])
        rest[sessions / f"{session_id}.jsonl"] = lines[50:]
    updated = int((START + timedelta(hours=1)).timestamp() * 1000)
    store = {
        "agent:main:main": {"sessionId": MAIN, "updatedAt": updated},
        PEER_KEY: {"sessionId": PEER, "updatedAt": updated - 1000},
    }
    (sessions / "sessions.json").write_bytes(orjson.dumps(store))
    # Bootstrap caps that let a handoff show every message, each with its secrets masked.
    caps = {"bootstrapMaxChars": 1_000_000, "bootstrapTotalMaxChars": 2_000_000}
    agents = {"defaults": caps, "list": [{"id": "main", "workspace": str(workspace)}]}
    write_json5_config(state / "openclaw.json", {"agents": agents})
    config = tmp_path / "memwarden.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return {"state": state, "workspace": workspace, "config": config, "rest": rest}


def run(capsys, deployment: dict, *arguments: str):
    result = run_cli(
        capsys, "--config", deployment["config"], "--state-dir", deployment["state"], *arguments
    )
    assert result.exit_code == 0, result.stderr
    return result


def test_no_secret_reaches_any_written_file_or_the_history(capsys, deployment, isolated_env):
    outputs = [run(capsys, deployment, "--json", "checkpoint")]
    for transcript, lines in deployment["rest"].items():
        with transcript.open("ab") as handle:
            handle.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    outputs.append(run(capsys, deployment, "--json", "checkpoint"))
    outputs.append(
        run(
            capsys,
            deployment,
            "summarize",
            "--agent",
            "main",
            "--session-key",
            "agent:main:main",
            "--session-id",
            MAIN,
        )
    )
    outputs.append(run(capsys, deployment, "history", "snapshot"))
    sessions = deployment["state"] / "agents" / "main" / "sessions"
    with (sessions / f"{MAIN}.jsonl").open("ab") as handle:
        for line in turn("late", SAMPLES[-3:], 100):
            handle.write(orjson.dumps(line) + b"\n")
    outputs.append(run(capsys, deployment, "--json", "checkpoint"))

    storage = isolated_env / ".local" / "state" / "memwarden"
    memory = deployment["workspace"] / "memory"
    written = written_files(memory, storage)
    history = history_objects(storage)
    printed = "".join(output.stdout + output.stderr for output in outputs).encode()
    names = "\n".join(str(path) for path in written).encode()

    assert history.count(b"commit ") >= 2
    everything = b"".join(written.values()) + history + printed + names
    leaked = [sample.name for sample in SAMPLES if sample.secret.encode() in everything]
    assert leaked == []
    handoffs = [path for path in written if path.suffix == ".md" and "ACTIVE_CONTEXT" in path.name]
    handoffs += [path for path in written if path.parent.name == "sessions"]
    assert {path.name for path in written if path.parent == memory} >= {
        "ACTIVE_CONTEXT.md",
        "2026-11-22.md",
        "INDEX.md",
    }
    summaries = list(memory.glob("sessions/summaries/2026-11-22-*.md"))
    assert len(summaries) == 1
    texts = [written[path].decode() for path in [*handoffs, *summaries]]
    assert len(texts) >= 3  # the main handoff, the other conversation's, the summary
    for text in texts:
        missing = {kind for sample in SAMPLES for kind in sample.kinds} - {
            kind for kind in _kinds(text)
        }
        assert missing == set()
    context = written[memory / "ACTIVE_CONTEXT.md"].decode()
    assert "`/srv/app/[REDACTED:github-token]/config.json`" in context
    assert "[REDACTED:" in history.decode(errors="replace")


def _kinds(text: str) -> set[str]:
    kinds = set()
    for piece in text.split("[REDACTED:")[1:]:
        kinds.add(piece.split("]", 1)[0])
    return kinds
