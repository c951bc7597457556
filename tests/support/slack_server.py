"""A real HTTP server on 127.0.0.1 standing in for Slack: Web API `chat.postMessage` and an
incoming webhook. It records every request and can be told how to answer the next ones.

    with SlackServer(token="xoxb-test", channels={"C1"}) as slack:
        slack.queue(rate_limited(retry_after=1), ok())   # then the default answer
        slack.default = slack_error("channel_not_found")
        ... point memwarden at slack.api_base_url or slack.webhook_url ...
        assert len(slack.delivered()) == 1

Like Slack: the Web API answers HTTP 200 with `{"ok": false, "error": ...}` for a bad token or
channel, 429 with `Retry-After` and `{"ok": false, "error": "ratelimited"}` when rate limited;
the webhook answers `ok` as plain text, or a plain-text error code with a 4xx status.
"""

from __future__ import annotations

import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

WEBHOOK_PATH = "/services/T000/B000/secretpart"
API_PREFIX = "/api/"


@dataclass(frozen=True)
class Answer:
    """How to answer one request. `kind`: ok, error, status, hang."""

    kind: str
    status: int = 200
    error: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


def ok() -> Answer:
    return Answer("ok")


def slack_error(code: str) -> Answer:
    """`ok:false` with `code` (Web API, HTTP 200) or `code` as text with HTTP 4xx (webhook)."""
    return Answer("error", error=code)


def rate_limited(retry_after: int | str = 1) -> Answer:
    return Answer("status", 429, "ratelimited", {"Retry-After": str(retry_after)})


def server_error(status: int = 500) -> Answer:
    return Answer("status", status, body=b"<html><body>Internal Server Error</body></html>")


def hang() -> Answer:
    """Accept the request and never answer (until the server stops)."""
    return Answer("hang")


@dataclass
class Request:
    """A request as received: which endpoint, its headers and its decoded body."""

    endpoint: str  # "chat.postMessage" or "webhook"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    answered: int | None = None  # HTTP status sent back (None: not answered)
    delivered: bool = False


class SlackServer:
    """The server; start it with `with` (or start()/stop())."""

    def __init__(
        self,
        token: str = "xoxb-test-token",  # noqa: S107 - a test server's token
        channels: set[str] | None = None,
    ) -> None:
        self.token = token
        self.channels = channels if channels is not None else {"C0TEST"}
        self.default: Answer = ok()
        self.requests: list[Request] = []
        self._queue: list[Answer] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._message_count = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # lifecycle ---------------------------------------------------------------------------------

    def start(self) -> SlackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> SlackServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # addresses ---------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def api_base_url(self) -> str:
        return self.base_url + API_PREFIX

    @property
    def webhook_url(self) -> str:
        return self.base_url + WEBHOOK_PATH

    # behaviour ---------------------------------------------------------------------------------

    def queue(self, *answers: Answer) -> None:
        """Answer the next requests with `answers`, in order, then with `default` again."""
        with self._lock:
            self._queue.extend(answers)

    def delivered(self) -> list[Request]:
        """Return the requests that Slack would have posted (answered with success)."""
        with self._lock:
            return [request for request in self.requests if request.delivered]

    def texts(self) -> list[str]:
        return [request.body.get("text", "") for request in self.delivered()]

    def _next_answer(self) -> Answer:
        with self._lock:
            return self._queue.pop(0) if self._queue else self.default

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_ts(self) -> str:
        with self._lock:
            self._message_count += 1
            return f"{time.time():.0f}.{self._message_count:06d}"


def _handler_for(server: SlackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path == WEBHOOK_PATH:
                endpoint = "webhook"
            elif self.path.startswith(API_PREFIX):
                endpoint = self.path[len(API_PREFIX) :].split("?", 1)[0]
            else:
                self._reply(404, b"not found", "text/plain")
                return
            request = Request(endpoint, self.path, dict(self.headers.items()), _decode(raw, self))
            server._record(request)
            answer = server._next_answer()
            if answer.kind == "hang":
                server._released.wait(timeout=60)
                return
            if endpoint == "webhook":
                self._answer_webhook(request, answer)
            else:
                self._answer_api(request, answer)

        def _answer_api(self, request: Request, answer: Answer) -> None:
            if answer.kind == "status":
                body = answer.body or orjson.dumps({"ok": False, "error": answer.error})
                content_type = "text/html" if answer.body else "application/json"
                self._reply(answer.status, body, content_type, answer.headers, request)
                return
            error = answer.error if answer.kind == "error" else _api_problem(server, request)
            if error:
                self._reply(200, orjson.dumps({"ok": False, "error": error}), request=request)
                return
            request.delivered = True
            payload = {
                "ok": True,
                "channel": request.body.get("channel"),
                "ts": server._next_ts(),
                "message": {"text": request.body.get("text")},
            }
            self._reply(200, orjson.dumps(payload), request=request)

        def _answer_webhook(self, request: Request, answer: Answer) -> None:
            if answer.kind == "status":
                body = answer.body or (answer.error or "error").encode()
                self._reply(answer.status, body, "text/plain", answer.headers, request)
                return
            if answer.kind == "error":
                status = 404 if answer.error == "no_service" else 400
                self._reply(status, (answer.error or "").encode(), "text/plain", request=request)
                return
            request.delivered = True
            self._reply(200, b"ok", "text/plain", request=request)

        def _reply(
            self,
            status: int,
            body: bytes,
            content_type: str = "application/json",
            headers: dict[str, str] | None = None,
            request: Request | None = None,
        ) -> None:
            if request is not None:
                request.answered = status
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _api_problem(server: SlackServer, request: Request) -> str | None:
    """Check the request as Slack would: the token first, then the channel and the text."""
    authorization = request.headers.get("Authorization", "")
    if not authorization:
        return "not_authed"
    if authorization != f"Bearer {server.token}":
        return "invalid_auth"
    if request.body.get("channel") not in server.channels:
        return "channel_not_found"
    if not request.body.get("text") and not request.body.get("blocks"):
        return "no_text"
    return None


def _decode(raw: bytes, handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    content_type = handler.headers.get("Content-Type", "")
    if not raw:
        return {}
    if "json" in content_type:
        value = orjson.loads(raw)
        return value if isinstance(value, dict) else {"_": value}
    fields = urllib.parse.parse_qs(raw.decode("utf-8"))
    decoded: dict[str, Any] = {name: values[-1] for name, values in fields.items()}
    for name in ("blocks", "metadata"):
        if isinstance(decoded.get(name), str):
            decoded[name] = orjson.loads(decoded[name])
    return decoded
