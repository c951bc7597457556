"""The optional `health` RPC over the gateway's WebSocket (needs the gateway token)."""

from __future__ import annotations

from typing import Any

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, critical, ok, warning
from memwarden.openclaw.endpoint import resolve_endpoint
from memwarden.openclaw.gateway import GatewayAuthError, GatewayClient, GatewayError

KEY = "gateway.rpc"


def call_health(inputs: HealthInputs) -> CheckResult:
    """Given the inputs, call `health` on the gateway; return `gateway.rpc`."""
    url, token = resolve_endpoint(inputs.config, inputs.deployment, inputs.env)
    try:
        with GatewayClient(url, token, timeout=inputs.health.probe_timeout_seconds) as client:
            payload = client.call("health")
    except GatewayAuthError as error:
        return warning(KEY, f"health RPC refused: {error.message}")
    except GatewayError as error:
        return critical(KEY, f"health RPC failed: {error.message}")
    return grade_rpc(payload)


def grade_rpc(payload: Any) -> CheckResult:
    """Given the `health` payload, return `gateway.rpc`: ok when it says `ok: true`."""
    if isinstance(payload, dict) and payload.get("ok") is True:
        duration = payload.get("durationMs")
        return ok(KEY, "health RPC ok", duration)
    return critical(KEY, f"health RPC answered not ok: {str(payload)[:120]}")
