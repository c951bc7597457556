"""Benchmark: memory survival, at default settings, beside the handoff's size and the
checkpoint's cost.

One agent of the file era (2026.7.x) with one conversation planted with items of every kind
(marked lines, open tasks, file paths, plain names and numbers, in the user's requests and the
assistant's replies). `memwarden checkpoint` runs as the timer does, then the conversation is
reset as the gateway resets it (its transcript renamed `<id>.jsonl.reset.<time>`, a new id); the
next checkpoint runs, then the real bootstrap hook (Node) builds the next prompt's bootstrap
files as the gateway asks it to, after the gateway's own files (AGENTS.md, MEMORY.md, … as a
fresh 2026.9.6 workspace has them). Survival is the share of the items found in what the hook
injects. Two sizes: 7 turns (16 items, the end-to-end test's), and 42 turns (42 items and a
plain fact each, more text than the budget). The end-to-end tests (tests/e2e/test_survival_e2e.py)
prove the same on the real gateway, for rotations and compactions too.
Run: `.venv/bin/python bench/run.py survival` (writes bench/REPORT.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
from harness import PYTHON, REPO, Report, Target, default_settings_environment, measure, run_child

START = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
OLD_ID = "5a1f0000-0000-4000-8000-000000000001"
NEW_ID = "5a1f0000-0000-4000-8000-000000000002"
KEY = "agent:main:main"
# The gateway's own bootstrap files of a fresh 2026.9.6 workspace, by length (tests/fixtures).
GATEWAY_FILES = {"AGENTS.md": 6306, "SOUL.md": 1664, "IDENTITY.md": 618, "USER.md": 477}
INJECT = """
const [handler, workspace, files] = process.argv.slice(1);
const { default: inject } = await import(handler);
const event = { type: "agent", action: "bootstrap", sessionKey: "agent:main:main",
  timestamp: new Date(), messages: [],
  context: { workspaceDir: workspace, sessionKey: "agent:main:main", agentId: "main", cfg: {},
             bootstrapFiles: JSON.parse(files) } };
await inject(event);
process.stdout.write(JSON.stringify(event.context.bootstrapFiles));
"""


def short_conversation() -> tuple[list[tuple[str, str]], list[str]]:
    """The end-to-end test's seven turns and their 16 item tokens."""
    t = [f"tok{number:02d}" for number in range(16)]
    turns = [
        (f"[DECISION] use PostgreSQL 16 for orders {t[0]}\nThe database owner is Ada {t[1]}.", ""),
        (f"- [ ] write the schema migration {t[2]}\nThe code is in src/{t[3]}/orders.py",
         f"[SOLUTION] batch the inserts by 500 rows {t[4]}"),
        (f"TODO: rotate the API keys {t[5]}\n[GOTCHA] WAL mode needs the -shm file {t[6]}", ""),
        (f"[TODO] benchmark the bulk insert {t[7]}\nThe budget is {t[8]} euros.", ""),
        (f"[PREFERENCE] answers in French {t[9]}\nSettings in config/{t[10]}/prod.toml",
         f"[FACT] the staging region is eu-west-3 {t[11]}"),
        (f"[TRADEOFF] replicas cost more {t[12]}\nThe launch is on Thursday {t[13]}.", ""),
        (f"[PATTERN] every migration gets a rollback {t[14]}\nRead docs/{t[15]}/runbook.md", ""),
    ]  # fmt: skip
    return turns, t


def long_conversation() -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """42 turns, each with an item and a plain fact and 500 characters of text."""
    kinds = ("[DECISION] keep", "- [ ] check", "TODO: ask", "see src/x/")
    turns, items, facts = [], [], []
    for turn in range(42):
        item, fact = f"item{turn:02d}", f"fact{turn:02d}"
        kind = kinds[turn % 4]
        text = f"{kind}{item}.py" if kind.endswith("/") else f"{kind} {item}"
        turns.append((f"{text}\nplain fact {fact}: " + "lorem ipsum " * 40, ""))
        items.append(item)
        facts.append(fact)
    return turns, items, facts


def lines_of(session_id: str, turns: list[tuple[str, str]], start: datetime) -> list[dict]:
    lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": _iso(start)}]
    for number, (request, reply) in enumerate(turns):
        at = start + timedelta(minutes=number)
        reply = reply or "Noted, I will keep that in mind."
        for role, text, offset in (("user", request, 0), ("assistant", reply, 1)):
            moment = at + timedelta(seconds=offset)
            content = text if role == "user" else [{"type": "text", "text": text}]
            message = {"role": role, "content": content, "timestamp": int(moment.timestamp() * 1e3)}
            lines.append(
                {"type": "message", "id": f"{role[0]}{number}", "timestamp": _iso(moment),
                 "message": message}
            )  # fmt: skip
    return lines


