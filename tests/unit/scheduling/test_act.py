"""How scheduler commands' outcomes are reported: a stop that finds nothing to stop is fine; a
scheduler that cannot be reached is a problem, even for a command allowed to fail."""

from __future__ import annotations

from memwarden.process.runtime import JobResult
from memwarden.scheduling.act import CommandOutcome, report_outcomes
from memwarden.scheduling.plan import Command

STOP = Command(("systemctl", "--user", "disable", "--now", "memwarden-x.timer"), "x", may_fail=True)


def test_stopping_what_is_not_loaded_is_nothing_to_do():
    outcome = CommandOutcome(STOP, 1, "Failed to disable unit: Unit memwarden-x.timer not loaded.")
    result = JobResult("uninstall")
    failed = report_outcomes(result, [outcome])
    assert result.lines == [f"ran: {STOP.display()} (nothing to do)"]
    assert (result.problems, failed) == ([], 0)


def test_a_scheduler_that_cannot_be_reached_is_a_problem_even_for_a_stop():
    outcome = CommandOutcome(STOP, 1, "Failed to connect to bus: No medium found")
    result = JobResult("uninstall")
    failed = report_outcomes(result, [outcome])
    assert result.lines == []
    assert failed == 1
    assert result.problems == [
        f"failed: {STOP.display()}: Failed to connect to bus: No medium found"
    ]
