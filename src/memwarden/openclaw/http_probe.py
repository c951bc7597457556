"""HTTP probes of the gateway: `GET /healthz` (liveness) and `GET /readyz` (readiness).

The gateway answers `/healthz` with `{"ok": true, "status": "live"}` and `/readyz` with
`{"ready": true, "failing": [], "uptimeMs": …}` (503 and `ready: false` while not ready). Unknown
paths may answer 200 with the Control UI's HTML, so the JSON body is checked, not only the status:
a 200 with HTML is not healthy. No auth is needed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"


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
    """Given an HTTP client (with its timeout) and the gateway's base URL, GET /healthz.

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
    started = time.perf_counter()
    try:
        response = client.get(url, headers={"Accept": "application/json"})
    except httpx.TimeoutException:
        elapsed = _ms_since(started)
        return ProbeResult(
            url, False, f"no answer within {_timeout_of(client)} (timed out)", elapsed_ms=elapsed
        )
    except httpx.ConnectError as error:
        return ProbeResult(url, False, _connect_failure(error), elapsed_ms=_ms_since(started))
    except httpx.HTTPError as error:
        detail = f"HTTP failure: {type(error).__name__}: {error or 'connection closed'}"
        return ProbeResult(url, False, detail, elapsed_ms=_ms_since(started))
    elapsed = _ms_since(started)
    body = _json_object(response)
    passed, detail = judge(response, body)
    return ProbeResult(url, passed, detail, response.status_code, body, elapsed)


def _judge_liveness(response: httpx.Response, body: dict[str, Any] | None) -> tuple[bool, str]:
    if body is None:
        return False, _not_json(response)
    if response.status_code == 200 and (body.get("ok") is True or body.get("status") == "live"):
        return True, f"live ({body.get('status', 'ok')})"
    return False, f"HTTP {response.status_code}, not live: {_short(body)}"


def _judge_readiness(response: httpx.Response, body: dict[str, Any] | None) -> tuple[bool, str]:
    if body is None:
        return False, _not_json(response)
    if response.status_code == 200 and body.get("ready") is True:
        return True, "ready"
    failing = body.get("failing")
    if isinstance(failing, list) and failing:
        names = ", ".join(str(item) for item in failing[:5])
        return False, f"HTTP {response.status_code}, not ready (failing: {names})"
    return False, f"HTTP {response.status_code}, not ready: {_short(body)}"


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        value = orjson.loads(response.content)
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


def _timeout_of(client: httpx.Client) -> str:
    seconds = client.timeout.read or client.timeout.connect
    return f"{seconds:g} s" if seconds else "the timeout"


def _short(body: dict[str, Any]) -> str:
    return orjson.dumps(body).decode()[:120]


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