class Deployment:
    """A file-era gateway state with one agent and the conversation `turns`."""

    def __init__(self, root: Path, turns: list[tuple[str, str]]) -> None:
        self.root, self.turns = root, turns
        self.state, self.workspace = root / "gateway", root / "workspace"
        self.sessions = self.state / "agents" / "main" / "sessions"
        self.env = default_settings_environment(root / "memwarden")

    def build(self, watched: bool = True) -> None:
        """The conversation as it was before the reset. `watched`: memwarden's timer ran when the
        conversation began (its steady state); else memwarden is installed on the conversation
        as it stands and its first run reads the transcript's last lines."""
        for folder in (self.state, self.workspace, self.root / "memwarden"):
            shutil.rmtree(folder, ignore_errors=True)
        self.sessions.mkdir(parents=True)
        self.workspace.mkdir()
        config = {"agents": {"list": [{"id": "main", "workspace": str(self.workspace)}]}}
        (self.state / "openclaw.json").write_bytes(orjson.dumps(config))
        lines = lines_of(OLD_ID, self.turns, START)
        if watched:
            self._write(OLD_ID, lines[:1])
            run_child(self.checkpoint(), self.env)
        self._write(OLD_ID, lines)

    def reset(self) -> None:
        """What the gateway does on `/reset`: rename the transcript, begin a new one."""
        renamed = START + timedelta(hours=1)
        stamp = renamed.strftime("%Y-%m-%dT%H-%M-%S.000Z")
        (self.sessions / f"{OLD_ID}.jsonl").rename(self.sessions / f"{OLD_ID}.jsonl.reset.{stamp}")
        header = {"type": "session", "version": 3, "id": NEW_ID, "timestamp": _iso(renamed)}
        self._write(NEW_ID, [header])

    def survival(self, *, watched: bool, items: list[str]) -> int:
        """Build, checkpoint, reset, checkpoint; return how many `items` the next prompt has."""
        self.build(watched=watched)
        run_child(self.checkpoint(), self.env)
        self.reset()
        run_child(self.checkpoint(), self.env)
        injected = self.next_bootstrap()
        return sum(item in injected for item in items)

    def checkpoint(self) -> list[str]:
        return [PYTHON, "-m", "memwarden", "--state-dir", str(self.state), "-q", "checkpoint"]

    def next_bootstrap(self) -> str:
        """What the bootstrap hook adds to the next prompt, after the gateway's own files."""
        files = [
            {"name": name, "path": str(self.workspace / name), "content": "x" * chars,
             "missing": False}
            for name, chars in GATEWAY_FILES.items()
        ]  # fmt: skip
        handler = REPO / "hooks" / "memory-index-inject" / "handler.js"
        completed = subprocess.run(
            ["node", "--input-type=module", "-e", INJECT, str(handler), str(self.workspace),
             json.dumps(files)],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        added = json.loads(completed.stdout)[len(files) :]
        return "\n".join(file["content"] for file in added)

    def _write(self, session_id: str, lines: list[dict]) -> None:
        path = self.sessions / f"{session_id}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        updated = int((START + timedelta(hours=1)).timestamp() * 1000)
        store = {KEY: {"sessionId": session_id, "updatedAt": updated}}
        (self.sessions / "sessions.json").write_bytes(orjson.dumps(store))


def run(report: Report) -> None:
    section = report.section(
        "survival",
        "What a conversation held that reaches its next prompt after a reset, at default "
        "settings: the share of its planted items in what the real bootstrap hook injects, the "
        "handoff's size against the budget the gateway's caps leave it, and what the "
        "checkpoint costs (a whole `memwarden checkpoint` process; the first run reads the "
        "conversation, the run after the reset its archive's rest and the new transcript).",
    )
    if shutil.which("node") is None:
        section.text("Not measured: `node` is not on PATH (the bootstrap hook is JavaScript).")
        return
    short_turns, short_items = short_conversation()
    long_turns, long_items, long_facts = long_conversation()
    rows = []
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-survival-") as folder:
        for name, turns, items, facts in (
            ("7 turns, 16 items", short_turns, short_items, []),
            ("42 turns, 42 items and 42 plain facts", long_turns, long_items, long_facts),
        ):
            deployment = Deployment(Path(folder) / name.split(",")[0].replace(" ", "-"), turns)
            first = measure(
                f"{name}: first checkpoint",
                deployment.checkpoint(),
                env=deployment.env,
                repeat=5,
                prepare=deployment.build,
            )
            late = deployment.survival(watched=False, items=items)
            deployment.build()
            run_child(deployment.checkpoint(), deployment.env)
            deployment.reset()
            after = measure(
                f"{name}: checkpoint after the reset",
                deployment.checkpoint(),
                env=deployment.env,
                repeat=1,
                warmup=0,
            )
            injected = deployment.next_bootstrap()
            handoff = (deployment.workspace / "memory" / "ACTIVE_CONTEXT.md").read_text()
            survived = sum(item in injected for item in items)
            kept_facts = sum(fact in injected for fact in facts)
            section.measurements([first, after], {first.name: Target(wall_s=0.5, rss_mb=60)})
            budget = min(20_000, 60_000 - sum(GATEWAY_FILES.values()) - 1_000)
            rows.append(
                {
                    "conversation": name,
                    "items in the next prompt": f"{survived}/{len(items)} "
                    f"({survived / len(items):.0%})",
                    "plain facts": f"{kept_facts}/{len(facts)}" if facts else "in the requests",
                    "installed during the conversation": f"{late}/{len(items)}",
                    "handoff": f"{len(handoff.rstrip()):,} of {budget:,} characters",
                    "checkpoint (ms)": f"{first.median_s * 1000:.0f} first, "
                    f"{after.median_s * 1000:.0f} after the reset",
                }
            )
            section.headline(
                f"survival after a reset, {name}",
                "100 % of the items",
                f"{survived / len(items):.0%} ({survived}/{len(items)}), handoff "
                f"{len(handoff.rstrip()):,} characters",
                survived == len(items),
            )
    section.table(rows)
    section.text(
        "The conversations begin while memwarden's timer runs (its steady state). The column "
        "'installed during the conversation' is memwarden's first run on a conversation that "
        "began before it: a transcript up to 512 KB, as here, is read whole (a longer one from "
        "its last 60 lines, docs/checkpoint.md). "
        "Every item reaches the next prompt; of the long conversation's plain facts, those of "
        "the oldest requests are left out to keep the handoff within its budget, and its "
        "`## Left Out` names them with the daily log that holds them. Stock OpenClaw and the "
        "reference scripts scored 0 % on the real gateway (issue 27)."
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
