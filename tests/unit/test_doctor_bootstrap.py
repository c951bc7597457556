"""Doctor's check that injected files fit the gateway's bootstrap caps."""

from __future__ import annotations

from memwarden.doctor.bootstrap import check_bootstrap, js_length


def test_js_length_counts_utf16_units_like_the_gateway():
    assert js_length("abc") == 3
    assert js_length("é") == 1
    assert js_length("😀") == 2


def test_files_under_the_cap_are_ok():
    findings = check_bootstrap("main", {"memory/INDEX.md": 1000}, 20_000, 60_000)
    assert [(f.key, f.severity) for f in findings] == [("bootstrap.main.INDEX.md", "ok")]


def test_file_over_the_cap_warns_and_suggests_a_cap_that_fits():
    findings = check_bootstrap("main", {"memory/ACTIVE_CONTEXT.md": 23_456}, 20_000, 60_000)
    (finding,) = findings
    assert finding.severity == "warning"
    assert "cuts its middle out" in finding.message
    assert finding.fix == "openclaw config set agents.defaults.bootstrapMaxChars 25000"


def test_total_over_the_total_cap_warns():
    lengths = {
        "AGENTS.md": 20_000,
        "MEMORY.md": 20_000,
        "memory/INDEX.md": 19_000,
        "SOUL.md": 9_000,
    }
    findings = check_bootstrap("ops", lengths, 20_000, 60_000)
    total = next(f for f in findings if f.key == "bootstrap.ops.total")
    assert total.severity == "warning"
    assert total.fix == "openclaw config set agents.defaults.bootstrapTotalMaxChars 70000"
