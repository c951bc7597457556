"""How metrics and alerts name this gateway: `health.gateway_name`, else `<host>:<port>`."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from memwarden.health.checks import HealthInputs
from memwarden.health.checks.gateway import gateway_base_url, is_loopback_url


def gateway_name(inputs: HealthInputs) -> str:
    """Given the health inputs, return the gateway's name for labels.

    The default is this machine's host name and the gateway's port (`box:18789`), or the
    gateway URL's own host when the gateway is not on this machine: unique across a fleet
    unless two machines share a host name.
    """
    configured = inputs.health.gateway_name.strip()
    if configured:
        return configured

    base_url = gateway_base_url(inputs)
    parts = urlsplit(base_url)
    host = socket.gethostname() if is_loopback_url(base_url) else (parts.hostname or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host
