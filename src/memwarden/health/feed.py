"""Alertmanager's feed, decided: which alerts it must hear about this run. Pure.

Alertmanager keeps an alert only until its `endsAt`, so it expects every open alert again at each
evaluation; it learns that an alert ended from the same alert with `endsAt` in the past. So, per
alert (one label set, see below):

- a check that is bad is *firing*: sent every run, with `endsAt` one lifetime ahead;
- a firing alert whose check is no longer bad (or whose labels changed, e.g. its severity) is
  *resolved* with `endsAt` now, and sent until Alertmanager accepts it, then dropped;
- a row is *pending* until Alertmanager accepted its current state (a new alert, a resolution).

Labels are the alert's identity (Alertmanager groups, routes, silences and deduplicates by
them): `alertname` (per check family, `MemwardenGatewayLive`), `check` (the key), `severity`,
`gateway` and `instance` (this gateway's name), the subject a keyed check is about (`mount`,
`memwarden_job`, `agent`), `agent`/`session` when the check's details name them, then the
operator's extra labels. Annotations are for people: the check's message and what to do
(`FIXES`: one line per check family; docs/health.md says the same at length).

Alertmanager deduplicates by labels: a firing alert sent every run is still one alert, with one
notification.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

import orjson

from memwarden.alerts import Alert
from memwarden.health.model import CheckResult, utc_time

DOCS = "docs/health.md"
FIXES = {
    "gateway.state_dir": "memwarden is pointed at a folder with no gateway: fix --state-dir, "
    "$OPENCLAW_STATE_DIR or gateway.state_dir (`memwarden config show` says which is used).",
    "memwarden.state": "memwarden cannot write its state database: free space on its "
    "filesystem, or end the process holding state.db (`lsof <state.db>`).",
    "gateway.live": "The gateway is down or hung: `openclaw gateway status`, read its logs "
    "(`openclaw logs --follow`) and restart it.",
    "gateway.ready": "The gateway runs but is not ready: read its logs for the failing channels "
    "or plugins.",
    "gateway.rpc": "The HTTP side answers but not the RPC: check the gateway token "
    "(MEMWARDEN_GATEWAY_TOKEN) and the gateway logs.",
    "gateway.process": "No gateway process on this machine: start it and find out why it "
    "stopped (OOM killer, crash loop in its service logs).",
    "disk": "Free space: `memwarden maintain`, remove old *.jsonl.reset.* archives, or grow "
    "the volume.",
    "transcripts.volume": "Run `memwarden maintain` (retention of archives), or raise "
    "health.transcript_warning_mb.",
    "memory.oversized": "Split the file and move old parts to memory/archive/; `memwarden "
    "index` catalogs them.",
    "bootstrap.budget": "Trim the file named, or move older MEMORY.md entries into files "
    "under memory/ (`memwarden index` catalogs them), or raise the gateway's bootstrapMaxChars "
    "or bootstrapTotalMaxChars.",
    "cron.errors": "`openclaw cron runs --id <jobId>` and the gateway logs: a failing model "
    "provider, delivery channel or prompt.",
    "jobs.stale": "`memwarden status` shows the job's last outcome; check that its timer is "
    "installed and running.",
    "rotate.failing": "`memwarden status` and `memwarden events` show the errors: token scope, "
    "sessions changing under rotation, or the gateway unreachable.",
    "context.pressure": "Rotation has not handled these conversations: is rotate running or "
    "failing? `memwarden rotate --dry-run` shows its decision.",
    "config.drift": "Compare the gateway config with the backup named in the message and "
    "restore what is missing.",
    "sessions.store": "The file named cannot be read; a corrupt sessions.json has "
    "sessions.json.bak.* copies beside it.",
}
# Keyed checks (`<family>:<subject>`) whose subject becomes a label of its own.
SUBJECT_LABELS = {"disk": "mount", "jobs.stale": "memwarden_job", "sessions.store": "agent"}
DETAIL_LABELS = ("agent", "session")


@dataclass(frozen=True)
class Identity:
    """What every alert of this gateway carries: its name and the operator's extra labels."""

    gateway: str
    extra_labels: Mapping[str, str] = field(default_factory=dict)


def alert_name(key: str) -> str:
    """Given a check key, return its alertname: `disk:/var` → `MemwardenDisk`."""
    words = family(key).replace("_", ".").replace("-", ".").split(".")
    return "Memwarden" + "".join(word[:1].upper() + word[1:] for word in words if word)


