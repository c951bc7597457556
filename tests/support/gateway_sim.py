"""A fake OpenClaw gateway for tests: a real WebSocket + HTTP server on 127.0.0.1.

It speaks the gateway's protocol as docs/OPENCLAW.md describes it (and as openclaw 2026.7.35 and
2026.9.6 implement it): the server sends `connect.challenge` first; the client's first request
must be `connect` (protocol 4, a known client id, role `operator`, the shared token); requests
`{"type":"req","id","method","params"}` are answered `{"type":"res","id","ok","payload"|"error"}`
with unsolicited events (`tick`, `health`) sent between responses. Plain HTTP on the same port
answers `/healthz`, `/health`, `/readyz`, `/startupz`, and any other path with Control-UI-like
HTML (status 200), as the real gateway does.

Methods: `health`, `status`, `sessions.list` (paged: `limit`, `offset` → `hasMore`,
`nextOffset`, `totalCount`), `sessions.reset` (`key`, `reason`, `expectedSessionId`; the two
behaviours below), `sessions.compact`, `sessions.delete`. `reset`/`compact`/`delete` need the
`operator.admin` scope.

`sessions.reset` accepts `expectedSessionId` unless `accepts_expected_session_id` is False (the
default for a 2026.7.x `version`, whose schema rejects it: "unexpected property").

Reset behaviours (`reset_mode`):
- `"in_place"` (2026.9.6): same sessionId, new `lifecycleRevision`, tokens back to 0; with a
  backing state dir, a `{"type":"reset","reason":…}` line is appended to the transcript (a
  `transcript_events` row in the SQLite era, a JSONL line in the file era).
- `"new_id"` (2026.7.35): the key gets a new sessionId; with a backing file-era state dir the old
  transcript is renamed `<old>.jsonl.reset.<ISO-ts, ":" as "->` and sessions.json is updated (in
  the SQLite era, `session_nodes.current_session_id` changes).

Use:

    with GatewaySimulator(rows=[{"key": "agent:main:main", "totalTokens": 160_000}]) as sim:
        sim.url, sim.http_url, sim.token       # ws://127.0.0.1:<port>, http://…, "sim-token"
        ...                                    # run the code under test
        sim.calls("sessions.reset")            # params of every sessions.reset received
        sim.row("agent:main:main")             # the row as sessions.list shows it now

    sim = GatewaySimulator.from_state_dir(state.state_dir)   # rows from a real state dir copy

Rows are dicts with the gateway's row fields (`key`, `sessionId`, `updatedAt`, `status`,
`hasActiveRun`, `totalTokens`, `totalTokensFresh`, `contextTokens`, `model`, …); missing fields
get defaults (`sessionId` a uuid, `updatedAt` now - 1 h). `sim.set_row(key, **fields)` changes a
row (or adds one) while the server runs.

Fault injection, all on `sim.faults` (a `Faults`), changeable at any time:
- `wrong_token=True`: every `connect` fails with `details.code = "AUTH_TOKEN_MISMATCH"` (the
  same happens when the client sends another token than `sim.token`);
- `no_challenge=True`: the server never sends `connect.challenge`;
- `delay[method] = seconds`: answer that method (or `"connect"`) late;
- `never_answer.add(method)`: never answer that method;
- `drop_on.add(method)`: abort the TCP connection when that method arrives;
- `malformed_on.add(method)`: answer with a frame that is not JSON;
- `errors[method] = {"code", "message", "details"?}`: answer `ok:false` with that error;
- `errors_for_key[key] = {...}` / `drop_on_key.add(key)`: the same, only for requests whose
  `params.key` is that session key (one failing session among others);
- `stray_responses=True`: before each response, send one for an id the client never used;
- `granted_scopes`: the scopes the server grants (default: the three operator scopes);
- `http`: `"ok"`, `"not_ready"` (`/readyz` 503 with `failing`), `"html"` (every path is the
  Control UI's HTML), `"error"` (500 everywhere), `"drop"` (HTTP connections closed unanswered);
  `ready_failing` lists what `/readyz` reports as failing.

Every request is recorded in `sim.requests` (`Received(method, params, connection)`), including
`connect` (its `auth.token` is replaced by `"<redacted>"` there) and those never answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import secrets
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

PROTOCOL = 4
KNOWN_CLIENT_IDS = frozenset(
    {"gateway-client", "cli", "webchat", "openclaw-control-ui", "openclaw-macos", "node-host"}
)
OPERATOR_SCOPES = ("operator.admin", "operator.read", "operator.write")
ADMIN_METHODS = frozenset({"sessions.reset", "sessions.compact", "sessions.delete"})
DEFAULT_LIST_LIMIT = 100
HTML_PAGE = "<!doctype html><html><head><title>OpenClaw Control</title></head><body></body></html>"


@dataclass
class Faults:
    """What the simulator does wrong on purpose (see the module docstring)."""

    wrong_token: bool = False
    no_challenge: bool = False
    delay: dict[str, float] = field(default_factory=dict)
    never_answer: set[str] = field(default_factory=set)
    drop_on: set[str] = field(default_factory=set)
    malformed_on: set[str] = field(default_factory=set)
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors_for_key: dict[str, dict[str, Any]] = field(default_factory=dict)
    drop_on_key: set[str] = field(default_factory=set)
    stray_responses: bool = False
    granted_scopes: tuple[str, ...] = OPERATOR_SCOPES
    http: str = "ok"
    ready_failing: list[str] = field(default_factory=lambda: ["gateway"])


@dataclass(frozen=True)
class Received:
    """One request the simulator received."""

    method: str
    params: dict[str, Any]
    connection: int


@dataclass
class _Backing:
    """Where a row's session lives in a real state dir."""

    era: str
    sessions_dir: Path
    sqlite_path: Path
    transcript: Path | None
    workspace: Path


