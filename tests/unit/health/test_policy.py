"""The pure alert policy: per-key cooldowns, reminders, severity changes, resolutions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import orjson

from memwarden.health.model import Status, critical, ok, warning
from memwarden.health.policy import AlertState, decide_alerts

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
COOLDOWN = timedelta(minutes=30)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def state(key: str, status: Status, since: float = 0, notified: float | None = 0, level=None):
    return AlertState(
        key,
        status,
        "old message",
        at(since),
        at(notified) if notified is not None else None,
        level or status,
    )


def kinds(plan):
    return [(notice.kind, notice.key) for notice in plan.notices]


def test_decide_alerts_check_turns_bad_sends_new_and_remembers_it():
    plan = decide_alerts({}, [critical("gateway.live", "down"), ok("disk:/", "fine")], T0, COOLDOWN)
    assert kinds(plan) == [("new", "gateway.live")]
    stored = plan.states["gateway.live"]
    assert (stored.since, stored.notified_at, stored.notified_status) == (T0, T0, Status.CRITICAL)
    assert "disk:/" not in plan.states


def test_decide_alerts_all_ok_without_history_is_silent():
    plan = decide_alerts({}, [ok("gateway.live", "live")], T0, COOLDOWN)
    assert plan.notices == [] and plan.states == {}


def test_decide_alerts_still_bad_within_cooldown_is_quiet_but_updates_message():
    previous = {"gateway.live": state("gateway.live", Status.CRITICAL)}
    plan = decide_alerts(previous, [critical("gateway.live", "still down")], at(29), COOLDOWN)
    assert plan.notices == []
    assert plan.states["gateway.live"].message == "still down"
    assert plan.states["gateway.live"].notified_at == T0
    assert [item.key for item in plan.quiet] == ["gateway.live"]


def test_decide_alerts_still_bad_after_cooldown_reminds_and_restarts_cooldown():
    previous = {"gateway.live": state("gateway.live", Status.CRITICAL)}
    plan = decide_alerts(previous, [critical("gateway.live", "down")], at(30), COOLDOWN)
    assert kinds(plan) == [("reminder", "gateway.live")]
    assert plan.notices[0].since == T0
    assert plan.states["gateway.live"].notified_at == at(30)
    assert plan.states["gateway.live"].since == T0


def test_decide_alerts_cooldown_is_per_key_not_global():
    previous = {
        "gateway.live": state("gateway.live", Status.CRITICAL, notified=0),
        "disk:/": state("disk:/", Status.WARNING, notified=20),
    }
    results = [critical("gateway.live", "down"), warning("disk:/", "90%")]
    plan = decide_alerts(previous, results, at(35), COOLDOWN)
    assert kinds(plan) == [("reminder", "gateway.live")]


def test_decide_alerts_no_reminder_while_an_earlier_notice_is_undelivered():
    previous = {"gateway.live": state("gateway.live", Status.CRITICAL)}
    results = [critical("gateway.live", "down")]
    plan = decide_alerts(previous, results, at(90), COOLDOWN, undelivered={"gateway.live"})
    assert plan.notices == []
    assert plan.states["gateway.live"].notified_at == T0


def test_decide_alerts_warning_to_critical_alerts_at_once_within_cooldown():
    previous = {"disk:/": state("disk:/", Status.WARNING)}
    plan = decide_alerts(previous, [critical("disk:/", "96%")], at(5), COOLDOWN)
    assert kinds(plan) == [("worse", "disk:/")]
    assert plan.notices[0].previous_status is Status.WARNING
    assert plan.states["disk:/"].notified_status is Status.CRITICAL


def test_decide_alerts_worse_is_sent_even_with_an_undelivered_notice():
    previous = {"disk:/": state("disk:/", Status.WARNING)}
    plan = decide_alerts(previous, [critical("disk:/", "96%")], at(5), COOLDOWN, {"disk:/"})
    assert kinds(plan) == [("worse", "disk:/")]


def test_decide_alerts_flapping_severity_does_not_realert_within_cooldown():
    previous = {"disk:/": state("disk:/", Status.CRITICAL)}
    calmer = decide_alerts(previous, [warning("disk:/", "94.9%")], at(5), COOLDOWN)
    assert calmer.notices == []
    assert calmer.states["disk:/"].status is Status.WARNING
    assert calmer.states["disk:/"].notified_status is Status.CRITICAL
    again = decide_alerts(calmer.states, [critical("disk:/", "95.1%")], at(10), COOLDOWN)
    assert again.notices == []


def test_decide_alerts_bad_to_ok_resolves_and_forgets():
    previous = {"gateway.live": state("gateway.live", Status.CRITICAL, since=-45)}
    plan = decide_alerts(previous, [ok("gateway.live", "live")], T0, COOLDOWN)
    assert kinds(plan) == [("resolved", "gateway.live")]
    notice = plan.notices[0]
    assert (notice.status, notice.previous_status, notice.since) == (
        Status.OK,
        Status.CRITICAL,
        at(-45),
    )
    assert plan.states == {}


def test_decide_alerts_check_no_longer_reported_is_resolved_last():
    previous = {"disk:/old": state("disk:/old", Status.WARNING)}
    plan = decide_alerts(previous, [critical("gateway.live", "down")], T0, COOLDOWN)
    assert kinds(plan) == [("new", "gateway.live"), ("resolved", "disk:/old")]
    assert plan.notices[1].message == "no longer reported (check disabled or gone)"


def test_decide_alerts_state_without_notification_is_due_at_once():
    previous = {"gateway.live": state("gateway.live", Status.CRITICAL, notified=None)}
    plan = decide_alerts(previous, [critical("gateway.live", "down")], at(1), COOLDOWN)
    assert kinds(plan) == [("reminder", "gateway.live")]


def test_unannounced_checks_are_new_for_the_first_run_that_announces():
    previous = {"disk:/": state("disk:/", Status.WARNING)}
    results = [critical("gateway.live", "down"), critical("disk:/", "full")]
    plan = decide_alerts(previous, results, at(1), COOLDOWN, announced=False)
    assert plan.states["gateway.live"].notified_status is None
    assert plan.states["disk:/"].notified_status is Status.WARNING
    # More runs without a destination: paced by the cooldown as before, never "new" again.
    quiet = decide_alerts(plan.states, results, at(2), COOLDOWN, announced=False)
    assert kinds(quiet) == []
    # The first run with somewhere to send it announces both at once.
    later = decide_alerts(quiet.states, results, at(3), COOLDOWN)
    assert kinds(later) == [("new", "gateway.live"), ("worse", "disk:/")]
    assert later.notices[0].since == at(1)


def test_decide_alerts_masked_check_keeps_its_state_without_a_notice():
    previous = {"gateway.ready": state("gateway.ready", Status.CRITICAL)}
    down = replace(critical("gateway.live", "down"), masks=("gateway.ready", "gateway.rpc"))
    plan = decide_alerts(previous, [down], at(5), COOLDOWN)
    assert kinds(plan) == [("new", "gateway.live")]
    assert plan.states["gateway.ready"] == previous["gateway.ready"]
    assert [quiet.key for quiet in plan.quiet] == ["gateway.ready"]


def test_decide_alerts_mask_pattern_holds_every_check_not_measured():
    previous = {key: state(key, Status.WARNING) for key in ("disk:/", "memory.oversized")}
    lost = replace(critical("gateway.state_dir", "no gateway here"), masks=("*",))
    plan = decide_alerts(previous, [lost], at(5), COOLDOWN)
    assert kinds(plan) == [("new", "gateway.state_dir")]
    assert set(plan.states) == {"gateway.state_dir", "disk:/", "memory.oversized"}


def test_decide_alerts_mask_does_not_hide_a_check_that_reported():
    previous = {"gateway.ready": state("gateway.ready", Status.CRITICAL)}
    masking = replace(critical("gateway.live", "down"), masks=("gateway.ready",))
    plan = decide_alerts(previous, [masking, ok("gateway.ready", "ready")], at(5), COOLDOWN)
    assert ("resolved", "gateway.ready") in kinds(plan)


def test_decide_alerts_check_held_by_an_outage_raises_no_alert_and_keeps_an_open_one():
    down = replace(critical("gateway.live", "down"), holds=("rotate.failing", "jobs.stale:rotate"))
    effects = [critical("rotate.failing", "cannot reach"), warning("jobs.stale:rotate", "1.5 h")]
    plan = decide_alerts({}, [down, *effects], at(5), COOLDOWN)
    assert kinds(plan) == [("new", "gateway.live")]
    assert set(plan.states) == {"gateway.live"}

    previous = {"rotate.failing": state("rotate.failing", Status.WARNING)}
    plan = decide_alerts(previous, [down, *effects], at(5), COOLDOWN)
    assert kinds(plan) == [("new", "gateway.live")]
    assert plan.states["rotate.failing"] == previous["rotate.failing"]


def test_decide_alerts_hold_of_an_ok_result_holds_nothing():
    live = replace(ok("gateway.live", "live"), holds=("rotate.failing",))
    plan = decide_alerts({}, [live, critical("rotate.failing", "bad token")], at(5), COOLDOWN)
    assert kinds(plan) == [("new", "rotate.failing")]


def test_notice_to_json_shows_its_fields_in_a_fixed_order():
    previous = {"disk:/": state("disk:/", Status.WARNING, since=-45)}
    plan = decide_alerts(previous, [critical("disk:/", "96% used", 96, 95)], at(5), COOLDOWN)

    assert orjson.dumps(plan.notices[0].to_json()) == (
        b'{"kind":"worse","key":"disk:/","status":"critical","previous_status":"warning",'
        b'"message":"96% used","since":"2026-11-22T11:15:00+00:00","value":96,"threshold":95}'
    )
