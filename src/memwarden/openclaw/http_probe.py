"""HTTP probes of the gateway: `GET /healthz` (liveness) and `GET /readyz` (readiness).

The gateway answers `/healthz` with `{"ok": true, "status": "live"}` and `/readyz` with
`{"ready": true, "failing": [], "uptimeMs": …}` (503 and `ready: false` while not ready). Unknown
paths may answer 200 with the Control UI's HTML, so the JSON body is checked, not only the status:
a 200 with HTML is not healthy. No auth is needed.

The client's timeout is a deadline on the whole probe (connect, headers and body), not only on
each read, and at most 1 MiB of body is read: a server that answers a byte at a time, or without
end, fails the probe in the time given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from memwarden.process.deadline import DeadlineExceeded, call_with_deadline

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ProbeResult:
    """One probe: whether the gateway passed it, and one line saying why."""

    url: str
    ok: bool
    detail: str
    status_code: int | None = None
    body: dict[str, Any] | None = None
    elapsed_ms: float = 0.0


def probe_liveness(client: httpx.Client, base_url: str) -> ProbeResult:
    """Given an HTTP client (its timeout is the probe's deadline) and the gateway's base URL,
    GET /healthz.

    Pass when the answer is 200 with a JSON object whose `ok` is true or `status` is `live`.
    """
    return _probe(client, base_url, LIVENESS_PATH, _judge_liveness)


def probe_readiness(client: httpx.Client, base_url: str) -> ProbeResult:
    """Given an HTTP client and the gateway's base URL, GET /readyz.

    Pass when the answer is 200 with a JSON object whose `ready` is true; a 503 with
    `ready: false` names what is failing.
    """
    return _probe(client, base_url, READINESS_PATH, _judge_readiness)


def _probe(client: httpx.Client, base_url: str, path: str, judge) -> ProbeResult:
    url = base_url.rstrip("/") + path
    seconds = _deadline_of(client)
    started = time.perf_counter()
    try:
        response, content = call_with_deadline(seconds, _get, client, url)
    except (httpx.TimeoutException, DeadlineExceeded):
        failure = f"no complete answer within {seconds:g} s (timed out)"
    except httpx.ConnectError as error:
        failure = _connect_failure(error)
    except httpx.HTTPError as error:
        failure = f"HTTP failure: {type(error).__name__}: {error or 'connection closed'}"
    else:
        elapsed = _ms_since(started)
        body = _json_object(content)
        passed, detail = judge(response, body) if body is not None else (False, _not_json(response))
        return ProbeResult(url, passed, detail, response.status_code, body, elapsed)
    return ProbeResult(url, False, failure, elapsed_ms=_ms_since(started))


def _get(client: httpx.Client, url: str) -> tuple[httpx.Response, bytes]:
    """GET `url`; return the response and at most MAX_BODY_BYTES + 1 bytes of its body."""
    with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
        content = bytearray()
        for chunk in response.iter_bytes():
            content += chunk
            if len(content) > MAX_BODY_BYTES:
                break
        return response, bytes(content)


def _judge_liveness(response: httpx.Response, body: dict[str, Any]) -> tuple[bool, str]:
    if response.status_code == 200 and (body.get("ok") is True or body.get("status") == "live"):
        return True, f"live ({body.get('status', 'ok')})"
    return False, f"HTTP {response.status_code}, not live: {_short(body)}"


def _judge_readiness(response: httpx.Response, body: dict[str, Any]) -> tuple[bool, str]:
    if response.status_code == 200 and body.get("ready") is True:
        return True, "ready"
    failing = body.get("failing")
    if isinstance(failing, list) and failing:
        names = ", ".join(str(item) for item in failing[:5])
        return False, f"HTTP {response.status_code}, not ready (failing: {names})"
    return False, f"HTTP {response.status_code}, not ready: {_short(body)}"


def _json_object(content: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _not_json(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    return (
        f"HTTP {response.status_code} with {kind}, not the gateway's JSON "
        "(another service on this port, or a proxy?)"
    )


def _connect_failure(error: httpx.ConnectError) -> str:
    text = str(error).lower()
    if "refused" in text:
        return "connection refused (gateway not running?)"
    return f"cannot connect: {error}"


def _deadline_of(client: httpx.Client) -> float:
    timeout = client.timeout
    return timeout.read or timeout.connect or timeout.pool or timeout.write or 60.0


def _short(body: dict[str, Any]) -> str:
    return orjson.dumps(body).decode()[:120]


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
