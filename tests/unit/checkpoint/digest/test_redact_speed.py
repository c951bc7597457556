"""Redaction takes time linear in the text's length, whatever the text holds.

Each built-in rule gets inputs built to defeat it, with one real-shaped secret at the end that
must still be masked: a megabyte of its anchors (back to back, then each one almost a match),
and for each anchor 100 KB runs after it (a run of the rule's characters, a quote that never
closes, spaces). A whole mixed text of 5 MB goes through every rule, and paths are looked for in
megabytes of path-like text. No time is measured here: a scan that is quadratic on these inputs
takes minutes, and pytest's timeout fails the test (`make bench` measures speed).
"""

from __future__ import annotations

import pytest

from memwarden.agent_memory.observations import find_paths
from memwarden.checkpoint.digest.redact import Redactor, build_redactor
from memwarden.checkpoint.digest.secret_rules import Rule
from support.secret_samples import RULES, SAMPLES, placements

DENSE_SIZE = 1_000_000
RUN_SIZE = 100_000


def rules_applied(rule: Rule) -> tuple[Rule, ...]:
    """The rule, after the access key rule when it looks near that rule's placeholders."""
    before = [other for other in RULES if other.kind == "aws-access-key"] if rule.near else []
    return (*before, rule)


def written(rule: Rule, anchor: str) -> str:
    """The anchor as a text holds it (folded rules look it up lower-cased: upper case here)."""
    return anchor.upper() if rule.folded else anchor


def dense_text(rule: Rule) -> str:
    """A megabyte of the rule's first anchor: back to back, then each time almost a match."""
    anchor = written(rule, (rule.anchors or (rule.near,))[0])
    almost = anchor + "A1b2/" * 4 + " "
    half = DENSE_SIZE // 2
    return anchor * (half // len(anchor)) + almost * (half // len(almost))


def run_texts(rule: Rule) -> dict[str, str]:
    """For each anchor: one try that meets a long run, an open quote, spaces, digits."""
    texts = {}
    for anchor in rule.anchors or (rule.near,):
        anchor = written(rule, anchor)
        texts |= {
            f"{anchor} then a run": anchor + " = " + "a1B/" * (RUN_SIZE // 4),
            f"{anchor} then an open quote": anchor + ': "' + "x" * RUN_SIZE,
            f"{anchor} then spaces": anchor + " " * RUN_SIZE + "=",
            f"{anchor} with digits": ("12345" + anchor + "9Q~") * (RUN_SIZE // (len(anchor) + 8)),
        }
    return texts


def sample_for(rule: Rule):
    applied = Redactor(rules_applied(rule))
    return next(sample for sample in SAMPLES if sample.secret not in applied.redact(sample.snippet))


def masks_after(rule: Rule, text: str) -> bool:
    sample = sample_for(rule)
    masked = Redactor(rules_applied(rule)).redact(text + "\n" + sample.snippet + "\n")
    return sample.secret not in masked


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.kind}-{rule.source[:24]}")
def test_rule_on_a_megabyte_of_its_anchors_still_masks_a_secret_after_them(rule):
    assert masks_after(rule, dense_text(rule))


RUNS = [
    pytest.param(rule, text, id=f"{rule.kind}-{index}-{name}")
    for index, rule in enumerate(RULES)
    for name, text in run_texts(rule).items()
]


@pytest.mark.parametrize(("rule", "text"), RUNS)
def test_rule_on_long_runs_after_an_anchor_still_masks_a_secret_after_them(rule, text):
    assert masks_after(rule, text)


def test_redact_5_mb_of_mixed_text_masks_every_sample():
    pieces = []
    for rule in RULES:
        pieces += [dense_text(rule)[:2_000], *run_texts(rule).values()]
    for sample in SAMPLES:
        pieces += list(placements(sample.snippet).values())
    chunk = "\n".join(text[:5_000] for text in pieces)
    text = (chunk + "\n") * (5_000_000 // len(chunk) + 1)

    masked = build_redactor().redact(text)

    assert len(text) >= 5_000_000
    assert [sample.name for sample in SAMPLES if sample.secret in masked] == []


@pytest.mark.parametrize(
    "text",
    [
        "/a" * 500_000,
        "[REDACTED:token]/" * 60_000 + "x.py",
        "a/" * 500_000 + " ",
        ("/srv/" + "x" * 50) * 20_000 + "/",
    ],
    ids=["slashes", "masked-parts", "relative", "long-parts"],
)
def test_find_paths_on_huge_path_like_text_completes(text):
    assert isinstance(find_paths(text), list)
