"""memwarden's own settings: one schema, three sources, every problem reported at once.

Sources, lowest precedence first: the defaults in the schema (`memwarden.settings`), the TOML file,
the secrets env file (NAME=VALUE lines in systemd's EnvironmentFile= grammar, mode 0600; see
`memwarden.settings.envfile`), then the environment (`MEMWARDEN_<SECTION>_<KEY>`). memwarden
reads the secrets file itself, in every mode (by hand, systemd, launchd, cron): one grammar
everywhere.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from memwarden.fs.files import read_regular_file
from memwarden.fs.xdg import xdg_home
from memwarden.process.errors import ConfigError, NotRegularFileError
from memwarden.settings import ALL_OPTIONS, SECTIONS, Option
from memwarden.settings.envfile import parse_env_text
from memwarden.settings.option import ENV_PREFIX, env_name

RESERVED_ENV = frozenset({"MEMWARDEN_CONFIG"})
RESERVED_ENV_PREFIXES = ("MEMWARDEN_E2E_", "MEMWARDEN_BENCH_", "MEMWARDEN_TEST_")
# Options that are gone: a config that still sets one is told what replaced it.
_FITTED = (
    "a handoff now carries every marked item, open task and file path of the conversation, "
    "then as many recent messages as fit its budget (checkpoint.handoff_max_chars); remove it"
)
RETIRED = {
    "install.stale_multiple": "doctor grades staleness with health.stale_warning_multiple and "
    "health.stale_critical_multiple",
    "checkpoint.recent_messages": _FITTED,
    "checkpoint.max_files": _FITTED,
    "checkpoint.max_todos": _FITTED,
    "checkpoint.tail_entries": "a checkpoint reads on from where it read to, whatever the "
    "transcript's length, and a conversation it meets first from its first line (its last "
    "lines when it is long); remove it",
    "checkpoint.handoff_min_messages": "a handoff carries the conversation across its resets; "
    "remove it",
}
OPTIONS_BY_KEY: dict[str, Option] = {option.key: option for option in ALL_OPTIONS}
BY_VARIABLE = {option.env_name: option for option in ALL_OPTIONS}
RETIRED_VARIABLES = {env_name(key): why for key, why in RETIRED.items()}


@dataclass(frozen=True)
class Config:
    """Effective settings: `values` by dotted key, and where each came from; each section's
    options also read as attributes: `config.checkpoint.staleness_hours`.

    `secrets_environment` holds the other variables the secrets file defines (such as
    OPENCLAW_GATEWAY_TOKEN): a job sees them as if they were in its environment.
    """

    values: dict[str, Any]
    sources: dict[str, str]
    path: Path | None = None
    secrets_path: Path | None = None
    secrets_environment: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for section in SECTIONS:
            prefix = section + "."
            own = {k[len(prefix) :]: v for k, v in self.values.items() if k.startswith(prefix)}
            object.__setattr__(self, section, SimpleNamespace(**own))


def defaults() -> Config:
    """Return the configuration made of the schema's defaults alone."""
    return Config({o.key: o.default for o in ALL_OPTIONS}, {o.key: "default" for o in ALL_OPTIONS})


def config_path_for(explicit: Path | None, env: Mapping[str, str]) -> tuple[Path, bool]:
    """Return the config file to read and whether it must exist (named explicitly)."""
    if explicit is not None:
        return explicit.expanduser(), True
    if env.get("MEMWARDEN_CONFIG"):
        return Path(env["MEMWARDEN_CONFIG"]).expanduser(), True
    return xdg_home(env, "XDG_CONFIG_HOME", ".config") / "memwarden" / "config.toml", False


