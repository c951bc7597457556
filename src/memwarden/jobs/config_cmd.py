"""`memwarden config show|check|example|docs`: memwarden's own settings."""

from __future__ import annotations

import argparse

from memwarden.jobs.common import add_verb
from memwarden.runtime import JobContext, JobResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", required=True)
    add_verb(verbs, "show", "print the effective settings (secrets masked) and their sources")
    add_verb(verbs, "check", "validate settings and the gateway config; exit 2 if invalid")
    add_verb(verbs, "example", "print the example config generated from the schema")
    add_verb(verbs, "docs", "print the Markdown options reference generated from the schema")


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    from memwarden.settings import ALL_OPTIONS, render

    result = JobResult("config")
    config = context.config
    if options.verb == "show":
        result.lines = render.effective_toml(config.values, config.sources).splitlines()
        result.data = {
            "config_file": str(config.path) if config.path else None,
            "secrets_file": str(config.secrets_path) if config.secrets_path else None,
            "storage_dir": str(context.storage_dir),
            "values": {o.key: render.masked(o, config.values[o.key]) for o in ALL_OPTIONS},
            "sources": config.sources,
        }
        header = f"# config file: {config.path or '(none: defaults and environment)'}"
        result.lines.insert(0, header)
    elif options.verb == "check":
        deployment = context.deployment
        result.lines = [
            f"memwarden config: ok ({config.path or 'defaults'})",
            f"gateway config: ok ({deployment.config_path}), {len(deployment.agents)} agent(s)",
        ]
        result.data = {"ok": True, "gateway_config": str(deployment.config_path)}
    elif options.verb == "example":
        result.lines = render.example_toml().splitlines()
    else:
        result.lines = render.docs_markdown().splitlines()
    return result
