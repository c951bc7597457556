"""What operators configure runs with limits: redaction patterns have a time limit, templates
render in jinja2's sandbox."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memwarden.checkpoint.digest.secret_rules import PatternTimeout, TimedPattern
from memwarden.process.runtime import JobContext
from support.cli import run_cli
from support.deployments import make_generated_fleet
from support.transcripts import START

NOW = START + timedelta(hours=1)
CATASTROPHIC = r"(a|aa)+$"  # backtracks for hours on forty a's and a b, in re and in regex
# A template that ran `id` before the sandbox: reach os through a global's __init__.
ESCAPE = "{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}\n"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(JobContext, "now", lambda self: NOW)
    monkeypatch.setenv("MEMWARDEN_HISTORY_ENABLED", "false")


def one_agent(root: Path, user_text: str = "remember this") -> tuple[Path, Path]:
    state, workspaces = make_generated_fleet(
        root, ["main"], int(NOW.timestamp() * 1000), user_text=user_text
    )
    return state, workspaces["main"]


def test_timed_pattern_catastrophic_backtracking_is_stopped_and_names_the_rule():
    pattern = TimedPattern("runaway", CATASTROPHIC, seconds=0.2)

    with pytest.raises(PatternTimeout) as stopped:
        pattern.sub(lambda match: "[x]", "a" * 40 + "b")

    message = stopped.value.message
    assert message.startswith("checkpoint.redact_patterns: runaway: pattern '(a|aa)+$' ran")
    assert "\n" not in message


def test_timed_pattern_ordinary_pattern_matches_as_re_would():
    pattern = TimedPattern("pin", r"(?i)pin (?P<secret>\d{4,})")

    assert pattern.sub(lambda match: match.group("secret"), "my PIN 82731") == "my 82731"
    assert pattern.sub(lambda match: "[x]", "pin 1234 and pin 5678") == "[x] and [x]"


@pytest.mark.timeout(60)
def test_checkpoint_catastrophic_redaction_pattern_fails_the_agent_and_writes_nothing(
    tmp_path, capsys
):
    state, workspace = one_agent(tmp_path, "note: " + "a" * 40 + "b")
    config = tmp_path / "memwarden.toml"
    config.write_text(
        f"[checkpoint]\nredact_patterns = [{{name = 'runaway', pattern = '{CATASTROPHIC}'}}]\n"
    )

    result = run_cli(capsys, "--config", config, "--state-dir", state, "checkpoint")

    assert result.exit_code == 1
    line = result.messages[-1]
    assert line.startswith("memwarden: checkpoint of agent main failed: ")
    assert "checkpoint.redact_patterns: runaway: pattern '(a|aa)+$' ran longer than 1 s" in line
    assert not (workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_checkpoint_operator_template_cannot_reach_os(tmp_path, capsys, monkeypatch):
    state, workspace = one_agent(tmp_path)
    marker = tmp_path / "template-ran-a-command"
    template = tmp_path / "my-context.md.j2"
    template.write_text(ESCAPE.replace("{marker}", str(marker)))
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE", str(template))

    result = run_cli(capsys, "--state-dir", state, "checkpoint")

    assert result.exit_code == 1
    assert "unsafe" in result.stderr
    assert not marker.exists()
    assert not (workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_checkpoint_operator_template_without_the_session_line_writes_no_handoff(
    tmp_path, capsys, monkeypatch
):
    state, workspace = one_agent(tmp_path)
    template = tmp_path / "bare.md.j2"
    template.write_text("---\nmine: {{ exchanges | length }}\n---\n")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE", str(template))

    result = run_cli(capsys, "--state-dir", state, "checkpoint")

    assert result.exit_code == 1
    assert "has no `> - session: `KEY`` line" in result.stderr
    assert "checkpoint.active_context_template" in result.stderr
    # Never a file memwarden would take for the operator's own on the next run.
    assert not (workspace / "memory" / "ACTIVE_CONTEXT.md").exists()


def test_index_operator_template_cannot_reach_os_and_a_plain_one_renders(
    tmp_path, capsys, monkeypatch
):
    state, workspace = one_agent(tmp_path)
    (workspace / "memory").mkdir()
    (workspace / "memory" / "MEMORY.md").write_text("# Memory\n\n[FACT] kept\n")
    marker = tmp_path / "template-ran-a-command"
    template = tmp_path / "my-index.md.j2"
    template.write_text(ESCAPE.replace("{marker}", str(marker)))
    monkeypatch.setenv("MEMWARDEN_INDEX_TEMPLATE", str(template))

    refused = run_cli(capsys, "--state-dir", state, "index", "--force")
    plain = tmp_path / "plain-index.md.j2"
    plain.write_text(
        "{{ totals.files }} file(s){% for view in views %} {{ view.name }}{% endfor %}\n"
    )
    monkeypatch.setenv("MEMWARDEN_INDEX_TEMPLATE", str(plain))
    rendered = run_cli(capsys, "--state-dir", state, "index", "--force")

    assert refused.exit_code == 1
    assert "the INDEX.md template does not render" in refused.stderr and "unsafe" in refused.stderr
    assert not marker.exists()
    assert rendered.exit_code == 0, rendered.stderr
    assert "1 file(s) Core state" in (workspace / "memory" / "INDEX.md").read_text()


def memory_texts(workspace: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted((workspace / "memory").glob("*.md"))}


def test_checkpoint_operator_templates_render_with_jinja2_and_a_copy_writes_the_same(
    tmp_path, capsys, monkeypatch
):
    from importlib.resources import files

    bundled = files("memwarden") / "templates" / "checkpoint"
    copies = tmp_path / "copies"
    copies.mkdir()
    for name in ("active_context.md.j2", "daily_entry.md.j2"):
        (copies / name).write_text((bundled / name).read_text())
    default_state, default_workspace = one_agent(tmp_path / "default")
    state, workspace = one_agent(tmp_path / "copied")

    default = run_cli(capsys, "--state-dir", default_state, "checkpoint")
    monkeypatch.setenv(
        "MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE", str(copies / "active_context.md.j2")
    )
    monkeypatch.setenv(
        "MEMWARDEN_CHECKPOINT_DAILY_ENTRY_TEMPLATE", str(copies / "daily_entry.md.j2")
    )
    copied = run_cli(capsys, "--state-dir", state, "checkpoint")

    assert (default.exit_code, copied.exit_code) == (0, 0), copied.stderr
    assert memory_texts(workspace) == memory_texts(default_workspace)
    own = tmp_path / "own.md.j2"
    own.write_text("> - session: `{{ session.key }}`\nmine: {{ exchanges | length }}\n")
    monkeypatch.setenv("MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE", str(own))
    mine = run_cli(capsys, "--state-dir", state, "checkpoint", "--force")
    assert mine.exit_code == 0, mine.stderr
    assert (
        memory_texts(workspace)["ACTIVE_CONTEXT.md"] == "> - session: `agent:main:main`\nmine: 6\n"
    )


def test_index_operator_copy_of_the_bundled_template_writes_the_same_index(
    tmp_path, capsys, monkeypatch
):
    from importlib.resources import files

    copy = tmp_path / "INDEX.md.j2"
    copy.write_text((files("memwarden") / "templates" / "index" / "INDEX.md.j2").read_text())
    written = {}
    for name, template in (("bundled", ""), ("copy", str(copy))):
        state, workspace = one_agent(tmp_path / name)
        (workspace / "memory").mkdir()
        (workspace / "memory" / "MEMORY.md").write_text("# Memory\n\n[FACT] kept\n[TODO] more\n")
        monkeypatch.setenv("MEMWARDEN_INDEX_TEMPLATE", template)
        result = run_cli(capsys, "--state-dir", state, "index", "--force")
        assert result.exit_code == 0, result.stderr
        written[name] = (workspace / "memory" / "INDEX.md").read_text()

    assert written["copy"] == written["bundled"]
    assert "[FACT] 1" in written["bundled"]
