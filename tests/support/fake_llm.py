"""A fake OpenAI-compatible model server for tests (chat completions, streaming and not).

The real OpenClaw gateway is pointed at it as a provider (`api: "openai-completions"`,
`baseUrl: server.base_url`). Every answer reports `usage.prompt_tokens = server.prompt_tokens`,
which the gateway records as the session's context size (`totalTokens` in `sessions.list`), so a
test can make a session look as large as it wants without sending that much text:

    with FakeLLM() as llm:                 # 127.0.0.1, a free port
        llm.prompt_tokens = 170_000        # the next answers report this context size
        llm.reply = "Noted."               # and this text
        ...                                # drive the gateway
        llm.requests                       # the chat-completion request bodies received

Every setting may be changed at any time from the test's thread. `hold()` makes the next
completions wait until `release()` (a turn that stays in progress, e.g. to see a session as
`running`); `fail_status = 500` makes them fail.

Also runnable as a script (`python tests/support/fake_llm.py --port 18799`), with the settings
taken from the options or from the environment variables `FAKE_LLM_REPLY`,
`FAKE_LLM_PROMPT_TOKENS` and `FAKE_LLM_LOG` (a JSONL file receiving every request).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

DEFAULT_REPLY = "Hello from the fake LLM. (canned reply)"
DEFAULT_MODEL = "fake-model"
DEFAULT_PROMPT_TOKENS = 1234
DEFAULT_COMPLETION_TOKENS = 9
HOLD_LIMIT_SECONDS = 300.0


class FakeLLM:
    """An OpenAI-compatible chat-completions server on a background thread.

    `port=0` (the default) lets the system pick a free port; read it from `port` after
    `start()`. All settings are thread-safe properties that the handler reads per request.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reply: str = DEFAULT_REPLY,
        prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
        completion_tokens: int = DEFAULT_COMPLETION_TOKENS,
        model: str = DEFAULT_MODEL,
        log_path: Path | None = None,
    ) -> None:
        self._host = host
        self._requested_port = port
        self._lock = threading.Lock()
        self._reply = reply
        self._prompt_tokens = prompt_tokens
        self._completion_tokens = completion_tokens
        self._model = model
        self._delay = 0.0
        self._fail_status: int | None = None
        self._requests: list[dict[str, Any]] = []
        self._paths: list[str] = []
        self._log_path = log_path
        self._released = threading.Event()
        self._released.set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind the socket and serve on a daemon thread; returns self. No-op when running."""
        if self._server is not None:
            return self
        server = _Server((self._host, self._requested_port), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"fake-llm:{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (held completions are released first)."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self._released.set()
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        """The port actually bound (only while running)."""
        if self._server is None:
            raise RuntimeError("FakeLLM is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The provider's `baseUrl` for the gateway config: `http://127.0.0.1:<port>/v1`."""
        return f"http://{self._host}:{self.port}/v1"

    # -- settings (changeable while running) -----------------------------------------------------

    @property
    def reply(self) -> str:
        with self._lock:
            return self._reply

    @reply.setter
    def reply(self, value: str) -> None:
        with self._lock:
            self._reply = value

    @property
    def prompt_tokens(self) -> int:
        """`usage.prompt_tokens` of the next answers (the session's context size)."""
        with self._lock:
            return self._prompt_tokens

    @prompt_tokens.setter
    def prompt_tokens(self, value: int) -> None:
        with self._lock:
            self._prompt_tokens = int(value)

    @property
    def completion_tokens(self) -> int:
        with self._lock:
            return self._completion_tokens

    @completion_tokens.setter
    def completion_tokens(self, value: int) -> None:
        with self._lock:
            self._completion_tokens = int(value)

    @property
    def model(self) -> str:
        with self._lock:
            return self._model

    @model.setter
    def model(self, value: str) -> None:
        with self._lock:
            self._model = value

    @property
    def delay(self) -> float:
        """Seconds to wait before answering a completion."""
        with self._lock:
            return self._delay

    @delay.setter
    def delay(self, value: float) -> None:
        with self._lock:
            self._delay = float(value)

    @property
    def fail_status(self) -> int | None:
        """When set, completions answer this HTTP status with an OpenAI-style error body."""
        with self._lock:
            return self._fail_status

    @fail_status.setter
    def fail_status(self, value: int | None) -> None:
        with self._lock:
            self._fail_status = value

    def hold(self) -> None:
        """Make completions wait (up to 5 minutes) until `release()`: the turn stays running."""
        self._released.clear()

    def release(self) -> None:
        """Let held and future completions answer."""
        self._released.set()

    # -- what was received -------------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of the JSON bodies of the chat-completion requests received, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def paths(self) -> list[str]:
        """`METHOD path` of every HTTP request received (models listing included)."""
        with self._lock:
            return list(self._paths)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()
            self._paths.clear()

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Wait until at least `count` completions were received; returns `requests`."""
        deadline = time.monotonic() + timeout
        while True:
            received = self.requests
            if len(received) >= count:
                return received
            if time.monotonic() >= deadline:
                raise TimeoutError(f"fake LLM received {len(received)} of {count} requests")
            time.sleep(0.05)

    def user_texts(self, index: int = -1) -> list[str]:
        """The texts of the `user` messages of one request (default: the last one received).

        OpenClaw may append its own user-role context block after the real user message, so
        look for a text among these rather than at the last one only.
        """
        received = self.requests
        if not received:
            return []
        messages = received[index].get("messages") or []
        return [
            _content_text(message.get("content"))
            for message in messages
            if isinstance(message, dict) and message.get("role") == "user"
        ]

    def saw_user_text(self, text: str) -> bool:
        """True when any request received so far has a `user` message containing `text`."""
        return any(text in user for i in range(len(self.requests)) for user in self.user_texts(i))

    def system_prompts(self) -> Iterator[str]:
        """The `system`/`developer` message texts of every request, oldest first."""
        for body in self.requests:
            for message in body.get("messages") or []:
                if isinstance(message, dict) and message.get("role") in {"system", "developer"}:
                    yield _content_text(message.get("content"))

    # -- used by the handler -------------------------------------------------------------------

    def _record(self, method: str, path: str, body: dict[str, Any] | None) -> None:
        with self._lock:
            self._paths.append(f"{method} {path}")
            if body is not None:
                self._requests.append(body)
            log_path = self._log_path
        if log_path is not None:
            entry = {"ts": time.time(), "method": method, "path": path, "body": body}
            with self._lock, log_path.open("a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

    def _wait_released(self) -> None:
        self._released.wait(HOLD_LIMIT_SECONDS)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") in {"text", "input_text"}
        )
    return ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLM


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are recorded on the FakeLLM instead."""

    def _send_json(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record("GET", self.path, None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model = {"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}
            self._send_json(200, {"object": "list", "data": [model]})
            return
        self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        if not isinstance(body, dict):
            body = {"_raw": body}
        is_chat = self.path.split("?")[0].rstrip("/").endswith("/chat/completions")
        fake._record("POST", self.path, body if is_chat else None)
        if not is_chat:
            self._send_json(404, {"error": {"message": "only /v1/chat/completions"}})
            return
        fake._wait_released()
        if fake.delay > 0:
            time.sleep(fake.delay)
        status = fake.fail_status
        if status is not None:
            error = {"message": f"fake failure {status}", "type": "server_error", "code": status}
            self._send_json(status, {"error": error})
            return
        self._answer(fake, body)

    def _answer(self, fake: FakeLLM, body: dict[str, Any]) -> None:
        completion_id = "chatcmpl-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        model = str(body.get("model") or fake.model)
        reply = fake.reply
        prompt_tokens = fake.prompt_tokens
        completion_tokens = fake.completion_tokens
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply}
            self._send_json(
                200,
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": usage,
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        base = {"id": completion_id, "object": "chat.completion.chunk", "created": created}

        def send(choices: list[dict[str, Any]], with_usage: bool = False) -> None:
            chunk: dict[str, Any] = {**base, "model": model, "choices": choices}
            if with_usage:
                chunk["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        words = reply.split(" ")
        for index, word in enumerate(words):
            piece = word if index == len(words) - 1 else word + " "
            send([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
        send([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        send([], with_usage=True)  # the usage-only chunk of `stream_options.include_usage`
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible model server.")
    parser.add_argument("port_arg", nargs="?", type=int, help="port (same as --port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="0 picks a free port")
    parser.add_argument("--reply", default=os.environ.get("FAKE_LLM_REPLY", DEFAULT_REPLY))
    parser.add_argument(
        "--prompt-tokens",
        type=int,
        default=int(os.environ.get("FAKE_LLM_PROMPT_TOKENS", DEFAULT_PROMPT_TOKENS)),
    )
    parser.add_argument("--log", type=Path, default=os.environ.get("FAKE_LLM_LOG") or None)
    args = parser.parse_args(argv)
    port = args.port if args.port is not None else (args.port_arg or 0)
    server = FakeLLM(
        host=args.host,
        port=port,
        reply=args.reply,
        prompt_tokens=args.prompt_tokens,
        log_path=args.log,
    ).start()
    print(f"fake_llm listening on {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
