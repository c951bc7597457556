"""The labels and annotations of the alert a bad check becomes in Alertmanager. Pure.

Labels are the alert's identity (Alertmanager groups, routes, silences and deduplicates by
them): `alertname` (per check family, `MemwardenGatewayLive`), `check` (the key), `severity`,
`gateway` and `instance` (this gateway's name), the subject a keyed check is about (`mount`,
`memwarden_job`, `agent`), `agent`/`session` when the check's details name them, then the
operator's extra labels. Annotations are for people: the check's message and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memwarden.health.fixes import family, fix_for
from memwarden.health.model import CheckResult

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


def alert_annotations(result: CheckResult) -> dict[str, str]:
    """Given a bad check result, return the alert's annotations: `summary` (the check's
    message) and `fix` (what to do)."""
    return {"summary": result.message, "fix": fix_for(result.key)}