def alert_labels(result: CheckResult, identity: Identity) -> dict[str, str]:
    """Given a bad check result and this gateway's identity, return the alert's labels."""
    labels = dict(identity.extra_labels)
    subject_label = SUBJECT_LABELS.get(family(result.key))
    if subject_label and ":" in result.key:
        labels[subject_label] = result.key.split(":", 1)[1]
    for name in DETAIL_LABELS:
        value = result.details.get(name)
        if isinstance(value, str) and value:
            labels[name] = value
    labels.update(
        alertname=alert_name(result.key),
        check=result.key,
        severity=result.status.value,
        gateway=identity.gateway,
        instance=identity.gateway,
    )
    return labels


def family(key: str) -> str:
    """Given a check key (`disk:/var`), return its family (`disk`)."""
    return key.split(":", 1)[0]


def fix_for(key: str) -> str:
    """Given a check key, return what to do about it (a pointer to the docs when unknown)."""
    return FIXES.get(family(key), f"See {DOCS} for the check {family(key)}.")


@dataclass(frozen=True)
class FeedAlert:
    """One alert Alertmanager knows, or must learn, about. Times are epoch seconds;
    `ends_at` is None while the alert fires."""

    fingerprint: str
    check_key: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: float
    ends_at: float | None = None
    delivered_at: float | None = None
    attempts: int = 0
    last_error: str | None = None

    @property
    def firing(self) -> bool:
        return self.ends_at is None

    @property
    def pending(self) -> bool:
        """Alertmanager has not heard this alert's latest news: never delivered, or its last
        re-send failed (a firing alert not refreshed lapses there after resolve_timeout)."""
        return self.delivered_at is None or self.last_error is not None


def fingerprint(labels: Mapping[str, str]) -> str:
    """Given a label set, return a stable id for it."""
    digest = hashlib.sha256(orjson.dumps(sorted(labels.items()))).hexdigest()
    return digest[:24]


def decide_feed(
    stored: Mapping[str, FeedAlert],
    bad: Sequence[tuple[CheckResult, float]],
    identity: Identity,
    now: float,
) -> list[FeedAlert]:
    """Given the stored alerts by fingerprint, the bad results with the time each turned bad,
    this gateway's identity and the time, return every alert to keep after this run: the
    firing ones (in result order), then the resolved ones still to deliver."""
    firing: dict[str, FeedAlert] = {}
    for result, since in bad:
        labels = alert_labels(result, identity)
        key = fingerprint(labels)
        previous = stored.get(key)
        annotations = {"summary": result.message, "fix": fix_for(result.key)}
        if previous is not None and previous.firing:
            firing[key] = replace(previous, annotations=annotations)
        else:
            firing[key] = FeedAlert(key, result.key, labels, annotations, since)
    resolved = [
        _resolved(alert, now) if alert.firing else alert
        for key, alert in stored.items()
        if key not in firing
    ]
    return list(firing.values()) + resolved


def alerts_to_send(
    alerts: Sequence[FeedAlert], now: float, lifetime: timedelta, generator_url: str = ""
) -> tuple[Alert, ...]:
    """Given the feed, the time and how long an open alert lives without news, return what to
    post: every firing alert (ending one lifetime from now) and every pending resolution."""
    expires = utc_time(now) + lifetime
    return tuple(
        Alert(
            alert.labels,
            alert.annotations,
            utc_time(alert.starts_at),
            expires if alert.ends_at is None else utc_time(alert.ends_at),
            generator_url,
        )
        for alert in alerts
        if alert.firing or alert.pending
    )


def after_send(alerts: Sequence[FeedAlert], now: float, error: str | None) -> list[FeedAlert]:
    """Given the feed as sent, the time and the send's error (None: Alertmanager accepted it),
    return the feed to keep: delivered resolutions dropped, the others marked delivered; or, on
    failure, each alert that was sent (firing or pending) with one more attempt and the error."""
    if error is None:
        return [
            replace(alert, delivered_at=now, attempts=0, last_error=None)
            for alert in alerts
            if alert.firing
        ]
    return [
        replace(alert, attempts=alert.attempts + 1, last_error=error)
        if alert.firing or alert.pending
        else alert
        for alert in alerts
    ]


def _resolved(alert: FeedAlert, now: float) -> FeedAlert:
    return replace(alert, ends_at=now, delivered_at=None, attempts=0, last_error=None)
