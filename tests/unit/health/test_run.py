"""What health refuses to run with: `health.disabled_checks` patterns that name no check."""

from __future__ import annotations

import re
from pathlib import Path

from memwarden.health.run import REPORTED_KEYS, unknown_check_patterns

DOCS = Path(__file__).parents[3] / "docs" / "health.md"


def test_disabled_checks_that_name_a_check_or_a_glob_over_checks_are_accepted():
    patterns = ["gateway.process", "gateway", "gateway.*", "disk:*", "disk:/var", "*"]
    patterns += ["jobs.stale:checkpoint", "memory.rewrite:main:MEMORY.md", "memwarden.state"]
    assert unknown_check_patterns(patterns) == []


def test_disabled_check_with_a_typo_is_refused_with_a_did_you_mean_or_the_list():
    typo, unknown = unknown_check_patterns(["gateway.lvie", "zzz"])
    assert typo == (
        "health.disabled_checks: 'gateway.lvie' names no check (did you mean gateway.live?)"
    )
    assert unknown.startswith("health.disabled_checks: 'zzz' names no check (the checks: ")
    assert "gateway.live" in unknown and "jobs.stale:*" in unknown


def test_reported_keys_are_the_keys_docs_health_md_lists():
    rows = [
        line for line in DOCS.read_text(encoding="utf-8").splitlines() if line.startswith("| `")
    ]
    documented = set()
    for row in rows:
        first_column = row.split("|")[1]
        documented |= {
            re.sub(r"<[^>]+>", "*", key) for key in re.findall(r"`([^`]+)`", first_column)
        }
    documented = {key for key in documented if not key.startswith("memwarden_")}
    assert documented == set(REPORTED_KEYS)
