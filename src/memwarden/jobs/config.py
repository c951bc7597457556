"""`memwarden config show|check|example|docs`: memwarden's own settings.

`show` starts with the values in use that are worked out rather than set (the gateway state dir,
the gateway URL, memwarden's storage dir, the config and secrets files), each with its source:
a flag, a variable, a config file or the default. Then every option, with where it came from.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from memwarden.health.checks import check_settings
from memwarden.jobs.common import add_verb
from memwarden.openclaw.endpoint import endpoint_source, resolve_endpoint
from memwarden.process.errors import ConfigError, GatewayConfigError, GatewayNotFound
from memwarden.process.runtime import JobContext, JobResult
from memwarden.scheduling.spec import secrets_file_path
from memwarden.settings import ALL_OPTIONS, render
from memwarden.settings.config import check_files, storage_location

IN_USE_LABELS = {
    "config_file": "config file",
    "gateway_state_dir": "gateway state dir",
    "gateway_url": "gateway URL",
    "storage_dir": "storage dir",
    "secrets_file": "secrets file",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", required=True)
    add_verb(verbs, "show", "print the effective settings (secrets masked) and their sources")
    add_verb(verbs, "check", "validate settings and the gateway config; exit 2 if invalid")
    add_verb(verbs, "example", "print the example config generated from the schema")
    add_verb(verbs, "docs", "print the Markdown options reference generated from the schema")


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    result = JobResult("config")
    config = context.config
    if options.verb == "show":
        in_use = values_in_use(context, options)
        width = max(len(label) for label in IN_USE_LABELS.values()) + 1
        result.lines = ["# in use:"] + [
            f"#   {IN_USE_LABELS[name] + ':':<{width}} {value} ({source})"
            for name, (value, source) in in_use.items()
        ]
        result.lines += render.effective_toml(config.values, config.sources).splitlines()
        result.data = {
            "config_file": str(config.path) if config.path else None,
            "secrets_file": str(config.secrets_path) if config.secrets_path else None,
            "storage_dir": str(context.storage_dir),
            "in_use": {
                name: {"value": value, "source": source} for name, (value, source) in in_use.items()
            },
            "values": {o.key: render.masked(o, config.values[o.key]) for o in ALL_OPTIONS},
            "sources": config.sources,
        }
    elif options.verb == "check":
        problems = []
        for check in (check_files, check_settings):  # check_settings: what health refuses
            try:
                check(config)
            except ConfigError as error:
                problems += error.problems
        if problems:
            raise ConfigError(problems)
        deployment = context.deployment
        secrets = config.secrets_path
        result.lines = [
            f"memwarden config: ok ({config.path or 'defaults'})",
            f"secrets file: {f'ok ({secrets})' if secrets else 'none read'}",
            f"gateway config: ok ({deployment.config_path}), {len(deployment.agents)} agent(s)",
        ]
        result.data = {
            "ok": True,
            "secrets_file": str(secrets) if secrets else None,
            "gateway_config": str(deployment.config_path),
        }
    elif options.verb == "example":
        result.lines = render.example_toml().splitlines()
    else:
        result.lines = render.docs_markdown().splitlines()
    return result


def values_in_use(context: JobContext, options: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """Return, by name, each value memwarden works out and uses, with what chose it."""
    config, env = context.config, context.env
    state_dir, state_source = context.gateway_state_location
    try:
        deployment = context.deployment
    except GatewayNotFound as error:  # no gateway there: say so, and still show the rest
        deployment = None
        state_source += f"; no gateway there: {error.reason}"
    except GatewayConfigError:
        deployment = None
        state_source += "; its config does not parse (`memwarden config check` says where)"
    url, _token = resolve_endpoint(config, deployment, env)
    storage, storage_source = storage_location(config, env)
    return {
        "config_file": _config_file(config.path, options, env),
        "gateway_state_dir": (str(state_dir), state_source),
        "gateway_url": (render.without_password(url), endpoint_source(config, deployment, env)),
        "storage_dir": (str(storage), storage_source),
        "secrets_file": _secrets_file(config, secrets_file_path(context)),
    }


def _config_file(path: Path | None, options: argparse.Namespace, env) -> tuple[str, str]:
    if path is None:
        return "(none)", "defaults and environment only"
    if getattr(options, "config", None) is not None:
        return str(path), "--config"
    if env.get("MEMWARDEN_CONFIG"):
        return str(path), "$MEMWARDEN_CONFIG"
    return str(path), "default"


def _secrets_file(config, path: Path) -> tuple[str, str]:
    source = config.sources.get("general.secrets_file", "default")
    source = "default" if source == "default" else f"general.secrets_file ({source})"
    return str(path), source if path.exists() else f"{source}; not found"
