"""Doctor's check that injected files fit the gateway's bootstrap caps."""

from __future__ import annotations

from pathlib import Path

from memwarden.doctor.bootstrap import check_bootstrap
from memwarden.indexing.outcome import Outcome, budget_warnings

WORKSPACE = Path("/srv/openclaw/workspace")


def test_files_under_the_cap_are_ok():
    findings = check_bootstrap("main", WORKSPACE, {"memory/INDEX.md": 1000}, 20_000, 60_000)
    assert [(f.key, f.severity) for f in findings] == [("bootstrap.main.INDEX.md", "ok")]


def test_file_over_the_cap_warns_and_suggests_a_cap_that_fits():
    lengths = {"memory/ACTIVE_CONTEXT.md": 23_456}
    findings = check_bootstrap("main", WORKSPACE, lengths, 20_000, 60_000)
    (finding,) = findings
    assert finding.severity == "warning"
    assert "the gateway will cut it in the middle" in finding.message
    assert finding.fix == "openclaw config set agents.defaults.bootstrapMaxChars 25000"


def test_total_over_the_total_cap_warns():
    lengths = {
        "AGENTS.md": 20_000,
        "MEMORY.md": 20_000,
        "memory/INDEX.md": 19_000,
        "SOUL.md": 9_000,
    }
    findings = check_bootstrap("ops", WORKSPACE, lengths, 20_000, 60_000)
    total = next(f for f in findings if f.key == "bootstrap.ops.total")
    assert total.severity == "warning"
    assert total.fix == "openclaw config set agents.defaults.bootstrapTotalMaxChars 70000"


def test_check_bootstrap_injected_files_says_what_the_index_job_says():
    outcome = Outcome(str(WORKSPACE), ["main"], "written", chars=4_000, active_context_chars=5_000)
    lengths = {"memory/INDEX.md": 4_000, "memory/ACTIVE_CONTEXT.md": 5_000}

    findings = check_bootstrap("main", WORKSPACE, lengths, 4_500, 6_000)

    warnings = [f.message for f in findings if f.severity == "warning"]
    assert warnings == [
        f"agent main: {warning}" for warning in budget_warnings(WORKSPACE, 4_500, 6_000, outcome)
    ]
    assert len(warnings) == 2  # ACTIVE_CONTEXT.md over its cap, and the total
