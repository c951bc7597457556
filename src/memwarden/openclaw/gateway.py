"""Talk to a running OpenClaw gateway: WebSocket RPC (protocol 4) and HTTP probes.

The gateway speaks first (event `connect.challenge`); the client's first request is `connect`
with protocol 4, client `gateway-client`/`backend`, the operator role and scopes, and the
shared token. Requests and responses are matched by `id`; events (`tick`, `health`, …) may
arrive in between and are skipped. The timeout is a deadline on the whole of each step, not on
each read: connecting (handshake, challenge and `connect` together), each call, and closing
(at most 2 s) each end in time however slowly the other side sends.

    with GatewayClient(url, token, timeout=10) as client:
        rows = client.list_sessions()
        client.reset_session(key, old_id, agent_id, "new", timeout=10)

Every failure is a `GatewayError` (`GatewayAuthError` for a refused token, `GatewayCallError`
for a method the gateway refused) with a one-line message meant for the operator. The
token never appears in a message, a log line, or a repr.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.sync.client import ClientConnection, connect
from websockets.uri import parse_uri

from memwarden import __version__
from memwarden.openclaw.fields import integer as _integer
from memwarden.openclaw.fields import text as _text
from memwarden.openclaw.keys import classify
from memwarden.process.errors import EXIT_USAGE, MemwardenError
from memwarden.settings.urls import shown_url

log = logging.getLogger("memwarden.gateway")

PROTOCOL = 4
CLIENT_ID = "gateway-client"
CLIENT_MODE = "backend"
OPERATOR_SCOPES = ("operator.admin", "operator.read", "operator.write")
DEFAULT_PAGE_SIZE = 200
MAX_PAGES = 10_000
MAX_FRAME_BYTES = 64 * 1024 * 1024
_AUTH_CODES = {
    "AUTH_TOKEN_MISMATCH": "refused the token",
    "AUTH_TOKEN_MISSING": "needs a token and none was given",
    "AUTH_UNAUTHORIZED": "refused the credentials",
}


# --- errors ------------------------------------------------------------------------------------


class GatewayError(MemwardenError):
    """The gateway could not be used (nothing answered as a gateway at the URL, a call was not
    answered in time, a frame was not JSON, the connection closed, …); the message says what
    to check."""


class GatewayAuthError(GatewayError):
    """The gateway refused memwarden's credentials: a configuration problem."""

    exit_code = EXIT_USAGE


class GatewayCallError(GatewayError):
    """The gateway answered a call with `ok: false`."""

    def __init__(self, method: str, code: str, message: str, details: Mapping[str, Any]) -> None:
        super().__init__(f"gateway refused {method}: {message} ({code})")
        self.code = code
        self.gateway_message = message
        reason = details.get("reason") or details.get("code")
        self.reason = reason if isinstance(reason, str) else None  # `session-changed`, …


# --- sessions as the gateway lists them --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One row of `sessions.list`: what rotation decides on. Times are Unix milliseconds."""

    key: str
    agent_id: str | None
    session_id: str | None
    updated_at: int | None
    last_interaction_at: int | None
    status: str | None
    has_active_run: bool
    total_tokens: int | None
    total_tokens_fresh: bool | None
    context_tokens: int | None


def parse_session_row(row: Mapping[str, Any]) -> SessionRow | None:
    """Given one `sessions.list` row, return a SessionRow, or None when it has no key."""
    key = row.get("key")
    if not isinstance(key, str) or not key.strip():
        return None
    return SessionRow(
        key=key,
        agent_id=classify(key).agent_id,
        session_id=_text(row.get("sessionId")),
        updated_at=_integer(row.get("updatedAt")),
        last_interaction_at=_integer(row.get("lastInteractionAt")),
        status=_text(row.get("status")),
        has_active_run=row.get("hasActiveRun") is True or row.get("hasActiveSubagentRun") is True,
        total_tokens=_integer(row.get("totalTokens")),
        total_tokens_fresh=row.get("totalTokensFresh")
        if isinstance(row.get("totalTokensFresh"), bool)
        else None,
        context_tokens=_positive(row.get("contextTokens")),
    )


# --- the client --------------------------------------------------------------------------------


