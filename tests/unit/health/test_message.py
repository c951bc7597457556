"""One message per run: sections, plain-text fallback, Slack blocks, escaping, mention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memwarden.health.message import build_message, slack_escape, summarize
from memwarden.health.model import Status, critical, duration, ok, warning
from memwarden.health.policy import AlertState, decide_alerts

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
COOLDOWN = timedelta(minutes=30)


def test_build_message_groups_new_reminder_and_resolved_in_order():
    previous = {
        "disk:/": AlertState("disk:/", Status.WARNING, "88%", T0, T0, Status.WARNING),
        "cron.errors": AlertState("cron.errors", Status.WARNING, "3", T0, T0, Status.WARNING),
    }
    now = T0 + timedelta(minutes=40)
    results = [critical("gateway.live", "down"), warning("disk:/", "89%"), ok("cron.errors", "0")]
    plan = decide_alerts(previous, results, now, COOLDOWN)
    message = build_message(plan, plan.notices, now, "box")
    text = message.text
    assert text.index("New:") < text.index("Still failing:") < text.index("Resolved:")
    assert "• [critical] gateway.live: down" in text
    assert "• [warning] disk:/: 89% (bad for 40 min, since 2026-11-22 12:00 UTC)" in text
    assert "• [resolved] cron.errors: 0 (was warning for 40 min)" in text
    assert message.summary == "1 new (critical), 1 still failing (warning), 1 resolved"
    assert message.blocks[0]["type"] == "header"
    assert message.blocks[0]["text"]["text"] == "memwarden health on box: " + message.summary
    sections = [block["text"]["text"] for block in message.blocks if block["type"] == "section"]
    assert [section.splitlines()[0] for section in sections] == [
        "*New*",
        "*Still failing*",
        "*Resolved*",
    ]
    assert [n["kind"] for n in message.notices] == ["new", "reminder", "resolved"]
    assert message.idempotency_key.startswith("mw-")


def test_build_message_mentions_only_for_critical_news():
    plan = decide_alerts({}, [critical("gateway.live", "down")], T0, COOLDOWN)
    message = build_message(plan, plan.notices, T0, "box", mention="<!here>")
    assert message.text.startswith("<!here> memwarden health on box")
    assert message.blocks[1]["text"]["text"] == "<!here>"
    calm = decide_alerts({}, [warning("disk:/", "86%")], T0, COOLDOWN)
    assert not build_message(calm, calm.notices, T0, "box", mention="<!here>").text.startswith("<")


def test_build_message_escapes_slack_control_characters_from_checks():
    plan = decide_alerts({}, [critical("gateway.live", "got <html> & <!channel>")], T0, COOLDOWN)
    message = build_message(plan, plan.notices, T0, "box")
    assert "got &lt;html&gt; &amp; &lt;!channel&gt;" in message.text
    assert "<!channel>" not in str(message.blocks)


def test_build_message_names_other_open_problems_in_footer():
    previous = {"disk:/": AlertState("disk:/", Status.WARNING, "88%", T0, T0, Status.WARNING)}
    now = T0 + timedelta(minutes=5)
    plan = decide_alerts(
        previous, [critical("gateway.live", "down"), warning("disk:/", "88%")], now, COOLDOWN
    )
    message = build_message(plan, plan.notices, now, "box")
    assert "Also still open (already reported): disk:/" in message.text
    assert "disk:/" in message.blocks[-1]["elements"][0]["text"]


def test_build_message_without_news_is_none():
    plan = decide_alerts({}, [ok("gateway.live", "live")], T0, COOLDOWN)
    assert build_message(plan, plan.notices, T0, "box") is None


def test_build_message_long_sections_are_cut_to_slack_limits():
    results = [critical(f"disk:/mnt/{i}", "x" * 200) for i in range(40)]
    plan = decide_alerts({}, results, T0, COOLDOWN)
    message = build_message(plan, plan.notices, T0, "box")
    for block in message.blocks:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000
    assert "disk:/mnt/39" in message.text


def test_idempotency_key_differs_between_runs_with_same_news():
    plan = decide_alerts({}, [critical("gateway.live", "down")], T0, COOLDOWN)
    first = build_message(plan, plan.notices, T0, "box")
    later = build_message(plan, plan.notices, T0 + timedelta(minutes=5), "box")
    assert first.idempotency_key != later.idempotency_key


def test_summarize_worse_and_duration_formats():
    previous = {"disk:/": AlertState("disk:/", Status.WARNING, "88%", T0, T0, Status.WARNING)}
    plan = decide_alerts(previous, [critical("disk:/", "97%")], T0, COOLDOWN)
    assert summarize(plan.notices) == "1 worse (critical)"
    assert [duration(timedelta(seconds=s)) for s in (5, 600, 9000, 3 * 86400)] == [
        "5 s",
        "10 min",
        "2.5 h",
        "3.0 days",
    ]
    assert duration(timedelta(seconds=20), seconds=False) == "0 min"  # a job's age, in minutes
    assert slack_escape("a<b>&c") == "a&lt;b&gt;&amp;c"