class GatewaySimulator:
    """A fake gateway on 127.0.0.1 (a free port), served from a background thread."""

    def __init__(
        self,
        rows: Iterable[Mapping[str, Any]] = (),
        *,
        token: str = "sim-token",  # noqa: S107 - the simulator's own test token
        reset_mode: str = "in_place",
        version: str = "2026.9.6",
        default_context_tokens: int = 200_000,
        max_page: int = 500,
    ) -> None:
        if reset_mode not in ("in_place", "new_id"):
            raise ValueError(f"reset_mode must be in_place or new_id, not {reset_mode!r}")
        self.token = token
        self.reset_mode = reset_mode
        self.version = version
        self.default_context_tokens = default_context_tokens
        self.max_page = max_page
        # 2026.7.35's sessions.reset schema has no expectedSessionId (additionalProperties: false).
        self.accepts_expected_session_id = not version.startswith("2026.7.")
        self.faults = Faults()
        self.requests: list[Received] = []
        self.connections = 0
        self.port = 0
        self._rows: dict[str, dict[str, Any]] = {}
        self._backing: dict[str, _Backing] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._seq = 0
        self._started_at = time.time()
        for row in rows:
            self.set_row(
                row["key"], **{name: value for name, value in row.items() if name != "key"}
            )

    # --- construction from a state dir ---------------------------------------------------------

    @classmethod
    def from_state_dir(cls, state_dir: Path, **options: Any) -> GatewaySimulator:
        """Given a gateway state dir (a test copy), return a simulator serving its sessions.

        Resets then change that state dir as the real gateway would. The reset mode follows the
        store's era (SQLite: in place; file: new id) unless `reset_mode` is given.
        """
        from memwarden.openclaw.layout import discover
        from memwarden.openclaw.sessions import load_sessions, sort_newest_first

        deployment = discover(Path(state_dir), env={})
        records = sort_newest_first([r for a in deployment.agents for r in load_sessions(a)])
        agents = {agent.id: agent for agent in deployment.agents}
        eras = {agents[record.agent_id].era for record in records}
        options.setdefault("reset_mode", "new_id" if eras == {"file"} else "in_place")
        options.setdefault("version", "2026.7.35" if eras == {"file"} else "2026.9.6")
        simulator = cls(**options)
        for record in records:
            simulator.set_row(record.key, **_row_from_record(record))
            agent = agents[record.agent_id]
            transcript = record.transcript.path if record.transcript else None
            simulator._backing[record.key] = _Backing(
                agent.era, agent.sessions_dir, agent.sqlite_path, transcript, agent.workspace
            )
        return simulator

    # --- rows ----------------------------------------------------------------------------------

    def set_row(self, key: str, **fields: Any) -> dict[str, Any]:
        """Add or change the row of `key`; return a copy of it."""
        with self._lock:
            row = self._rows.get(key) or _default_row(key)
            row.update(fields)
            self._rows[key] = row
            return copy.deepcopy(row)

    def row(self, key: str) -> dict[str, Any]:
        """Return a copy of the row of `key`. Raise KeyError if there is none."""
        with self._lock:
            return copy.deepcopy(self._rows[key])

    @property
    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(row) for row in self._rows.values()]

    def calls(self, method: str) -> list[dict[str, Any]]:
        """Return the params of every request of `method` received so far, in order."""
        return [request.params for request in list(self.requests) if request.method == method]

    @property
    def events_sent(self) -> int:
        """How many event frames the simulator has sent so far, on every connection."""
        with self._lock:
            return self._seq

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> GatewaySimulator:
        """Start serving on a free port; return self once it listens."""
        self._thread = threading.Thread(target=self._run, name="gateway-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the gateway simulator did not start within 10 s")
        if self._startup_error is not None:
            raise RuntimeError(f"the gateway simulator failed: {self._startup_error}")
        return self

    def stop(self) -> None:
        """Close every connection and stop serving (the port is then closed)."""
        if self._loop is not None and self._stopping is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> GatewaySimulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as error:  # noqa: BLE001 - reported to start()
            self._startup_error = error
            self._ready.set()
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        async with serve(
            self._handle,
            "127.0.0.1",
            0,
            process_request=self._process_http,
            ping_interval=None,
            max_size=64 * 1024 * 1024,
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stopping.wait()
            server.close(close_connections=True)

    async def _sleep(self, seconds: float) -> None:
        """Wait `seconds`, or less when the simulator stops."""
        assert self._stopping is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    # --- HTTP ----------------------------------------------------------------------------------

    def _process_http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0]
        mode = self.faults.http
        if mode == "drop":
            connection.transport.abort()
            return connection.respond(500, "dropped")
        if mode == "error":
            return connection.respond(500, "Internal Server Error")
        if mode != "html":
            if path in ("/health", "/healthz"):
                return _json_response(connection, 200, {"ok": True, "status": "live"})
            if path == "/readyz":
                return self._readyz(connection, ready=mode != "not_ready")
            if path == "/startupz":
                return _json_response(
                    connection, 200, {"status": "started", "version": self.version}
                )
        return _with_content_type(connection.respond(200, HTML_PAGE), "text/html; charset=utf-8")

    def _readyz(self, connection: ServerConnection, ready: bool) -> Response:
        uptime_ms = int((time.time() - self._started_at) * 1000)
        failing = [] if ready else list(self.faults.ready_failing)
        body = {"ready": ready, "failing": failing, "uptimeMs": uptime_ms}
        return _json_response(connection, 200 if ready else 503, body)

    # --- WebSocket -----------------------------------------------------------------------------

    async def _handle(self, connection: ServerConnection) -> None:
        with self._lock:
            self.connections += 1
            number = self.connections
        try:
            if not self.faults.no_challenge:
                await self._event(connection, "connect.challenge", _challenge())
            if not await self._handshake(connection, number):
                return
            async for message in connection:
                await self._dispatch(connection, number, message)
        except ConnectionClosed:
            return

    async def _handshake(self, connection: ServerConnection, number: int) -> bool:
        frame = _parse(await connection.recv())
        if frame is None or frame.get("type") != "req" or frame.get("method") != "connect":
            await connection.close(1008, "first request must be connect")
            return False
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        self._record("connect", _redacted(params), number)
        if await self._apply_faults(connection, frame, "connect"):
            return False
        error, close_code = self._connect_error(params)
        if error is not None:
            await self._respond(connection, frame["id"], error=error)
            await connection.close(close_code, error["message"][:120])
            return False
        await self._respond(connection, frame["id"], payload=self._hello(params))
        await self._event(connection, "health", {"ok": True, "ts": _now_ms()})
        return True

    def _connect_error(self, params: Mapping[str, Any]) -> tuple[dict[str, Any] | None, int]:
        low, high = params.get("minProtocol"), params.get("maxProtocol")
        if not (isinstance(low, int) and isinstance(high, int) and low <= PROTOCOL <= high):
            details = {"code": "PROTOCOL_MISMATCH", "expectedProtocol": PROTOCOL}
            return _error("INVALID_REQUEST", "protocol mismatch", details), 1002
        client = params.get("client") if isinstance(params.get("client"), dict) else {}
        if client.get("id") not in KNOWN_CLIENT_IDS:
            message = f"invalid connect params: unknown client id {client.get('id')!r}"
            return _error("INVALID_REQUEST", message), 1008
        if params.get("role", "operator") not in ("operator", "node"):
            return _error("INVALID_REQUEST", "invalid role"), 1008
        auth = params.get("auth") if isinstance(params.get("auth"), dict) else {}
        token = auth.get("token")
        if not token:
            message = "unauthorized: gateway token missing (provide gateway auth token)"
            return _error("INVALID_REQUEST", message, {"code": "AUTH_TOKEN_MISSING"}), 1008
        if self.faults.wrong_token or not secrets.compare_digest(str(token), self.token):
            message = "unauthorized: gateway token mismatch (provide gateway auth token)"
            return _error("INVALID_REQUEST", message, {"code": "AUTH_TOKEN_MISMATCH"}), 1008
        return None, 1000

    def _hello(self, params: Mapping[str, Any]) -> dict[str, Any]:
        requested = params.get("scopes") if isinstance(params.get("scopes"), list) else []
        granted = [scope for scope in requested if scope in self.faults.granted_scopes]
        return {
            "type": "hello-ok",
            "protocol": PROTOCOL,
            "server": {"version": self.version, "connId": uuid.uuid4().hex},
            "features": {
                "methods": sorted({"health", "status", "sessions.list", *ADMIN_METHODS}),
                "events": ["tick", "health", "connect.challenge"],
            },
            "auth": {"role": params.get("role", "operator"), "scopes": granted},
            "policy": {"maxPayload": 26_214_400, "tickIntervalMs": 30_000},
        }

    async def _dispatch(self, connection: ServerConnection, number: int, message: Any) -> None:
        frame = _parse(message)
        if frame is None or frame.get("type") != "req" or not isinstance(frame.get("id"), str):
            return
        method = str(frame.get("method"))
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        self._record(method, params, number)
        if await self._apply_faults(connection, frame, method):
            return
        error = self.faults.errors.get(method) or self.faults.errors_for_key.get(params.get("key"))
        if error is not None:
            await self._respond(connection, frame["id"], error=error)
            return
        try:
            payload = self._call(method, params, number)
        except _RpcError as failure:
            await self._respond(connection, frame["id"], error=failure.shape)
            return
        await self._respond(connection, frame["id"], payload=payload)

    async def _apply_faults(self, connection: ServerConnection, frame: dict, method: str) -> bool:
        """Apply the faults set for `method`; return True when the request gets no answer."""
        delay = self.faults.delay.get(method)
        if delay:
            await self._sleep(delay)
        params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
        if method in self.faults.drop_on or params.get("key") in self.faults.drop_on_key:
            connection.transport.abort()
            return True
        if method in self.faults.never_answer:
            return True
        if method in self.faults.malformed_on:
            await connection.send('{"type":"res","id":' + orjson.dumps(frame["id"]).decode())
            return True
        return False

    async def _respond(
        self,
        connection: ServerConnection,
        request_id: str,
        *,
        payload: Any = None,
        error: Mapping[str, Any] | None = None,
    ) -> None:
        # Unsolicited frames first, as the real gateway interleaves ticks with responses.
        await self._event(connection, "tick", {"ts": _now_ms()})
        if self.faults.stray_responses:
            stray = {"type": "res", "id": f"stray-{uuid.uuid4().hex}", "ok": True, "payload": {}}
            await connection.send(orjson.dumps(stray).decode())
        if error is not None:
            frame = {"type": "res", "id": request_id, "ok": False, "error": dict(error)}
        else:
            frame = {"type": "res", "id": request_id, "ok": True, "payload": payload}
        await connection.send(orjson.dumps(frame).decode())

    async def _event(self, connection: ServerConnection, name: str, payload: Any) -> None:
        with self._lock:
            self._seq += 1
            sequence = self._seq
        frame = {"type": "event", "event": name, "payload": payload, "seq": sequence}
        await connection.send(orjson.dumps(frame).decode())

    def _record(self, method: str, params: dict[str, Any], number: int) -> None:
        with self._lock:
            self.requests.append(Received(method, copy.deepcopy(params), number))

    # --- methods -------------------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any], number: int) -> Any:
        if method in ADMIN_METHODS and "operator.admin" not in self.faults.granted_scopes:
            raise _RpcError("INVALID_REQUEST", "missing scope: operator.admin")
        handlers = {
            "health": self._health,
            "status": self._status,
            "sessions.list": self._sessions_list,
            "sessions.reset": self._sessions_reset,
            "sessions.compact": self._sessions_compact,
            "sessions.delete": self._sessions_delete,
        }
        handler = handlers.get(method)
        if handler is None:
            raise _RpcError("INVALID_REQUEST", f"unknown method: {method}")
        return handler(params)

    def _health(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            count = len(self._rows)
        return {
            "ok": True,
            "ts": _now_ms(),
            "durationMs": 1,
            "channels": {},
            "sessions": {"count": count},
        }

    def _status(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"version": self.version, "uptimeMs": int((time.time() - self._started_at) * 1000)}

    def _sessions_list(self, params: dict[str, Any]) -> dict[str, Any]:
        limit = params.get("limit")
        offset = params.get("offset", 0)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise _RpcError("INVALID_REQUEST", "invalid sessions.list params: limit must be ≥ 1")
        if not isinstance(offset, int) or offset < 0:
            raise _RpcError("INVALID_REQUEST", "invalid sessions.list params: offset must be ≥ 0")
        page_size = min(limit or DEFAULT_LIST_LIMIT, self.max_page)
        with self._lock:
            rows = [copy.deepcopy(row) for row in self._rows.values()]
        agent_id = params.get("agentId")
        if isinstance(agent_id, str) and agent_id:
            rows = [row for row in rows if _agent_of(row["key"]) == agent_id.lower()]
        active = params.get("activeMinutes")
        if isinstance(active, int) and active > 0:
            cutoff = _now_ms() - active * 60_000
            rows = [row for row in rows if (row.get("updatedAt") or 0) >= cutoff]
        rows.sort(key=lambda row: -(row.get("updatedAt") or 0))
        page = rows[offset : offset + page_size]
        next_offset = offset + len(page)
        has_more = next_offset < len(rows)
        return {
            "ts": _now_ms(),
            "path": "(simulated)",
            "count": len(page),
            "totalCount": len(rows),
            "limitApplied": page_size,
            "offset": offset or None,
            "nextOffset": next_offset if has_more else None,
            "hasMore": has_more,
            "defaults": {"model": "fake-model", "contextTokens": self.default_context_tokens},
            "sessions": page,
        }

    def _sessions_reset(self, params: dict[str, Any]) -> dict[str, Any]:
        key = _require_key(params)
        if "expectedSessionId" in params and not self.accepts_expected_session_id:
            raise _RpcError(
                "INVALID_REQUEST",
                "invalid sessions.reset params: at root: unexpected property 'expectedSessionId'",
            )
        reason = "new" if params.get("reason") == "new" else "reset"
        expected = params.get("expectedSessionId")
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                raise _RpcError("INVALID_REQUEST", f"Session not found: {key}")
            if expected is not None and row.get("sessionId") != expected:
                raise _RpcError(
                    "INVALID_REQUEST",
                    f"Session {key} changed before reset. Retry.",
                    {"reason": "session-changed"},
                )
            old_id = row["sessionId"]
            new_id = old_id if self.reset_mode == "in_place" else str(uuid.uuid4())
            now = _now_ms()
            row.update(
                sessionId=new_id,
                lifecycleRevision=str(uuid.uuid4()),
                updatedAt=now,
                totalTokens=0,
                totalTokensFresh=True,
                inputTokens=0,
                outputTokens=0,
                status=None,
                hasActiveRun=False,
            )
            entry = copy.deepcopy(row)
            backing = self._backing.get(key)
        if backing is not None:
            _reset_on_disk(backing, key, old_id, new_id, reason, self.reset_mode)
            if self.reset_mode == "new_id" and backing.era == "file":
                backing.transcript = backing.sessions_dir / f"{new_id}.jsonl"
        return {"ok": True, "key": key, "entry": entry}

    def _sessions_compact(self, params: dict[str, Any]) -> dict[str, Any]:
        key = _require_key(params)
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                raise _RpcError("INVALID_REQUEST", f"Session not found: {key}")
            before = row.get("totalTokens") or 0
            row.update(totalTokens=before // 10, compactionCount=row.get("compactionCount", 0) + 1)
        return {"ok": True, "key": key, "compacted": True, "tokensBefore": before}

    def _sessions_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        key = _require_key(params)
        with self._lock:
            deleted = self._rows.pop(key, None) is not None
        return {"ok": True, "key": key, "deleted": deleted}


class _RpcError(Exception):
    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.shape = _error(code, message, details)


# --- disk effects of a reset (a test copy of a state dir) ------------------------------------


def _reset_on_disk(
    backing: _Backing, key: str, old_id: str, new_id: str, reason: str, mode: str
) -> None:
    if backing.era == "sqlite":
        _reset_sqlite(backing.sqlite_path, key, old_id, new_id, reason)
    elif mode == "in_place":
        _append_reset_line(backing.transcript, reason)
        _update_store(backing.sessions_dir, key, old_id, None)
    else:
        new_file = backing.sessions_dir / f"{new_id}.jsonl"
        if backing.transcript is not None and backing.transcript.exists():
            stamp = _iso_now().replace(":", "-")
            backing.transcript.rename(backing.transcript.with_name(f"{old_id}.jsonl.reset.{stamp}"))
        header = {
            "type": "session",
            "version": 3,
            "id": new_id,
            "timestamp": _iso_now(),
            "cwd": str(backing.workspace),
        }
        new_file.write_bytes(orjson.dumps(header) + b"\n")
        _update_store(backing.sessions_dir, key, new_id, new_file)


def _append_reset_line(transcript: Path | None, reason: str) -> None:
    if transcript is None or not transcript.exists():
        return
    line = {
        "type": "reset",
        "id": uuid.uuid4().hex[:8],
        "parentId": None,
        "timestamp": _iso_now(),
        "reason": reason,
    }
    with transcript.open("ab") as handle:
        handle.write(orjson.dumps(line) + b"\n")


def _update_store(sessions_dir: Path, key: str, session_id: str, new_file: Path | None) -> None:
    store_path = sessions_dir / "sessions.json"
    store = orjson.loads(store_path.read_bytes())
    entry = store.setdefault(key, {})
    if new_file is not None:
        entry.update(sessionId=session_id, sessionFile=str(new_file))
    entry.update(
        updatedAt=_now_ms(), inputTokens=0, outputTokens=0, totalTokens=0, totalTokensFresh=True
    )
    temporary = store_path.with_name(f"sessions.json.{uuid.uuid4().hex}.tmp")
    temporary.write_bytes(orjson.dumps(store, option=orjson.OPT_INDENT_2))
    temporary.replace(store_path)


def _reset_sqlite(database: Path, key: str, old_id: str, new_id: str, reason: str) -> None:
    connection = sqlite3.connect(database)
    # The gateway's CHECK constraints call octet_length(), newer than Python's SQLite.
    connection.create_function(
        "octet_length", 1, lambda value: None if value is None else len(str(value).encode())
    )
    try:
        with connection:
            row = connection.execute(
                "SELECT entry_json FROM session_nodes WHERE session_key = ?", (key,)
            ).fetchone()
            entry = orjson.loads(row[0]) if row else {}
            entry.update(
                sessionId=new_id,
                lifecycleRevision=str(uuid.uuid4()),
                updatedAt=_now_ms(),
                totalTokens=0,
                totalTokensFresh=True,
                inputTokens=0,
                outputTokens=0,
            )
            line = {
                "type": "reset",
                "id": uuid.uuid4().hex[:8],
                "parentId": None,
                "timestamp": _iso_now(),
                "reason": reason,
            }
            if new_id != old_id:
                line = {"type": "session", "version": 4, "id": new_id, "timestamp": _iso_now()}
            (next_seq,) = connection.execute(
                "SELECT coalesce(max(seq) + 1, 0) FROM transcript_events WHERE session_id = ?",
                (new_id,),
            ).fetchone()
            connection.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
                "VALUES (?, ?, ?, ?)",
                (new_id, next_seq, orjson.dumps(line).decode(), _now_ms()),
            )
            connection.execute(
                "UPDATE session_nodes SET current_session_id = ?, entry_json = ?, updated_at = ? "
                "WHERE session_key = ?",
                (new_id, orjson.dumps(entry).decode(), _now_ms(), key),
            )
    finally:
        connection.close()


# --- helpers ---------------------------------------------------------------------------------


def _row_from_record(record: Any) -> dict[str, Any]:
    return {
        "sessionId": record.session_id,
        "updatedAt": record.updated_at,
        "lastInteractionAt": record.last_interaction_at,
        "status": record.status,
        "hasActiveRun": False,
        "totalTokens": record.total_tokens,
        "totalTokensFresh": record.total_tokens_fresh
        if record.total_tokens_fresh is not None
        else True,
        "contextTokens": record.context_tokens,
        "model": record.model,
    }


def _default_row(key: str) -> dict[str, Any]:
    return {
        "key": key,
        "kind": "group" if ":group:" in key else "direct",
        "sessionId": str(uuid.uuid4()),
        "updatedAt": _now_ms() - 3_600_000,
        "lastInteractionAt": None,
        "status": "done",
        "hasActiveRun": False,
        "totalTokens": 0,
        "totalTokensFresh": True,
        "contextTokens": 200_000,
        "inputTokens": 0,
        "outputTokens": 0,
        "model": "fake-model",
        "spawnedBy": None,
        "compactionCount": 0,
    }


def _agent_of(key: str) -> str | None:
    parts = key.lower().split(":")
    return parts[1] if len(parts) > 2 and parts[0] == "agent" else None


def _require_key(params: Mapping[str, Any]) -> str:
    key = params.get("key")
    if not isinstance(key, str) or not key.strip():
        raise _RpcError("INVALID_REQUEST", "invalid params: key (string) required")
    return key.strip()


def _error(code: str, message: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    shape: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        shape["details"] = dict(details)
    return shape


def _redacted(params: dict[str, Any]) -> dict[str, Any]:
    shown = copy.deepcopy(params)
    if isinstance(shown.get("auth"), dict) and "token" in shown["auth"]:
        shown["auth"]["token"] = "<redacted>"
    return shown


def _challenge() -> dict[str, Any]:
    return {"nonce": secrets.token_hex(16), "ts": _now_ms()}


def _json_response(connection: ServerConnection, status: int, body: Any) -> Response:
    response = connection.respond(status, orjson.dumps(body).decode())
    return _with_content_type(response, "application/json; charset=utf-8")


def _with_content_type(response: Response, content_type: str) -> Response:
    del response.headers["Content-Type"]  # Headers is a multi-dict: replace, do not add
    response.headers["Content-Type"] = content_type
    return response


def _parse(message: Any) -> dict[str, Any] | None:
    try:
        frame = orjson.loads(message)
    except orjson.JSONDecodeError:
        return None
    return frame if isinstance(frame, dict) else None


def _now_ms() -> int:
    return int(time.time() * 1000)


def _iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
