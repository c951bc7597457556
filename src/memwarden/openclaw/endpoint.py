"""Where the gateway listens and how memwarden authenticates to it: the WebSocket URL and
token from memwarden's settings, the environment and the gateway's config, and its HTTP side.

Apart from the WebSocket client (`gateway`), so that what only needs the address (the health
probes, `config show`) does not load websockets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memwarden.openclaw.fields import mapping
from memwarden.openclaw.layout import DEFAULT_GATEWAY_PORT, env_port
from memwarden.openclaw.paths import env_text

if TYPE_CHECKING:
    from memwarden.openclaw.layout import Deployment
    from memwarden.settings.config import Config


def resolve_endpoint(
    config: Config, deployment: Deployment | None, env: Mapping[str, str]
) -> tuple[str, str | None]:
    """Given memwarden's config, the gateway deployment and the environment, return (url, token).

    URL: `gateway.url`, else `ws://127.0.0.1:<port>` with the port from the deployment
    (`$OPENCLAW_GATEWAY_PORT` or `$CLAWDBOT_GATEWAY_PORT`, `gateway.port`, 18789), `wss://`
    when the gateway config turns TLS on. Token: `gateway.token` (`MEMWARDEN_GATEWAY_TOKEN`),
    else `$OPENCLAW_GATEWAY_TOKEN`, else the gateway config's `gateway.auth.token`; None when
    none is set.
    """
    url = (config.gateway.url or "").strip()
    if not url:
        port = (deployment.gateway_port_and_source() if deployment else _env_port(env))[0]
        scheme = "wss" if deployment is not None and _tls_enabled(deployment.config) else "ws"
        url = f"{scheme}://127.0.0.1:{port}"
    token = (config.gateway.token or "").strip() or env_text(env, "OPENCLAW_GATEWAY_TOKEN")
    if not token and deployment is not None:
        token = deployment.gateway_token() or ""
    return url, token or None


def endpoint_source(config: Config, deployment: Deployment | None, env: Mapping[str, str]) -> str:
    """Given what `resolve_endpoint` is given, return what chose its URL, for people."""
    if (config.gateway.url or "").strip():
        return f"gateway.url ({config.sources.get('gateway.url', 'default')})"
    if deployment is not None:
        return f"port: {deployment.gateway_port_and_source()[1]}"
    from_env = env_port(env)
    return f"port: {from_env[1]}" if from_env else "default"


def http_base(url: str) -> str:
    """Given the gateway's WebSocket URL, return its HTTP base URL (same host and port)."""
    if url.startswith("wss://"):
        return "https://" + url[len("wss://") :].rstrip("/")
    if url.startswith("ws://"):
        return "http://" + url[len("ws://") :].rstrip("/")
    return url.rstrip("/")


def _tls_enabled(config: Mapping[str, Any]) -> bool:
    return mapping(mapping(config.get("gateway")).get("tls")).get("enabled") is True


def _env_port(env: Mapping[str, str]) -> tuple[int, str]:
    """Where there is no gateway config: the environment's port, else the gateway's default."""
    return env_port(env) or (DEFAULT_GATEWAY_PORT, "default")
