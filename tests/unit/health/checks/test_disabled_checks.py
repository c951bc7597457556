"""What health refuses to run with: `health.disabled_checks` patterns that name no check."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from memwarden.health.checks import REPORTED_KEYS, unknown_check_patterns
from memwarden.settings import ALL_OPTIONS

WATCHED = next(option.default for option in ALL_OPTIONS if option.key == "health.watched_jobs")


def unknown(patterns: list[str]) -> list[str]:
    health = SimpleNamespace(disabled_checks=patterns, watched_jobs=WATCHED)
    return unknown_check_patterns(SimpleNamespace(health=health))


DOCS = Path(__file__).parents[4] / "docs" / "health.md"


def test_disabled_checks_that_name_a_check_or_a_glob_over_checks_are_accepted():
    patterns = ["gateway.process", "gateway", "gateway.*", "disk:*", "disk:/var", "*"]
    patterns += ["jobs.stale:checkpoint", "memory.rewrite:main:MEMORY.md", "memwarden.state"]
    patterns += ["compaction.lossy:main:*", "memory.rewrite:main*", "bootstrap.budget:*"]
    assert unknown(patterns) == []


def test_disabled_check_with_a_typo_is_refused_with_a_did_you_mean_or_the_list():
    typo, nothing, job = unknown(["gateway.lvie", "zzz", "jobs.stale:chekpoint"])
    assert typo == (
        "health.disabled_checks: 'gateway.lvie' names no check (did you mean gateway.live?)"
    )
    assert nothing.startswith("health.disabled_checks: 'zzz' names no check (the checks: ")
    assert "gateway.live" in nothing and "jobs.stale:checkpoint" in nothing
    assert nothing.count("gateway.process") == 1  # each check named once
    assert job.endswith("(did you mean jobs.stale:checkpoint?)")


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
