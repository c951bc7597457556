"""Which storage memwarden uses for this gateway, and a root left to a gateway that moved."""

from __future__ import annotations

import shlex

from memwarden.doctor.finding import Finding
from memwarden.store.storage import OWNER_FILE, Storage


def check_storage(storage: Storage, owner_exists: bool) -> list[Finding]:
    """Given this gateway's storage and whether the root's owner still exists, return findings.

    A root owned by a state dir that is gone is most often this same gateway moved (its real
    path changed): its earlier state then sits in the root while this one starts afresh.
    """
    findings = [
        Finding("storage", "info", f"memwarden's state for this gateway: {storage.describe()}")
    ]
    if storage.owner is not None and storage.owner != storage.gateway and not owner_exists:
        record = f'{{"state_dir": "{storage.gateway}"}}'
        findings.append(
            Finding(
                "storage.owner",
                "warning",
                f"the state in {storage.root} belongs to the gateway at {storage.owner}, which "
                f"no longer exists; this gateway keeps its own in {storage.path}. If "
                f"{storage.owner} was this gateway before it moved, give it its state back",
                f"echo {shlex.quote(record)} > {shlex.quote(str(storage.root / OWNER_FILE))}",
            )
        )
    return findings
