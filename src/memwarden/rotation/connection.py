"""The gateway connection of one rotate run: reopened after a call broke it, and a reset that
never resets a session whose id changed since it was listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memwarden.openclaw.gateway import GatewayCallError, GatewayClient

if TYPE_CHECKING:
    from memwarden.rotation.policy import Decision


class GatewayConnection:
    """A lazily (re)opened GatewayClient; use as a context manager."""

    def __init__(self, url: str, token: str | None, timeout: float, reset_timeout: float) -> None:
        self.url = url
        self._token = token
        self.timeout = timeout
        self.reset_timeout = reset_timeout
        self._client: GatewayClient | None = None

    def __enter__(self) -> GatewayConnection:
        self.client()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.discard()

    def client(self) -> GatewayClient:
        """Return the open client, connecting first if needed. Raise GatewayError if it fails."""
        if self._client is None:
            client = GatewayClient(self.url, self._token, self.timeout)
            client.connect()
            self._client = client
        return self._client

    def discard(self) -> None:
        """Close the client; the next call reconnects (after a timeout or a broken connection)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def reset(self, decision: Decision, reset_reason: str) -> Any:
        """Given a decision to rotate and the reset reason, reset its session; return the payload.

        The reset carries `expectedSessionId`, so the gateway refuses it when the session moved
        on (GatewayCallError with reason `session-changed`). Gateways before 2026.8 reject that
        field ("unexpected property"): for them the id is checked again through sessions.list
        right before a reset without it. Raise GatewayError subclasses as the client does.
        """
        params = {"key": decision.key, "reason": reset_reason}
        timeout = max(self.timeout, self.reset_timeout)
        guarded = {**params, "expectedSessionId": decision.session_id}
        try:
            return self.client().call("sessions.reset", guarded, timeout)
        except GatewayCallError as error:
            if "expectedSessionId" not in error.gateway_message:
                raise
        if self._current_session_id(decision) != decision.session_id:
            changed = {"reason": "session-changed"}
            raise GatewayCallError("sessions.reset", "INVALID_REQUEST", "session changed", changed)
        return self.client().call("sessions.reset", params, timeout)

    def _current_session_id(self, decision: Decision) -> str | None:
        params = {"agentId": decision.agent_id} if decision.agent_id else {}
        for row in self.client().list_sessions(params):
            if row.get("key") == decision.key:
                return row.get("sessionId")
        return None