@dataclass
class GatewayClient:
    """A connection to the gateway's WebSocket RPC. Use as a context manager."""

    url: str
    token: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    hello: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _socket: ClientConnection | None = field(default=None, init=False, repr=False)

    @property
    def shown_url(self) -> str:
        """The URL without its user name or password, to show in messages."""
        return shown_url(self.url)

    @property
    def server_version(self) -> str | None:
        """The gateway's version as its `hello-ok` says (None before connecting, or unsaid)."""
        server = self.hello.get("server") if isinstance(self.hello, dict) else None
        version = server.get("version") if isinstance(server, dict) else None
        return str(version) if version else None

    def __enter__(self) -> GatewayClient:
        self.connect()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def connect(self) -> None:
        """Open the connection and authenticate; keep the `hello-ok` payload in `hello`.

        Raise GatewayAuthError if the gateway refuses the credentials, GatewayError otherwise.
        """
        deadline = time.monotonic() + self.timeout
        self._socket = self._open()
        try:
            self._await_challenge(deadline)
            self.hello = self._request("connect", self._connect_params(), self.timeout, deadline)
        except GatewayError:
            self.close()
            raise
        log.debug("connected to %s (server %s)", self.shown_url, self.server_version or "unknown")

    def close(self) -> None:
        """Close the connection (quietly if it is already gone)."""
        if self._socket is not None:
            with contextlib.suppress(OSError, ConnectionClosed):
                self._socket.close()
            self._socket = None

    def call(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float | None = None
    ) -> Any:
        """Given a method and its params, return the response payload.

        Raise GatewayCallError if the gateway answers `ok: false`, GatewayError if no answer
        comes within `timeout` (default: the client's), the connection breaks or a frame is not
        JSON. Those GatewayErrors leave the client closed, and a closed client connects again
        first: one failed call never makes the next one fail.
        """
        if self._socket is None:
            self.connect()
        try:
            return self._request(method, dict(params or {}), timeout or self.timeout)
        except GatewayCallError:
            raise
        except GatewayError:
            self.close()
            raise

    def reset_session(
        self, key: str, session_id: str | None, agent_id: str | None, reason: str, timeout: float
    ) -> tuple[str | None, Any]:
        """Given a session (key, the id it was listed with, its agent), reset it with `reason`;
        return the session id and lifecycle revision the reply names (None when it names none).
        Never reset a session whose id changed since it was listed.

        The reset carries `expectedSessionId`, so the gateway refuses it when the session moved
        on (GatewayCallError with reason `session-changed`). Gateways before 2026.8 reject that
        field ("unexpected property"): for them the id is checked again through sessions.list
        right before a reset without it.
        """
        params = {"key": key, "reason": reason}
        try:
            return _reset_ids(
                self.call("sessions.reset", {**params, "expectedSessionId": session_id}, timeout)
            )
        except GatewayCallError as error:
            if "expectedSessionId" not in error.gateway_message:
                raise
        listed = self.list_sessions({"agentId": agent_id} if agent_id else {})
        current = next((row.get("sessionId") for row in listed if row.get("key") == key), None)
        if current != session_id:
            changed = {"reason": "session-changed"}
            raise GatewayCallError("sessions.reset", "INVALID_REQUEST", "session changed", changed)
        return _reset_ids(self.call("sessions.reset", params, timeout))

    def list_sessions(
        self, params: Mapping[str, Any] | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> list[dict[str, Any]]:
        """Return every row of `sessions.list`, paging (`limit`/`offset`) until `hasMore` is false.

        Raise GatewayError if a page is not shaped as a list response or its paging does not
        move forward.
        """
        rows: list[dict[str, Any]] = []
        offset = 0
        for _ in range(MAX_PAGES):
            page_params = {**(params or {}), "limit": page_size}
            if offset:
                page_params["offset"] = offset
            page = self.call("sessions.list", page_params)
            sessions = page.get("sessions") if isinstance(page, dict) else None
            if not isinstance(sessions, list):
                raise GatewayError("gateway sessions.list answer has no sessions list")
            rows.extend(row for row in sessions if isinstance(row, dict))
            if page.get("hasMore") is not True:
                return rows
            next_offset = page.get("nextOffset")
            if not isinstance(next_offset, int):
                next_offset = offset + len(sessions)
            if next_offset <= offset:
                raise GatewayError(
                    f"gateway sessions.list paging does not advance (offset {offset})"
                )
            offset = next_offset
        raise GatewayError(f"gateway sessions.list still has more after {MAX_PAGES} pages")

    # --- internals -----------------------------------------------------------------------------

    def _open(self) -> ClientConnection:
        try:
            parse_uri(self.url)  # apart from connect(): its other ValueErrors are not the URL's
        except (InvalidURI, ValueError) as error:
            raise GatewayError(
                f"gateway URL {self.shown_url!r} is not a ws:// or wss:// URL: fix gateway.url"
            ) from error
        try:
            # Entered as a context manager, as websockets ≥ 17 wants; close() exits it.
            return connect(
                self.url,
                open_timeout=self.timeout,
                close_timeout=min(self.timeout, 2.0),
                max_size=MAX_FRAME_BYTES,
                proxy=None,
                user_agent_header=f"memwarden/{__version__}",
            ).__enter__()
        except InvalidStatus as error:
            status = error.response.status_code
            raise GatewayError(
                f"{self.shown_url} answered HTTP {status} instead of a WebSocket: is gateway.url "
                "the gateway's port?"
            ) from error
        except TimeoutError as error:
            raise GatewayError(
                f"gateway at {self.shown_url} did not answer within {self.timeout:g} s: "
                "is it running?"
            ) from error
        except (OSError, InvalidHandshake) as error:
            reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
            raise GatewayError(
                f"cannot reach the gateway at {self.shown_url} ({reason}): is it running? "
                "(`openclaw gateway status`; set gateway.url if it listens elsewhere)"
            ) from error

    def _await_challenge(self, deadline: float) -> None:
        while True:
            frame = self._receive("connect", deadline, self.timeout)
            if frame.get("type") == "event" and frame.get("event") == "connect.challenge":
                return

    def _connect_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "minProtocol": PROTOCOL,
            "maxProtocol": PROTOCOL,
            "client": {
                "id": CLIENT_ID,
                "version": __version__,
                "platform": "memwarden",
                "mode": CLIENT_MODE,
            },
            "role": "operator",
            "scopes": list(OPERATOR_SCOPES),
            "caps": [],
        }
        if self.token:
            params["auth"] = {"token": self.token}
        return params

    def _request(
        self, method: str, params: dict[str, Any], timeout: float, deadline: float | None = None
    ) -> Any:
        socket = self._connected(method)
        request_id = uuid.uuid4().hex
        frame = {"type": "req", "id": request_id, "method": method, "params": params}
        try:
            socket.send(orjson.dumps(frame).decode())
        except (ConnectionClosed, OSError) as error:
            raise GatewayError(
                f"gateway connection lost before {method} was sent ({_closed_reason(error)})"
            ) from error
        log.debug("gateway call %s", method)
        if deadline is None:
            deadline = time.monotonic() + timeout
        while True:
            answer = self._receive(method, deadline, timeout)
            if answer.get("type") == "res" and answer.get("id") == request_id:
                return self._payload(method, answer)

    def _receive(self, method: str, deadline: float, timeout: float) -> dict[str, Any]:
        socket = self._connected(method)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._timeout(method, timeout)
        try:
            message = socket.recv(timeout=remaining)
        except TimeoutError as error:
            raise self._timeout(method, timeout) from error
        except (ConnectionClosed, OSError) as error:
            raise GatewayError(
                f"gateway closed the connection during {method} ({_closed_reason(error)})"
            ) from error
        try:
            frame = orjson.loads(message)
        except orjson.JSONDecodeError as error:
            raise GatewayError(f"gateway sent a frame that is not JSON during {method}") from error
        if not isinstance(frame, dict):
            raise GatewayError(f"gateway sent a frame that is not an object during {method}")
        return frame

    def _payload(self, method: str, answer: Mapping[str, Any]) -> Any:
        if answer.get("ok") is True:
            return answer.get("payload")
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        code = str(error.get("code") or "UNKNOWN")
        message = str(error.get("message") or "no message")
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        detail_code = details.get("code")
        if method == "connect" and detail_code in _AUTH_CODES:
            raise GatewayAuthError(
                f"gateway at {self.shown_url} {_AUTH_CODES[detail_code]} ({detail_code}): set "
                "MEMWARDEN_GATEWAY_TOKEN or OPENCLAW_GATEWAY_TOKEN to the gateway's "
                "gateway.auth.token"
            )
        if method == "connect":
            raise GatewayAuthError(
                f"gateway at {self.shown_url} refused the connection: {message} "
                f"({detail_code or code})"
            )
        raise GatewayCallError(method, code, message, details)

    def _connected(self, method: str) -> ClientConnection:
        if self._socket is None:
            raise GatewayError(f"gateway call {method}: not connected")
        return self._socket

    def _timeout(self, method: str, timeout: float) -> GatewayError:
        return GatewayError(
            f"gateway at {self.shown_url} did not answer {method} within {timeout:g} s "
            "(raise gateway.timeout_seconds if it is busy)"
        )


# --- helpers -----------------------------------------------------------------------------------


def _closed_reason(error: BaseException) -> str:
    if isinstance(error, ConnectionClosed):
        received = error.rcvd
        if received is not None:
            return f"close code {received.code}" + (
                f": {received.reason}" if received.reason else ""
            )
        return "connection dropped"
    return getattr(error, "strerror", None) or type(error).__name__


def _positive(value: object) -> int | None:
    number = _integer(value)
    return number if number is not None and number > 0 else None


def _reset_ids(payload: Any) -> tuple[str | None, Any]:
    """The session id and lifecycle revision a `sessions.reset` reply names (None: none)."""
    entry = payload.get("entry") if isinstance(payload, dict) else None
    entry = entry if isinstance(entry, dict) else {}
    return entry.get("sessionId"), entry.get("lifecycleRevision")
