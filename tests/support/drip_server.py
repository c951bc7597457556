"""A real TCP server on 127.0.0.1 that answers one byte at a time, forever.

It stands in for a Slack endpoint or a gateway that accepts the connection and then sends its
answer a byte every `interval` seconds: no single read ever waits long, so a per-read timeout
never fires; only a deadline on the whole call ends it.

    with DripServer(http_headers_drip()) as server:
        ... point a client at server.http_url or server.ws_url ...

`Drip` says what is sent before dripping starts (`prefix`, all at once), what is dripped
(`drip`, repeated without end) and whether the server first completes a WebSocket handshake.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
from dataclasses import dataclass

_WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass(frozen=True)
class Drip:
    prefix: bytes = b""
    drip: bytes = b"a"
    websocket: bool = False


def http_headers_drip() -> Drip:
    """An HTTP answer whose status line arrives and whose headers never end."""
    return Drip(prefix=b"HTTP/1.1 200 OK\r\nX-Slow: ", drip=b"a")


def http_body_drip() -> Drip:
    """An HTTP 200 with complete headers and a JSON body that never ends."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
    return Drip(prefix=head + b'{"ok": true, "pad": "', drip=b"a")


def websocket_frame_drip() -> Drip:
    """A WebSocket handshake completed, then a text frame announced at 64 KB and dripped."""
    header = bytes([0x81, 126]) + (65_000).to_bytes(2, "big")
    return Drip(prefix=header, drip=b" ", websocket=True)


class DripServer:
    def __init__(self, drip: Drip, interval: float = 0.2) -> None:
        self.drip = drip
        self.interval = interval
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def __enter__(self) -> DripServer:
        self._start(self._accept)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _start(self, target, *arguments) -> None:
        thread = threading.Thread(target=target, args=arguments, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            self._start(self._serve, connection)

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                request = self._read_request(connection)
                if self.drip.websocket:
                    connection.sendall(_handshake_answer(request))
                connection.sendall(self.drip.prefix)
                while not self._stop.wait(self.interval):
                    connection.sendall(self.drip.drip)
            except OSError:
                return

    def _read_request(self, connection: socket.socket) -> bytes:
        connection.settimeout(10)
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = connection.recv(65536)
            if not chunk:
                break
            request += chunk
        return request


def _handshake_answer(request: bytes) -> bytes:
    key = b""
    for line in request.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"sec-websocket-key":
            key = value.strip()
    accept = base64.b64encode(hashlib.sha1(key + _WEBSOCKET_GUID).digest())  # noqa: S324
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )
