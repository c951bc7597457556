"""`gateway.state_dir`: memwarden looks at a gateway's state dir, not at an empty or mistyped one.

Critical when no gateway lives there (the folder is missing, or holds neither the gateway config
nor agents): every other check of the gateway's files would then measure nothing and pass. The
result masks every alert it keeps from being measured, so none of them is called resolved.
"""

from __future__ import annotations

from dataclasses import replace

from memwarden.health.checks import HealthInputs
from memwarden.health.model import CheckResult, critical, ok
from memwarden.process.errors import GatewayConfigError, GatewayNotFound

KEY = "gateway.state_dir"


def check_state_dir(inputs: HealthInputs) -> list[CheckResult]:
    """Given the inputs, return `gateway.state_dir`: ok when a gateway lives in the state dir."""
    try:
        deployment = inputs.deployment
    except GatewayNotFound as error:
        return [replace(critical(KEY, error.message), masks=("*",))]
    except GatewayConfigError:
        return [ok(KEY, "the gateway state dir exists (its config is reported by other checks)")]
    agents = len(deployment.agents)
    return [ok(KEY, f"gateway state dir {deployment.state_dir}: {agents} agent(s)")]