def load(explicit: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Given an optional `--config` path and the environment, return the effective Config.

    Raise ConfigError listing every problem (unknown keys, bad values, unreadable files), one line
    each, naming the file or variable and the dotted key.
    """
    env = os.environ if env is None else env
    problems: list[str] = []
    values = {option.key: option.default for option in ALL_OPTIONS}
    sources = {option.key: "default" for option in ALL_OPTIONS}

    path, required = config_path_for(explicit, env)
    secrets_in_toml: list[Option] = []
    if required or path.exists():
        secrets_in_toml = _apply_toml(path, values, sources, problems)
    else:
        path = None

    secrets_path = _secrets_path(values, env)
    secret_env: dict[str, str] = {}
    if secrets_path is not None:
        secret_env = _read_env_file(secrets_path, problems)
    problems += _unprefixed_names(secret_env, secrets_path)
    _apply_env(secret_env, f"{secrets_path}", values, sources, problems)
    _apply_env(env, "environment", values, sources, problems)
    problems += _unknown_time_zone(values, sources)
    target = secrets_path or default_secrets_file(env)
    problems += [
        f"{path}: {option.key}: a secret does not belong in the config file: remove it here and "
        f"put the line {option.env_name}=… in {target} (mode 0600)"
        for option in secrets_in_toml
    ]

    if problems:
        raise ConfigError(problems)
    others = {name: value for name, value in secret_env.items() if not name.startswith(ENV_PREFIX)}
    return Config(values, sources, path, secrets_path, others)


UTF8_BOM = b"\xef\xbb\xbf"


def _apply_toml(path: Path, values: dict, sources: dict, problems: list[str]) -> list[Option]:
    """Apply the TOML file at `path`; return the secret options it sets (the config file is
    shared, shown and often readable by others: no secret's place, whatever its mode)."""
    import tomllib  # only when there is a config file

    try:
        raw = read_regular_file(path)
    except FileNotFoundError:
        problems.append(
            f"{path}: no such config file (create it or drop --config/MEMWARDEN_CONFIG)"
        )
        return []
    except NotRegularFileError as error:
        problems.append(f"{path}: {error.strerror}; name the TOML file itself")
        return []
    except OSError as error:
        problems.append(f"{path}: cannot read: {_reason(error)}")
        return []
    # TOML 1.0 forbids a byte-order mark, but Windows editors write one: tolerated.
    bom = len(UTF8_BOM) if raw.startswith(UTF8_BOM) else 0
    try:
        data = tomllib.loads(raw[bom:].decode("utf-8"))
    except UnicodeDecodeError as error:
        problems.append(f"{path}: not UTF-8 text (byte {bom + error.start + 1}); save it as UTF-8")
        return []
    except tomllib.TOMLDecodeError as error:
        problems.append(f"{path}: invalid TOML: {error}{_toml_hint(raw[bom:], error)}")
        return []
    secrets: list[Option] = []
    for section, table in data.items():
        if section not in SECTIONS:
            problems.append(f"{path}: {section}: {_unknown_section(section, table)}")
            continue
        if not isinstance(table, dict):
            problems.append(f"{path}: {section}: expected a [{section}] table")
            continue
        for name, raw in table.items():
            key = f"{section}.{name}"
            option = OPTIONS_BY_KEY.get(key)
            if key in RETIRED:
                problems.append(f"{path}: {key}: no longer an option ({RETIRED[key]})")
                continue
            if option is None:
                hint = _suggest(key, OPTIONS_BY_KEY, RETIRED)
                problems.append(f"{path}: {key}: unknown option{hint}")
                continue
            try:
                values[key] = option.coerce(raw)
                sources[key] = str(path)
            except ValueError as error:
                problems.append(f"{path}: {key}: {error}")
                continue
            if option.secret and values[key]:
                secrets.append(option)
    return secrets


def _unknown_section(name: str, value: Any) -> str:
    """Return why a top-level `name` is refused: an unknown section, or an option written
    above every [section] (it belongs under one), with the fix."""
    homes = [option.section for option in ALL_OPTIONS if option.name == name]
    if not isinstance(value, dict) and homes:
        meant = " or ".join(f"[{home}] {name}" for home in homes)
        return f"an option outside its section (did you mean {meant}?)"
    return f"unknown section{_suggest(name, SECTIONS)}"


_LEADING_ZERO = re.compile(r"\s*([A-Za-z0-9_-]+)\s*=\s*(0\d+)\s*(?:#.*)?")


def _toml_hint(raw: bytes, error: Exception) -> str:
    """Return the fix for a TOML error a memwarden setting is known to cause, or "": a number
    with a leading zero is no TOML number (`metrics_file_mode = 0644`: the mode is a string,
    written in quotes; `health_minutes = 05`: an integer, written without the zero)."""
    found = re.search(r"at line (\d+)", str(error))
    lines = raw.decode("utf-8").splitlines()
    if found is None or int(found[1]) > len(lines):
        return ""
    line = _LEADING_ZERO.fullmatch(lines[int(found[1]) - 1])
    if line is None:
        return ""
    key, number = line.groups()
    quoted = any(option.name == key and option.choices for option in ALL_OPTIONS)
    fix = f'write it in quotes: {key} = "{number}"' if quoted else f"write {key} = {int(number)}"
    return f" ({key}: a number cannot start with 0 in TOML; {fix})"


def _apply_env(
    env: Mapping[str, str], origin: str, values: dict, sources: dict, problems: list[str]
) -> None:
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or name in RESERVED_ENV:
            continue
        if name.startswith(RESERVED_ENV_PREFIXES):
            continue
        option = BY_VARIABLE.get(name)
        if name in RETIRED_VARIABLES:
            problems.append(f"{origin}: {name}: no longer an option ({RETIRED_VARIABLES[name]})")
            continue
        if option is None:
            hint = _suggest(name, BY_VARIABLE, RETIRED_VARIABLES)
            problems.append(f"{origin}: {name}: unknown memwarden variable{hint}")
            continue
        try:
            values[option.key] = option.coerce_text(raw)
            sources[option.key] = f"{origin} {name}"
        except ValueError as error:
            problems.append(f"{origin}: {name} ({option.key}): {error}")


def _unprefixed_names(secret_env: Mapping[str, str], secrets_path: Path | None) -> list[str]:
    """Return a problem per variable of the secrets file that is a memwarden variable without
    its MEMWARDEN_ prefix (`SLACK_BOT_TOKEN=`): read as nothing, it would leave alerts with
    half a destination."""
    return [
        f"{secrets_path}: {name}: not a memwarden variable (did you mean {ENV_PREFIX}{name}?)"
        for name in secret_env
        if ENV_PREFIX + name in BY_VARIABLE
    ]


def check_files(config: Config) -> None:
    """Raise ConfigError naming each file option (a template) set to no file memwarden can read,
    and where it was set (a value overridden by another source is never reported).

    Checked by the commands that use those files, not at every load: a template deleted or on a
    mount not up yet stops the jobs that render, while health (which alerts on their failed
    runs), doctor and status still run.
    """
    problems = []
    for option in ALL_OPTIONS:
        value = config.values[option.key]
        if not option.existing_file or not value:
            continue
        path = Path(value).expanduser()
        try:
            info = path.stat()
        except FileNotFoundError:
            reason = "no such file"
        except OSError as error:
            reason = _reason(error)
        else:
            if not stat.S_ISREG(info.st_mode):
                reason = (
                    "it is a folder, not a file" if stat.S_ISDIR(info.st_mode) else "not a file"
                )
            elif not os.access(path, os.R_OK):
                reason = "memwarden may not read it"
            else:
                continue
        problems.append(
            f"{_where(option, config.sources[option.key])}: {reason}: {path} (fix the path, or "
            "leave it empty for the default)"
        )
    if problems:
        raise ConfigError(problems)


def _unknown_time_zone(values: Mapping[str, Any], sources: Mapping[str, str]) -> list[str]:
    """Return a problem, naming where it was set, for a `general.timezone` that is no known
    zone. `$TZ` is the C library's, read as it reads it: never a configuration error here (a
    system without zone files reads `TZ=UTC` well, where Python's zoneinfo would not)."""
    name = values["general.timezone"].strip()
    if not name:
        return []
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only when a zone is set

    try:  # as the jobs read it (process.runtime.JobContext.zone): a key, never a path
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        option = OPTIONS_BY_KEY["general.timezone"]
        return [
            f"{_where(option, sources[option.key])}: unknown time zone {name!r}; set an IANA "
            "name such as Europe/Paris, or leave it empty for the machine's zone"
        ]
    return []


def _where(option: Option, source: str) -> str:
    """Given an option and its source as `load` records it, return the start of a problem
    line: `file: key` or `origin: VARIABLE (key)`, as the line for a value that does not fit."""
    origin, _, variable = source.rpartition(" ")
    if variable == option.env_name:
        return f"{origin}: {variable} ({option.key})"
    return f"{source}: {option.key}"


def _secrets_path(values: Mapping[str, Any], env: Mapping[str, str]) -> Path | None:
    configured = env.get("MEMWARDEN_GENERAL_SECRETS_FILE") or values["general.secrets_file"]
    if configured:
        return Path(configured).expanduser()
    candidate = default_secrets_file(env)
    return candidate if candidate.exists() else None


def default_secrets_file(env: Mapping[str, str]) -> Path:
    """Return where the secrets file is looked for when general.secrets_file is empty."""
    return xdg_home(env, "XDG_CONFIG_HOME", ".config") / "memwarden" / "secrets.env"


def _read_env_file(path: Path, problems: list[str]) -> dict[str, str]:
    """Read the secrets file (EnvironmentFile= grammar) that only its owner may read.

    Each line the grammar cannot read as meant is a problem naming the file and the line.
    """
    try:
        info = path.stat()
        text = read_regular_file(path).decode("utf-8")
    except FileNotFoundError:
        problems.append(f"{path}: secrets file not found (create it with mode 0600 or unset it)")
        return {}
    except NotRegularFileError as error:
        problems.append(f"{path}: {error.strerror}; name the secrets file itself")
        return {}
    except OSError as error:
        problems.append(f"{path}: cannot read the secrets file: {_reason(error)}")
        return {}
    except UnicodeDecodeError as error:
        problems.append(
            f"{path}: the secrets file is not UTF-8 text (byte {error.start + 1}); save it as UTF-8"
        )
        return {}
    if stat.S_IMODE(info.st_mode) & 0o077:
        problems.append(f"{path}: secrets file is readable by others; run: chmod 600 {path}")
        return {}
    parsed = parse_env_text(text)
    problems += [f"{path}:{problem.line}: {problem.message}" for problem in parsed.problems]
    return parsed.values


def _reason(error: OSError) -> str:
    """The reason of an OSError without Python's `[Errno N] … 'path'` dressing."""
    return (error.strerror or str(error)).lower()


def _suggest(word: str, choices, retired: Mapping[str, str] | None = None) -> str:
    """Return ` (did you mean X?)` for the closest of `choices`, or of the `retired` names (with
    why each went), or "" when none is close."""
    import difflib  # only when there is a mistake to explain

    retired = retired or {}
    close = difflib.get_close_matches(word, [*choices, *retired], n=1)
    if not close:
        return ""
    if close[0] in retired:
        return f" (did you mean {close[0]}? no longer an option: {retired[close[0]]})"
    return f" (did you mean {close[0]}?)"


def storage_location(config: Config, env: Mapping[str, str]) -> tuple[Path, str]:
    """Return memwarden's storage root (the option, $STATE_DIRECTORY, or XDG state home) and
    what chose it, for people. Each gateway's own folder in it is
    `memwarden.store.storage.locate`'s answer (JobContext.storage)."""
    configured = config.values["general.storage_dir"]
    if configured:
        source = config.sources.get("general.storage_dir", "default")
        return Path(configured).expanduser(), f"general.storage_dir ({source})"
    if env.get("STATE_DIRECTORY"):
        return Path(env["STATE_DIRECTORY"].split(":")[0]), "$STATE_DIRECTORY (systemd)"
    source = "$XDG_STATE_HOME" if env.get("XDG_STATE_HOME") else "default"
    return xdg_home(env, "XDG_STATE_HOME", ".local/state") / "memwarden", source
