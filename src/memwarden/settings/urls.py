"""URLs in settings: why one cannot be used, and how to show one without its credentials."""

from __future__ import annotations

import re
from collections.abc import Iterable

# scheme://authority… as RFC 3986 splits it: the authority ends at the first /, ? or #.
_AUTHORITY = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://)(?P<authority>[^/?#]*)(?P<tail>.*)", re.DOTALL
)


def url_problem(url: str, schemes: Iterable[str]) -> str | None:
    """Given a URL and the schemes it may have, return why it cannot be used, or None."""
    from urllib.parse import urlsplit  # only when a URL is set

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as error:
        return str(error)  # "Invalid IPv6 URL", "Port out of range 0-65535", …
    if "://" not in url:
        return "no scheme"
    if parts.scheme not in schemes:
        return "another scheme"
    if not parts.hostname:
        return "no host"
    if parts.fragment:
        return "a #fragment means nothing here"
    return None


def shown_url(url: str) -> str:
    """Given a URL (usable or not), return it without user name or password, to show to people."""
    found = _AUTHORITY.match(url)
    if found is None or "@" not in found["authority"]:
        return url.rstrip("/")
    host = found["authority"].rsplit("@", 1)[1]
    return (found["head"] + host + found["tail"]).rstrip("/")
