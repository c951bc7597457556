"""The `[gateway]` options: where the gateway is and how memwarden reaches it."""

from memwarden.settings.option import Option

DESCRIPTION = "How memwarden finds and talks to the OpenClaw gateway."

OPTIONS = [
    Option(
        "gateway.state_dir",
        "path",
        "",
        "The gateway's state dir. Empty: --state-dir, $OPENCLAW_STATE_DIR, $CLAWDBOT_STATE_DIR, "
        "~/.openclaw (legacy ~/.clawdbot, ~/.moltbot when ~/.openclaw is absent).",
    ),
    Option(
        "gateway.url",
        "str",
        "",
        "WebSocket URL of the gateway. Empty: ws://127.0.0.1:<$OPENCLAW_GATEWAY_PORT or "
        "$CLAWDBOT_GATEWAY_PORT, else gateway.port from its config, else 18789>.",
        url_schemes=("ws", "wss"),
    ),
    Option(
        "gateway.token",
        "str",
        "",
        "Gateway token (secret: set MEMWARDEN_GATEWAY_TOKEN in the secrets file; refused in "
        "config.toml). Empty: "
        "$OPENCLAW_GATEWAY_TOKEN, else gateway.auth.token from the gateway config.",
        secret=True,
    ),
    Option(
        "gateway.timeout_seconds",
        "float",
        10.0,
        "Longest each gateway step may take, however slowly the gateway answers: connecting "
        "(WebSocket handshake and authentication together), each RPC; closing takes at most "
        "2 s more.",
        minimum=0.1,
        maximum=600,
    ),
]
