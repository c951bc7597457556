"""Facts about this machine that an install depends on: its scheduler and memwarden's path."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from memwarden.fs.files import read_text_if_exists
from memwarden.fs.xdg import xdg_home
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.settings.config import ENV_PREFIX, RESERVED_ENV_PREFIXES
from memwarden.settings.envfile import parse_env_text

# Gateway paths read relative to the current folder when they are not absolute or under `~`.
GATEWAY_PATH_VARIABLES = (
    "OPENCLAW_HOME",
    "OPENCLAW_STATE_DIR",
    "OPENCLAW_CONFIG_PATH",
    "CLAWDBOT_STATE_DIR",
    "CLAWDBOT_CONFIG_PATH",
)
# Variables copied from the installing shell into every timer when set there: they decide which
# config, state and gateway memwarden sees. None of them holds a secret.
PASSTHROUGH_VARIABLES = (
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    *GATEWAY_PATH_VARIABLES,
    "OPENCLAW_GATEWAY_PORT",
    "CLAWDBOT_GATEWAY_PORT",
    "TZ",
)
GATEWAY_SECRET_VARIABLES = ("OPENCLAW_GATEWAY_TOKEN", "CLAWDBOT_GATEWAY_TOKEN")


@dataclass(frozen=True)
class HostFacts:
    """What decides the scheduler: the OS, which commands exist, whether systemd runs here."""

    system: str
    has_systemctl: bool
    systemd_booted: bool
    user_manager: bool
    has_crontab: bool


def gather_host_facts(env: Mapping[str, str]) -> HostFacts:
    """Given the environment, return the facts about this machine's schedulers."""
    return HostFacts(
        system=platform.system(),
        has_systemctl=find_command("systemctl", env) is not None,
        systemd_booted=Path("/run/systemd/system").is_dir(),
        user_manager=user_manager_reachable(env),
        has_crontab=find_command("crontab", env) is not None,
    )


