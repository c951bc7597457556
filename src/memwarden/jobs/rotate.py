"""`memwarden rotate`: reset sessions whose context passed the threshold, after checkpointing them.

Flow: list the sessions through the gateway; confirm stale token counts from the transcripts;
decide (`memwarden.rotation.policy`, pure); for each session to rotate, checkpoint exactly that
session (forced) and only when that succeeded call `sessions.reset` with `expectedSessionId`, so a
session that changed meanwhile is left alone; record the lineage and the timeline events. One
session's failure never stops the others; any failed rotation makes the exit code 1.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memwarden.jobs.common import add_agent_filter, add_dry_run, select_agents
from memwarden.openclaw.endpoint import resolve_endpoint
from memwarden.openclaw.gateway import (
    GatewayCallError,
    GatewayClient,
    GatewayError,
    parse_session_row,
)
from memwarden.process import stopping
from memwarden.process.errors import MemwardenError, UsageError
from memwarden.process.runtime import JobContext, JobResult
from memwarden.rotation.lineage import record_rotation
from memwarden.rotation.policy import Policy, decide, needs_confirmation
from memwarden.rotation.report import Outcome, RotationReport
from memwarden.rotation.stores import SessionStores

if TYPE_CHECKING:
    from memwarden.rotation.policy import Decision

# Checkpoint outcomes after which the session's handoff holds it: written now, or already
# written with the same content. `skipped` (too small, no transcript) saved nothing.
SAVED_OUTCOMES = frozenset({"written", "unchanged"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threshold",
        type=int,
        metavar="N",
        help="rotate at N tokens of context (default: rotate.threshold_tokens, 150000)",
    )
    parser.add_argument(
        "--ratio",
        type=float,
        metavar="R",
        help="or at this fraction of the session's context window, whichever comes first "
        "(default: rotate.context_ratio, 0.75)",
    )
    parser.add_argument(
        "--max",
        type=int,
        metavar="N",
        help="reset at most N sessions in this run (default: rotate.max_per_run, 5)",
    )
    add_agent_filter(parser)
    add_dry_run(parser)


def run(context: JobContext, options: argparse.Namespace) -> JobResult:
    policy = build_policy(context, options)
    deployment = context.deployment
    agent_ids = {agent.id for agent in select_agents(deployment, options.agent)}
    url, token = resolve_endpoint(context.config, deployment, context.env)
    stores = SessionStores(deployment)
    with GatewayClient(url, token, context.config.gateway.timeout_seconds) as gateway:
        listed = [parse_session_row(row) for row in gateway.list_sessions()]
        # Unscoped keys (`global`, legacy names) belong to the default agent.
        default_id = deployment.default_agent().id
        owned = [
            row if row.agent_id else replace(row, agent_id=default_id) for row in listed if row
        ]
        rows = [row for row in owned if row.agent_id in agent_ids]
        confirmed = {
            row.key: stores.confirm_tokens(row) for row in needs_confirmation(rows, policy)
        }
        decisions = decide(rows, policy, context.now(), confirmed)
        report = RotationReport(url, options.dry_run, policy, listed=len(rows))
        for decision in decisions:
            report.add(decision, _act(context, gateway, stores, decision, options.dry_run))
    return report.result()


def build_policy(context: JobContext, options: argparse.Namespace) -> Policy:
    """Given the context and the command line, return the policy. Raise UsageError if invalid."""
    if options.threshold is not None and options.threshold < 1:
        raise UsageError(f"--threshold: expected a token count ≥ 1, got {options.threshold}")
    if options.ratio is not None and not 0 < options.ratio <= 1:
        raise UsageError(f"--ratio: expected a fraction above 0 and at most 1, got {options.ratio}")
    if options.max is not None and options.max < 1:
        raise UsageError(f"--max: expected a number of sessions ≥ 1, got {options.max}")
    return Policy.from_config(
        context.config,
        threshold_tokens=options.threshold,
        context_ratio=options.ratio,
        max_per_run=options.max,
    )


# --- acting on one decision ---------------------------------------------------------------------


def _act(
    context: JobContext,
    gateway: GatewayClient,
    stores: SessionStores,
    decision: Decision,
    dry_run: bool,
) -> Outcome:
    if decision.action == "skip":
        status = "postponed" if decision.wanted else "skipped"
        if status == "postponed" and not dry_run:
            _record_event(context, "rotation.skipped", decision, {"check": decision.check})
        return Outcome(status, decision.reason)
    reset_reason = context.config.rotate.reset_reason
    if dry_run:
        return Outcome(
            "would_rotate",
            f"would checkpoint it, then sessions.reset (reason {reset_reason})",
        )
    stopping.check()
    try:
        outcome = _rotate(context, gateway, stores, decision)
    except MemwardenError as error:
        outcome = Outcome("failed", error.message)
    except Exception as error:  # noqa: BLE001 - one broken session never stops the others
        stopping.check()
        outcome = Outcome("failed", f"{type(error).__name__}: {error}")
    if outcome.status in ("rotated", "failed"):
        try:
            _record_lineage(context, decision, outcome)
        except Exception as error:  # noqa: BLE001 - the reset happened; say the record failed
            outcome.detail += f" (lineage not recorded: {type(error).__name__}: {error})"
    if outcome.status == "postponed":
        _record_event(context, "rotation.skipped", decision, {"error": outcome.detail})
    return outcome


def _rotate(
    context: JobContext, gateway: GatewayClient, stores: SessionStores, decision: Decision
) -> Outcome:
    # lazy: only a reset checkpoints (most runs reset nothing)
    from memwarden.checkpoint.run.job import (
        checkpoint_session,
        refresh_bootstrap,
        snapshot_written,
    )

    agent, record = stores.session(decision)
    if record.session_id != decision.session_id:
        return Outcome("postponed", "session changed since it was listed: next run")
    checkpoint = checkpoint_session(context, agent, record)
    saved = {
        "ok": checkpoint.ok,
        "outcome": checkpoint.outcome,
        "reason": checkpoint.reason,
        "files": [str(path) for path in checkpoint.files],
        "warnings": list(checkpoint.warnings),
    }
    if not checkpoint.ok:
        detail = f"checkpoint failed, session not reset: {saved['reason'] or saved['outcome']}"
        return Outcome("failed", detail, checkpoint=saved)
    if checkpoint.kept_in_place is not None:
        # A file of the operator's is where its handoff goes: the next turn would find none.
        kept = checkpoint.kept_in_place
        detail = (
            f"its handoff was not written, session not reset: {kept} was not written by "
            "memwarden; move it, then run rotate again"
        )
        return Outcome("failed", detail, checkpoint=saved)
    if checkpoint.outcome not in SAVED_OUTCOMES:
        # Nothing was written for this session: resetting it would lose what it holds.
        detail = f"checkpoint {checkpoint.outcome} it ({checkpoint.reason}): not reset"
        return Outcome("postponed", detail, checkpoint=saved)
    # The bootstrap manifest (and INDEX.md when `index.after_checkpoint`) describes the handoff
    # just saved, so the hook injects it into the session's next bootstrap; a manifest that
    # does not list it holds the reset back (the next turn would start without it), unless the
    # operator turned handoff injection off (`index.inject_active_context`: none is listed).
    indexed = refresh_bootstrap(context, [agent])
    saved["index"] = "; ".join(item.get("error") or item["status"] for item in indexed) or None
    saved["manifest"] = "; ".join(str(item.get("manifest")) for item in indexed) or None
    listed = {h["session"] for item in indexed for h in item.get("handoffs", [])}  # lower-case
    if context.config.index.inject_active_context and decision.key.lower() not in listed:
        errors = "; ".join(item["error"] for item in indexed if item.get("error"))
        detail = (
            "the bootstrap manifest does not list its handoff, session not reset"
            + (f" ({errors})" if errors else "")
            + "; the next run tries again"
        )
        return Outcome("failed", detail, checkpoint=saved)
    if checkpoint.outcome == "written":
        # Memory history: the snapshot id, or the problem when it failed (the reset goes on).
        problems = snapshot_written(context, [agent], [checkpoint], "rotate")
        saved["history"] = "; ".join(problems) or checkpoint.snapshot
    return _reset(context, gateway, decision, saved)


def _reset(
    context: JobContext, gateway: GatewayClient, decision: Decision, checkpoint: dict[str, Any]
) -> Outcome:
    settings = context.config.rotate
    timeout = max(gateway.timeout, settings.reset_timeout_seconds)
    try:
        new_id, revision = gateway.reset_session(
            decision.key, decision.session_id, decision.agent_id, settings.reset_reason, timeout
        )
    except GatewayCallError as error:
        if error.reason == "session-changed":
            detail = "session changed before the reset (expectedSessionId): next run"
            return Outcome("postponed", detail, checkpoint=checkpoint)
        return Outcome("failed", error.message, checkpoint=checkpoint)
    except GatewayError as error:
        return Outcome(
            "failed", f"{error.message}; the reset may not have happened", checkpoint=checkpoint
        )
    same = "in place, same session id" if new_id == decision.session_id else f"new id {new_id}"
    return Outcome("rotated", f"checkpointed and reset ({same})", new_id, revision, checkpoint)


# --- recording -----------------------------------------------------------------------------------


def _record_lineage(context: JobContext, decision: Decision, outcome: Outcome) -> None:
    failed = outcome.status == "failed"
    reset_reason = context.config.rotate.reset_reason
    with context.state.transaction():
        record_rotation(
            context.state, decision, outcome, run_id=context.run_id, reset_reason=reset_reason
        )
        data = {"tokens": decision.tokens, "limit": decision.limit, "detail": outcome.detail}
        if outcome.new_session_id:
            data["new_session_id"] = outcome.new_session_id
        _record_event(context, "rotation.failed" if failed else "rotation.done", decision, data)


def _record_event(
    context: JobContext, event_type: str, decision: Decision, data: dict[str, Any]
) -> None:
    context.state.record_event(
        event_type,
        job="rotate",
        run_id=context.run_id,
        agent_id=decision.agent_id,
        session_key=decision.key,
        session_id=decision.session_id,
        data={"reason": decision.reason, **data},
    )
