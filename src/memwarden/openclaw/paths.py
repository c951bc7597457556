"""Where the OpenClaw gateway keeps things: its home, state dir and config file.

Precedence as in the gateway's `src/config/paths.ts`, `src/config/state-dir.ts` and
`infra/home-dir.ts` (openclaw@2026.7.35 and @2026.9.6).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

STATE_DIR_NAME = ".openclaw"
# Source order (openclaw src/config/paths.ts); 2026.9.x only still looks for ".clawdbot".
LEGACY_STATE_DIR_NAMES = (".clawdbot", ".moldbot", ".moltbot")
CONFIG_FILE_NAME = "openclaw.json"
LEGACY_CONFIG_FILE_NAMES = ("clawdbot.json", "moldbot.json", "moltbot.json")


def resolve_home(env: Mapping[str, str] = os.environ) -> Path:
    """Given the environment, return the home OpenClaw uses.

    `$OPENCLAW_HOME` wins (a leading `~` in it is the account's home), as in the gateway's
    `infra/home-dir.ts`; else `$HOME`, else the account's home.
    """
    account_home = Path(env_text(env, "HOME") or Path.home())
    explicit = env_text(env, "OPENCLAW_HOME")
    if explicit:
        return user_path(explicit, account_home)
    return Path(os.path.abspath(account_home))


def user_path(text: str, home: Path) -> Path:
    """Given a path as written in config or env and the home, return it absolute (`~` expanded)."""
    stripped = text.strip()
    if stripped == "~" or stripped.startswith(("~/", "~\\")):
        stripped = str(home) + stripped[1:]
    return Path(os.path.abspath(stripped))


def locate_state_dir(
    override: Path | None = None, env: Mapping[str, str] = os.environ
) -> tuple[Path, str]:
    """Given memwarden's `--state-dir` and the environment, return the gateway state dir
    and what chose it: `override`, `$OPENCLAW_STATE_DIR`, `$CLAWDBOT_STATE_DIR` or `default`.

    Order: `override`, `$OPENCLAW_STATE_DIR`, `$CLAWDBOT_STATE_DIR`, `~/.openclaw` when it
    exists, else the first existing legacy dir (`~/.clawdbot`, `~/.moldbot`, `~/.moltbot`),
    else `~/.openclaw`.
    """
    user_home = resolve_home(env)
    if override is not None:
        return user_path(str(override), user_home), "override"
    for name in ("OPENCLAW_STATE_DIR", "CLAWDBOT_STATE_DIR"):
        value = env_text(env, name)
        if value:
            return user_path(value, user_home), f"${name}"
    current = user_home / STATE_DIR_NAME
    if current.exists():
        return current, "default"
    for legacy_name in LEGACY_STATE_DIR_NAMES:
        if (user_home / legacy_name).exists():
            return user_home / legacy_name, "default"
    return current, "default"


def resolve_config_path(state_dir: Path, env: Mapping[str, str] = os.environ) -> Path:
    """Given the state dir and the environment, return the gateway config file path.

    Order: `$OPENCLAW_CONFIG_PATH`, `$CLAWDBOT_CONFIG_PATH`, then the first existing of
    `<state>/openclaw.json`, `clawdbot.json`, `moldbot.json`, `moltbot.json`, else
    `<state>/openclaw.json` (which may not exist: a gateway without config is valid).
    """
    for name in ("OPENCLAW_CONFIG_PATH", "CLAWDBOT_CONFIG_PATH"):
        value = env_text(env, name)
        if value:
            return user_path(value, resolve_home(env))
    candidates = [state_dir / name for name in (CONFIG_FILE_NAME, *LEGACY_CONFIG_FILE_NAMES)]
    return next((path for path in candidates if path.exists()), candidates[0])


def env_text(env: Mapping[str, str], name: str) -> str:
    """Return the variable `name` of `env`, stripped ("" when unset)."""
    return (env.get(name) or "").strip()