def user_manager_reachable(env: Mapping[str, str]) -> bool:
    """Whether `systemctl --user` can reach a user manager from this environment: the folder
    of the user's runtime ($XDG_RUNTIME_DIR) holds the manager's folder or its bus."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    return bool(runtime) and (Path(runtime, "systemd").is_dir() or Path(runtime, "bus").exists())


def choose_target(facts: HostFacts) -> str:
    """Given the host facts, return the scheduler `memwarden install auto` uses.

    macOS: launchd. Elsewhere: systemd user units when systemd runs the machine and a user
    manager is reachable, else cron. Raise UsageError when none is available.
    """
    if facts.system == "Darwin":
        return "launchd"
    if facts.has_systemctl and facts.systemd_booted and facts.user_manager:
        return "systemd"
    if facts.has_crontab:
        return "cron"
    raise UsageError(
        "no scheduler found: systemd user units need systemd and a user session "
        "($XDG_RUNTIME_DIR), and `crontab` is not on PATH; install cron, or run the jobs "
        "from your own scheduler (see docs/install.md)"
    )


def resolve_executable(
    configured: str,
    env: Mapping[str, str],
    argv0: str | None = None,
    interpreter: str | None = None,
) -> Path:
    """Given install.executable, return the absolute path of the memwarden the timers and the
    session-summary hook run.

    In order: the setting; the console script running now (`sys.argv[0]` named memwarden); the
    `memwarden` beside this Python interpreter (a virtualenv's bin/); `memwarden` on PATH.
    Symlinks are kept (a `~/.local/bin/memwarden` link survives upgrades). Raise UsageError if
    the setting is not an absolute executable file or nothing is found.
    """
    if configured:
        path = Path(configured).expanduser()
        if not path.is_absolute() or not is_executable(path):
            raise UsageError(
                f"install.executable = {configured!r}: not an absolute path to an executable "
                "file; point it at the memwarden command (see `which memwarden`)"
            )
        return path
    argv0 = sys.argv[0] if argv0 is None else argv0
    interpreter = sys.executable if interpreter is None else interpreter
    candidates = []
    if argv0 and Path(argv0).name == "memwarden":
        candidates.append(Path(os.path.abspath(argv0)))
    if interpreter:
        candidates.append(Path(os.path.abspath(interpreter)).parent / "memwarden")
    on_path = find_command("memwarden", env)
    if on_path:
        candidates.append(Path(os.path.abspath(on_path)))
    for candidate in candidates:
        if is_executable(candidate):
            return candidate
    raise UsageError(
        "cannot find the memwarden executable the timers and hooks should run; set "
        "install.executable to its absolute path"
    )


def default_systemd_dir(env: Mapping[str, str]) -> Path:
    return xdg_home(env, "XDG_CONFIG_HOME", ".config") / "systemd" / "user"


def default_launchd_dir(env: Mapping[str, str]) -> Path:
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / "Library" / "LaunchAgents"


def pinned_environment(
    env: Mapping[str, str],
    *,
    storage_dir: Path,
    config_file: Path | None,
    gateway_state_dir: Path | None,
) -> list[tuple[str, str]]:
    """Given the installing shell's environment and resolved paths, return what timers inherit.

    PATH (so the timers find the commands this shell finds), the config file, memwarden's
    storage dir, the secrets file when this shell names it, the gateway state dir when
    `--state-dir` chose it, and PASSTHROUGH_VARIABLES that are set (a relative XDG folder left
    out, as memwarden ignores it; a relative gateway path made absolute). Never a secret.
    """
    folders = env.get("PATH", os.defpath).split(os.pathsep)
    pinned = {"PATH": os.pathsep.join(dict.fromkeys(folders))}  # each folder once, first kept
    for name in PASSTHROUGH_VARIABLES:
        value = env.get(name)
        if not value:
            continue
        if name.startswith("XDG_") and not os.path.isabs(os.path.expanduser(value)):
            continue  # the XDG spec says to ignore a relative value, and memwarden does
        if name in GATEWAY_PATH_VARIABLES and not value.strip().startswith(("/", "~")):
            value = os.path.abspath(value.strip())  # a timer starts in another folder
        pinned[name] = value
    if config_file is not None:
        pinned["MEMWARDEN_CONFIG"] = os.path.abspath(config_file)
    pinned["MEMWARDEN_GENERAL_STORAGE_DIR"] = os.path.abspath(storage_dir)
    if env.get("MEMWARDEN_GENERAL_SECRETS_FILE"):  # a path, not a secret
        pinned["MEMWARDEN_GENERAL_SECRETS_FILE"] = os.path.abspath(
            os.path.expanduser(env["MEMWARDEN_GENERAL_SECRETS_FILE"])
        )
    if gateway_state_dir is not None:
        pinned["MEMWARDEN_GATEWAY_STATE_DIR"] = os.path.abspath(gateway_state_dir)
    return sorted(pinned.items())


def unpinned_variables(
    env: Mapping[str, str], pinned: Collection[str], config_has_token: bool = False
) -> list[str]:
    """Given the installing shell's environment, return the variables timers will not see.

    These are memwarden's settings (MEMWARDEN_*) and, unless the gateway config holds a token
    of its own (`config_has_token`), the gateway token variables, when set in this shell but not
    pinned: a timer starts with neither.
    """
    tokens = () if config_has_token else GATEWAY_SECRET_VARIABLES
    return sorted(
        name
        for name in env
        if (name.startswith(ENV_PREFIX) or name in tokens)
        and name not in pinned
        and not name.startswith(RESERVED_ENV_PREFIXES)
        and env[name]
    )


def find_command(name: str, env: Mapping[str, str]) -> str | None:
    """Return the path of the command `name` on the environment's PATH, or None."""
    return shutil.which(name, path=env.get("PATH", os.defpath))


def is_executable(path: Path) -> bool:
    """Whether `path` is a file this user may execute."""
    return path.is_file() and os.access(path, os.X_OK)


def linger_user() -> tuple[str, bool]:
    """Return this account's user name and whether systemd keeps its user manager running when
    it is logged out.

    The name comes from the account database (the running uid), as logind's does: `$USER` may
    be unset (cron, systemd units) or stale (`sudo -E`), and `$HOME` may be anywhere.
    """
    import pwd

    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:  # no passwd entry: the uid's number
        user = str(uid)
    return user, Path("/var/lib/systemd/linger", user).exists()


def names_defined_in(path: Path) -> set[str]:
    """Given the secrets file, return the names it defines (none if it cannot be read).

    Only the names are returned; values never leave the file.
    """
    try:
        text = read_text_if_exists(path) or ""
    except (MemwardenError, OSError):
        return set()
    return set(parse_env_text(text).values)
