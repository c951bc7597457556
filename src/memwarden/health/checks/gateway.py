"""Gateway liveness (`GET /healthz`), readiness (`GET /readyz`) and, optionally, the `health` RPC.

memwarden's alerts never go through the gateway: a gateway that is down cannot report itself.
When liveness fails, readiness and the RPC are not tried (each would wait for the same timeout):
they are not reported at all, and the liveness result masks them, so one outage is one alert
and an alert already open about readiness stays open. It also holds the rotate job's checks:
rotate resets sessions through the gateway, so its failures while the gateway is down are the
outage again (shown, but no alert of their own).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, critical, ok, warning
from memwarden.openclaw.endpoint import http_base, resolve_endpoint
from memwarden.openclaw.http_probe import ProbeResult, probe_liveness, probe_readiness
from memwarden.process.errors import GatewayConfigError
from memwarden.settings.urls import shown_url

LIVE = "gateway.live"
READY = "gateway.ready"
RPC = "gateway.rpc"
# What fails because the gateway is down: the only job that calls it (rotate).
OUTAGE_EFFECTS = ("rotate.failing", "jobs.stale:rotate")


def check_gateway(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, probe the gateway over HTTP (and RPC when enabled); return the results."""
    base_url = gateway_base_url(inputs)
    timeout = inputs.health.probe_timeout_seconds
    local = is_loopback_url(base_url)
    # TLS settings matter only for https; building the default SSL context costs ~50 ms a run.
    verify = base_url.startswith("https://")
    with httpx.Client(timeout=timeout, trust_env=not local, verify=verify) as client:
        live = probe_liveness(client, base_url)
        results = [grade_liveness(live, timeout)]
        if live.ok:
            results.append(grade_readiness(probe_readiness(client, base_url)))
    if live.ok and inputs.health.rpc_check:
        results.append(call_health(inputs))
    return results


def call_health(inputs: HealthInputs) -> CheckResult:
    """Given the inputs, call the optional `health` RPC over the gateway's WebSocket (needs the
    gateway token); return `gateway.rpc`."""
    # lazy: websockets (about 55 ms) only when the RPC check is on
    from memwarden.openclaw.gateway import GatewayAuthError, GatewayClient, GatewayError

    url, token = resolve_endpoint(inputs.config, inputs.deployment, inputs.env)
    try:
        with GatewayClient(url, token, timeout=inputs.health.probe_timeout_seconds) as client:
            payload = client.call("health")
    except GatewayAuthError as error:
        return warning(RPC, f"health RPC refused: {error.message}")
    except GatewayError as error:
        return critical(RPC, f"health RPC failed: {error.message}")
    return grade_rpc(payload)


def grade_rpc(payload: Any) -> CheckResult:
    """Given the `health` payload, return `gateway.rpc`: ok when it says `ok: true`."""
    if isinstance(payload, dict) and payload.get("ok") is True:
        return ok(RPC, "health RPC ok", payload.get("durationMs"))
    return critical(RPC, f"health RPC answered not ok: {str(payload)[:120]}")


def gateway_name(inputs: HealthInputs) -> str:
    """Given the health inputs, return the gateway's name for metrics and alert labels:
    `health.gateway_name`, else this machine's host name and the gateway's port (`box:18789`),
    or the gateway URL's own host when the gateway is not on this machine: unique across a
    fleet unless two machines share a host name.
    """
    configured = inputs.health.gateway_name.strip()
    if configured:
        return configured
    base_url = gateway_base_url(inputs)
    parts = urlsplit(base_url)
    host = socket.gethostname() if is_loopback_url(base_url) else (parts.hostname or "")
    # a port that is not a number is refused with the settings (gateway.url, gateway_http_url)
    return f"{host}:{parts.port}" if parts.port else host


def gateway_base_url(inputs: HealthInputs) -> str:
    """Return the gateway's HTTP base URL: `health.gateway_http_url`, else the HTTP side of the
    gateway's WebSocket endpoint. An unreadable gateway config does not stop the probes: the
    port then comes from the environment or the default."""
    explicit = inputs.health.gateway_http_url.strip()
    if explicit:
        return explicit.rstrip("/")

    try:
        deployment = inputs.deployment
    except GatewayConfigError:
        deployment = None
    url, _token = resolve_endpoint(inputs.config, deployment, inputs.env)
    return http_base(url)


def grade_liveness(live: ProbeResult, timeout: float) -> CheckResult:
    """Given the /healthz probe, return `gateway.live`: critical unless the gateway is live,
    then masking readiness and the RPC, which are not probed, and holding the rotate job's
    checks."""
    if live.ok:
        return ok(
            LIVE,
            f"gateway live at {shown_url(live.url)} ({live.elapsed_ms:.0f} ms)",
            live.elapsed_ms,
        )
    result = critical(
        LIVE,
        f"gateway not live: {shown_url(live.url)}: {live.detail} (readiness not probed)",
        live.status_code,
        200,
        timeout_seconds=timeout,
    )
    return replace(result, masks=(READY, RPC), holds=OUTAGE_EFFECTS)


def grade_readiness(ready: ProbeResult) -> CheckResult:
    """Given the /readyz probe, return `gateway.ready`."""
    if ready.ok:
        uptime = (ready.body or {}).get("uptimeMs")
        return ok(READY, "gateway ready", uptime)
    failing = (ready.body or {}).get("failing")
    return critical(
        READY,
        f"gateway not ready: {shown_url(ready.url)}: {ready.detail}",
        ready.status_code,
        200,
        failing=failing if isinstance(failing, list) else None,
    )


def is_loopback_url(url: str) -> bool:
    """Given a URL, return True when its host is this machine (localhost or a loopback IP)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
