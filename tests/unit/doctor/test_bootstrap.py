"""Doctor's check that injected files fit the gateway's bootstrap caps."""

from __future__ import annotations

from pathlib import Path

from memwarden.doctor.bootstrap import check_bootstrap
from memwarden.indexing.outcome import Outcome, budget_warnings

WORKSPACE = Path("/srv/openclaw/workspace")
PEER = "memory/sessions/main.telegram.direct.42.md"


def test_files_under_the_cap_are_ok():
    findings = check_bootstrap(
        "main",
        WORKSPACE,
        {"memory/INDEX.md": 1000},
        {"memory/ACTIVE_CONTEXT.md": 900, PEER: 800, "memory/sessions/main.x.md": 700},
        20_000,
        60_000,
    )
    assert [(f.key, f.severity) for f in findings] == [
        ("bootstrap.main.INDEX.md", "ok"),
        ("bootstrap.main.ACTIVE_CONTEXT.md", "ok"),
        ("bootstrap.main.handoffs", "ok"),
    ]
    assert "2 other conversation handoff(s) fit the bootstrap cap (the largest 800" in (
        findings[2].message
    )


def test_file_over_the_cap_warns_and_suggests_a_cap_that_fits():
    findings = check_bootstrap("main", WORKSPACE, {}, {PEER: 23_456}, 20_000, 60_000)
    (finding,) = findings
    assert finding.key == "bootstrap.main.sessions/main.telegram.direct.42.md"
    assert finding.severity == "warning"
    assert "the gateway will cut it in the middle" in finding.message
    assert finding.fix == "openclaw config set agents.defaults.bootstrapMaxChars 25000"


def test_total_counts_the_shared_files_and_only_the_largest_handoff():
    shared = {"AGENTS.md": 20_000, "MEMORY.md": 15_000, "memory/INDEX.md": 14_000}
    handoffs = {"memory/ACTIVE_CONTEXT.md": 9_000, PEER: 12_000}

    findings = check_bootstrap("ops", WORKSPACE, shared, handoffs, 20_000, 60_000)

    total = next(f for f in findings if f.key == "bootstrap.ops.total")
    assert total.severity == "warning"
    assert "can hold 61,000 characters" in total.message  # 49,000 + 12,000, not + 21,000
    assert total.fix == "openclaw config set agents.defaults.bootstrapTotalMaxChars 65000"


def test_check_bootstrap_injected_files_says_what_the_index_job_says():
    handoffs = [{"path": "memory/ACTIVE_CONTEXT.md", "session": "agent:main:main", "chars": 5_000}]
    outcome = Outcome(str(WORKSPACE), ["main"], "written", chars=4_000, handoffs=handoffs)

    findings = check_bootstrap(
        "main",
        WORKSPACE,
        {"memory/INDEX.md": 4_000},
        {"memory/ACTIVE_CONTEXT.md": 5_000},
        4_500,
        6_000,
    )

    warnings = [f.message for f in findings if f.severity == "warning"]
    assert warnings == [
        f"agent main: {warning}" for warning in budget_warnings(WORKSPACE, 4_500, 6_000, outcome)
    ]
    assert len(warnings) == 2  # ACTIVE_CONTEXT.md over its cap, and the total
