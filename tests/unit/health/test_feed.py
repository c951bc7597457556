"""Alertmanager's feed, decided (pure): labels of a bad check, which alerts fire, resolve, are
pending, and what is posted."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memwarden.health.feed import (
    DOCS,
    Identity,
    after_send,
    alert_labels,
    alert_name,
    alerts_to_send,
    decide_feed,
    fingerprint,
    fix_for,
)
from memwarden.health.model import critical, warning

GW = Identity("box:18789", {"env": "prod"})
T0 = 1_795_000_000.0
LIFETIME = timedelta(minutes=15)
DOCS_HEALTH = Path(__file__).resolve().parents[3] / "docs" / "health.md"


def test_alert_name_is_camel_case_of_the_check_family():
    assert alert_name("gateway.live") == "MemwardenGatewayLive"
    assert alert_name("disk:/var/lib") == "MemwardenDisk"
    assert alert_name("jobs.stale:checkpoint") == "MemwardenJobsStale"
    assert alert_name("sessions.store:main") == "MemwardenSessionsStore"


def test_alert_labels_name_check_gateway_subject_and_details_extra_labels_never_win():
    stale = critical("jobs.stale:checkpoint", "late")
    assert alert_labels(stale, GW) == {
        "env": "prod",
        "memwarden_job": "checkpoint",
        "alertname": "MemwardenJobsStale",
        "check": "jobs.stale:checkpoint",
        "severity": "critical",
        "gateway": "box:18789",
        "instance": "box:18789",
    }
    lossy = warning("compaction.lossy:s1", "lost 3", agent="main", session="agent:main:main")
    labels = alert_labels(lossy, Identity("box", {"severity": "x"}))
    assert labels["agent"] == "main" and labels["session"] == "agent:main:main"
    assert labels["severity"] == "warning"
    assert alert_labels(warning("disk:/var", "88%"), GW)["mount"] == "/var"


def test_decide_feed_new_bad_check_fires_pending_from_when_it_turned_bad():
    [alert] = decide_feed({}, [(critical("gateway.live", "down"), T0 - 60)], GW, T0)
    assert alert.firing and alert.pending
    assert alert.starts_at == T0 - 60
    assert alert.annotations == {"summary": "down", "fix": fix_for("gateway.live")}
    assert alert.fingerprint == fingerprint(alert.labels)


def test_decide_feed_still_bad_keeps_start_and_delivery_and_takes_the_new_message():
    [first] = decide_feed({}, [(critical("gateway.live", "down"), T0)], GW, T0)
    [delivered] = after_send([first], T0 + 1, None)
    stored = {delivered.fingerprint: delivered}
    [again] = decide_feed(stored, [(critical("gateway.live", "down 5 min"), T0)], GW, T0 + 300)
    assert again.starts_at == T0 and again.delivered_at == T0 + 1 and not again.pending
    assert again.annotations["summary"] == "down 5 min"


def test_decide_feed_check_back_to_ok_resolves_now_and_is_pending():
    [first] = decide_feed({}, [(critical("gateway.live", "down"), T0)], GW, T0)
    [delivered] = after_send([first], T0, None)
    [resolved] = decide_feed({delivered.fingerprint: delivered}, [], GW, T0 + 300)
    assert not resolved.firing and resolved.pending
    assert resolved.ends_at == T0 + 300


def test_decide_feed_severity_change_resolves_the_old_label_set_and_fires_the_new():
    [old] = after_send(decide_feed({}, [(warning("disk:/", "88%"), T0)], GW, T0), T0, None)
    feed = decide_feed({old.fingerprint: old}, [(critical("disk:/", "96%"), T0)], GW, T0 + 60)
    firing, resolved = feed
    assert firing.labels["severity"] == "critical" and firing.firing and firing.pending
    assert resolved.labels["severity"] == "warning" and resolved.ends_at == T0 + 60


def test_alerts_to_send_firing_end_one_lifetime_ahead_resolutions_at_their_end():
    [old] = decide_feed({}, [(warning("cron.errors", "3"), T0 - 600)], GW, T0 - 600)
    stored = {old.fingerprint: old}
    firing, resolved = decide_feed(stored, [(critical("gateway.live", "down"), T0)], GW, T0)
    sent = alerts_to_send([firing, resolved], T0 + 5, LIFETIME, "http://grafana/d/x")
    assert [alert.labels["check"] for alert in sent] == ["gateway.live", "cron.errors"]
    now = datetime.fromtimestamp(T0 + 5, UTC)
    assert sent[0].ends_at == now + LIFETIME
    assert sent[1].ends_at == datetime.fromtimestamp(T0, UTC)
    assert sent[0].generator_url == "http://grafana/d/x"


def test_after_send_accepted_drops_resolutions_failed_counts_attempts_on_what_was_sent():
    [delivered] = after_send(decide_feed({}, [(critical("a.b", "x"), T0)], GW, T0), T0, None)
    feed = decide_feed({delivered.fingerprint: delivered}, [(critical("c.d", "y"), T0)], GW, T0)
    [new, resolved] = feed
    kept = after_send(feed, T0 + 1, "connection refused")
    assert [(a.attempts, a.last_error) for a in kept] == [
        (1, "connection refused"),
        (1, "connection refused"),
    ]
    assert after_send([new, resolved], T0 + 2, None)[0].check_key == "c.d"
    assert len(after_send([new, resolved], T0 + 2, None)) == 1
    # A firing alert whose refresh failed is pending again: Alertmanager lets it lapse after
    # its resolve timeout, and the operator must see that it is not being refreshed.
    [lapsing] = after_send([delivered], T0 + 3, "down")
    assert (lapsing.attempts, lapsing.last_error, lapsing.pending) == (1, "down", True)
    [refreshed] = after_send([lapsing], T0 + 4, None)
    assert (refreshed.last_error, refreshed.pending) == (None, False)


def test_every_check_in_docs_health_has_a_fix():
    text = DOCS_HEALTH.read_text(encoding="utf-8")
    table = text.split("## The checks", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `([a-z._]+)(?::<[a-z]+>)?` \|", table, re.MULTILINE)
    assert len(keys) >= 12
    assert [key for key in keys if DOCS in fix_for(key)] == []


def identity_inputs(**env: str):
    from memwarden.health.checks import HealthInputs
    from memwarden.settings import config

    settings = config.load(None, env={f"MEMWARDEN_HEALTH_{k.upper()}": v for k, v in env.items()})
    return HealthInputs(settings, deployment_loader=None, state=None, now=datetime.now(UTC))


def test_gateway_name_configured_else_host_and_port():
    import socket

    from memwarden.health.checks.gateway import gateway_name

    assert gateway_name(identity_inputs(gateway_name=" prod-eu-1 ")) == "prod-eu-1"
    local = identity_inputs(gateway_http_url="http://127.0.0.1:18789")
    assert gateway_name(local) == f"{socket.gethostname()}:18789"
    remote = identity_inputs(gateway_http_url="https://gw2.internal:8443/")
    assert gateway_name(remote) == "gw2.internal:8443"
