"""Step 1 of maintain: compress old file-era transcripts, delete old compressed ones."""

from __future__ import annotations

from memwarden.fs.files import remove_stale_temp_files
from memwarden.maintenance.compress import TranscriptChanged, gzip_in_place
from memwarden.maintenance.facts import list_files
from memwarden.maintenance.report import StepReport, size_text
from memwarden.maintenance.retention import RetentionAction, plan_transcript_retention
from memwarden.openclaw.agents import Agent
from memwarden.openclaw.sessions import load_sessions
from memwarden.process.errors import MemwardenError, describe_error
from memwarden.process.runtime import JobContext


def transcripts_step(context: JobContext, agents: list[Agent], dry_run: bool) -> StepReport:
    """Apply transcript retention to each file-era agent; one agent's failure spares the others."""
    report = StepReport("transcripts")
    maintain = context.config.maintain
    totals = {"compressed": 0, "deleted": 0, "bytes_saved": 0}
    per_agent = []
    for agent in agents:
        if agent.era != "file":
            continue
        leftovers = [] if dry_run else _remove_compression_leftovers(agent)
        if leftovers:
            report.lines.append(
                f"  {agent.id}: removed {len(leftovers)} temp file(s) a killed run left: "
                + ", ".join(leftovers)
            )
        try:
            sessions = load_sessions(agent)
            files = list_files(agent.sessions_dir)
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {agent.id}: transcripts left as they are: {describe_error(error)}")
            continue
        current = [
            s.transcript.path for s in sessions if s.transcript and s.transcript.kind == "file"
        ]
        actions = plan_transcript_retention(
            files,
            # By name wherever it lives: a store may spell the sessions folder another way.
            current_names={path.name for path in current},
            current_ids={session.session_id for session in sessions},
            now=context.now().timestamp(),
            compress_after_days=maintain.compress_transcripts_after_days,
            delete_after_days=maintain.delete_compressed_after_days,
        )
        done = _apply(report, agent, actions, dry_run, maintain.delete_compressed_after_days)
        per_agent.append({"agent": agent.id, **done})
        for key in totals:
            totals[key] += done[key]
        if (done["compressed"] or done["deleted"]) and not dry_run:
            context.state.record_event(
                "transcripts.retention",
                job="maintain",
                run_id=context.run_id,
                agent_id=agent.id,
                data=done,
            )
    if dry_run:
        report.lines.append(
            f"transcripts: would compress {totals['compressed']} and delete {totals['deleted']} "
            f"(deleting frees {size_text(totals['bytes_saved'])})"
        )
    else:
        report.lines.append(
            f"transcripts: {totals['compressed']} compressed, {totals['deleted']} deleted, "
            f"saved {size_text(totals['bytes_saved'])}"
        )
    report.data = {**totals, "agents": per_agent}
    return report


def _apply(
    report: StepReport,
    agent: Agent,
    actions: list[RetentionAction],
    dry_run: bool,
    delete_after_days: int,
) -> dict[str, int]:
    done = {"compressed": 0, "deleted": 0, "bytes_saved": 0}
    for action in actions:
        path = agent.sessions_dir / action.name
        age = f"{action.age_days:.0f} days old"
        if action.action == "compress" and 0 < delete_after_days <= action.age_days:
            age += f"; past {delete_after_days} days, so a later run deletes it"
        if dry_run:
            verb = "would compress" if action.action == "compress" else "would delete"
            report.lines.append(
                f"  {agent.id}: {verb} {action.name} ({size_text(action.size)}, {age})"
            )
            done["compressed" if action.action == "compress" else "deleted"] += 1
            done["bytes_saved"] += action.size if action.action == "delete" else 0
            continue
        try:
            if action.action == "compress":
                saved = action.size - gzip_in_place(path)
                done["compressed"] += 1
            else:
                path.unlink()
                saved = action.size
                done["deleted"] += 1
        except TranscriptChanged as error:
            report.lines.append(f"  {agent.id}: skipped {action.name}: {error.message}")
            continue
        except (MemwardenError, OSError) as error:
            report.fail(f"agent {agent.id}: {action.name}: {describe_error(error)}")
            continue
        done["bytes_saved"] += saved
        past = "compressed" if action.action == "compress" else "deleted"
        report.lines.append(f"  {agent.id}: {past} {action.name} ({age}, saved {size_text(saved)})")
    return done


def _remove_compression_leftovers(agent: Agent) -> list[str]:
    """Delete the `.<transcript>.gz.<pid>.tmp` files a maintain run killed while compressing
    left in the agent's sessions folder; return their names."""
    return remove_stale_temp_files(agent.sessions_dir, of=lambda target: target.endswith(".gz"))
