"""`memwarden health`: check the gateway, the host and memwarden's own jobs; alert on Slack
and/or Alertmanager (`memwarden.health.run`). Exit 1 when a check is critical or could not run;
exit 2 when no gateway lives in the state dir (after alerting on it).
"""

from __future__ import annotations

import argparse

from memwarden.health.run import run_health
from memwarden.jobs.common import add_dry_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-alert",
        action="store_true",
        help="run the checks (and write the metrics file) without touching alert state, Slack "
        "or Alertmanager",
    )
    add_dry_run(parser)


run = run_health  # the command is a health run, options and all
