"""Are private files private, and is the code the timers run writable only by its owner?"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from typing import Literal

from memwarden.doctor.finding import Finding, Severity

Kind = Literal["secret", "private", "code"]


@dataclass(frozen=True)
class PathFacts:
    """A path to judge: what it is (`label`), its mode, and the kind of protection it needs.

    `secret`: only its owner may read it (secrets file, a config holding a token, memwarden's
    state). `private`: holds conversations; readable by others is a warning, as is a readable
    `secret` folder. `code`: run by the timers; writable by others is a way in. `unreadable`
    says why the path could not be looked at (a file where a folder should be, no access).
    """

    key: str
    label: str
    path: str
    mode: int  # st_mode: the file type (folder or not) and the permission bits
    kind: Kind
    unreadable: str | None = None  # why its mode could not be read (then mode: unknown)


def check_permission(fact: PathFacts) -> Finding:
    """Given the facts of one path, return its finding."""
    if fact.unreadable is not None:
        message = f"could not check the mode of {fact.label}: {fact.unreadable}"
        return Finding(fact.key, "warning", message)
    bits = stat.S_IMODE(fact.mode)
    shown = f"{fact.label} {fact.path} is {bits:04o}"
    private_mode = "700" if stat.S_ISDIR(fact.mode) else "600"
    if bits & 0o022:
        if fact.kind == "code":
            fix = f"chmod go-w {fact.path}"
        else:
            fix = f"chmod {private_mode} {fact.path}"
        return Finding(fact.key, "action", f"{shown}: other users can change it", fix)
    if fact.kind != "code" and bits & 0o044:
        # A readable folder of private files shows their names, not their content.
        severe = fact.kind == "secret" and not stat.S_ISDIR(fact.mode)
        severity: Severity = "action" if severe else "warning"
        return Finding(
            fact.key,
            severity,
            f"{shown}: other users can read it",
            f"chmod {private_mode} {fact.path}",
        )
    return Finding(fact.key, "ok", shown)
