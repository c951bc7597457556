"""Read the machine once and run every doctor check; a check that breaks becomes a finding."""

from __future__ import annotations

import grp
import os
import shlex
import sqlite3
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from memwarden.agent_memory.handoff_files import main_file_agents, read_handoffs
from memwarden.alerts import alert_lifetime, alertmanager_urls
from memwarden.doctor.alerting import check_alert_destination
from memwarden.doctor.bootstrap import check_bootstrap
from memwarden.doctor.finding import Finding
from memwarden.doctor.gateway_config import check_compaction_mode, check_hook, check_memory_flush
from memwarden.doctor.metrics_file import check_metrics_file
from memwarden.doctor.permissions import Kind, PathFacts, check_permission
from memwarden.doctor.timers import check_timers
from memwarden.doctor.workspaces import WorkspaceFacts, check_workspace
from memwarden.fs.files import read_text_if_exists
from memwarden.gateway_hooks.shipped import (
    HOOK_NAMES,
    SETTINGS_FILE,
    STARTS_EXECUTABLE,
    current_bytes,
    installed_setting,
    shipped_files,
)
from memwarden.health.checks import unknown_check_patterns
from memwarden.health.deliveries import FOLDER as DELIVERIES
from memwarden.indexing.bootstrap_files import bootstrap_lengths
from memwarden.indexing.manifest import INDEX_PATH, choose_handoffs
from memwarden.openclaw.agents import Agent, not_a_folder
from memwarden.openclaw.bootstrap import GATEWAY_BOOTSTRAP
from memwarden.openclaw.endpoint import resolve_endpoint
from memwarden.openclaw.gateway_settings import (
    hook_installed,
    hook_selection,
    managed_hooks_dir,
    memory_flush,
)
from memwarden.openclaw.layout import Deployment
from memwarden.openclaw.paths import resolve_config_path
from memwarden.process.errors import (
    ConfigError,
    GatewayConfigError,
    GatewayNotFound,
    MemwardenError,
    UsageError,
    describe_error,
    describe_os_error,
)
from memwarden.process.runtime import JobContext
from memwarden.scheduling.act import read_crontab
from memwarden.scheduling.cron import find_block
from memwarden.scheduling.host import is_executable, linger_user
from memwarden.scheduling.jobs import scheduled_jobs
from memwarden.scheduling.manifest import Manifest, load_manifest
from memwarden.scheduling.spec import secrets_file_path, variables_timers_miss
from memwarden.scheduling.units import TARGETS
from memwarden.settings.urls import shown_url
from memwarden.store.storage import OWNER_FILE


def run_checks(context: JobContext, check_gateway: bool = True) -> list[Finding]:
    """Given a context, return the findings of every check, in a stable order."""
    try:
        findings, deployment = gateway_config(context)
    except (MemwardenError, OSError) as error:
        findings, deployment = _broken("gateway.config", error), None
    try:  # the install manifests by target
        manifests = {
            target: manifest
            for target in TARGETS
            if (manifest := load_manifest(context.storage_dir, target)) is not None
        }
    except MemwardenError as error:  # UsageError: one cannot be read
        findings += _broken("timers.installed", error)
        manifests = {}
    checks: list[tuple[str, Callable[[], list[Finding]]]] = []
    if deployment is not None:
        mode, flush = deployment.compaction_mode(), memory_flush(deployment.config)
        checks += [
            ("compaction", lambda: [check_compaction_mode(mode), check_memory_flush(flush)]),
            ("hooks", lambda: hooks(deployment, context.storage_dir / DELIVERIES)),
            ("bootstrap", lambda: bootstrap(deployment)),
            ("workspace", lambda: workspaces(deployment)),
        ]
    checks += [
        ("storage", lambda: storage(context)),
        ("timers", lambda: timers(context, manifests)),
        ("secrets", lambda: secrets_visibility(context, manifests)),
        ("alerts", lambda: alert_destination(context)),
        ("metrics", lambda: [metrics_file(context)]),
        ("permissions", lambda: permissions(context, deployment, manifests)),
    ]
    if check_gateway:
        checks.append(("gateway.reachable", lambda: [gateway_reachable(context, deployment)]))
    for key, check in checks:
        try:
            findings += check()
        except (MemwardenError, OSError, sqlite3.Error) as error:
            findings += _broken(key, error)
    return findings


def workspaces(deployment: Deployment) -> list[Finding]:
    """Whether memwarden can work in each agent's workspace (see doctor.workspaces)."""
    config_path = str(deployment.config_path)
    return [check_workspace(config_path, _workspace_facts(agent)) for agent in deployment.agents]


def _workspace_facts(agent: Agent) -> WorkspaceFacts:
    workspace = agent.workspace
    exists = agent.workspace_problem is None and workspace.is_dir()
    target = agent.memory_dir if agent.memory_dir.is_dir() else workspace
    return WorkspaceFacts(
        agent_id=agent.id,
        workspace=str(workspace),
        refused=agent.workspace_problem,
        exists=exists,
        writable=exists and os.access(target, os.W_OK | os.X_OK),
        not_a_folder=None if agent.workspace_problem else not_a_folder(workspace),
    )


def metrics_file(context: JobContext) -> Finding:
    """Whether node_exporter can read the metrics textfile (see doctor.metrics_file)."""
    configured = context.config.health.metrics_file
    owned, group_id, group_why = None, os.getegid(), "your group: the folder has no setgid bit"
    if configured:
        folder = Path(configured).expanduser().parent
        facts = folder.stat() if folder.is_dir() else None
        owned = facts.st_uid == os.getuid() if facts else None
        # A new file takes the folder's group with setgid, and always on macOS (BSD rule).
        if facts and (facts.st_mode & stat.S_ISGID or sys.platform == "darwin"):
            group_id, group_why = facts.st_gid, "the folder's"
    exporters = _exporters()
    exporter_is_me = None if not exporters else all(uid == os.getuid() for uid, _ in exporters)
    in_group = (  # root reads any file
        None if not exporters else all(uid == 0 or group_id in groups for uid, groups in exporters)
    )
    return check_metrics_file(
        configured,
        context.config.health.metrics_file_mode,
        owned,
        exporter_is_me,
        f"group {_group_name(group_id)} ({group_why})",
        in_group,
    )


# The process names of node_exporter: upstream, and Debian's prometheus-node-exporter (15 chars).
EXPORTER_NAMES = ("node_exporter", "prometheus-node", "prometheus-node-exporter")


def _exporters() -> list[tuple[int, set[int]]]:
    """Each node_exporter process on this host: its user id and group ids (none seen, or no
    /proc to look in: empty)."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() not in EXPORTER_NAMES:
                continue
            status = dict(
                line.split(":", 1) for line in (comm.parent / "status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        groups = {int(gid) for gid in (status["Gid"].split()[:1] + status["Groups"].split())}
        found.append((int(status["Uid"].split()[0]), groups))
    return found


def _group_name(group_id: int) -> str:
    try:
        return grp.getgrgid(group_id).gr_name
    except KeyError:
        return str(group_id)


def _broken(key: str, error: Exception) -> list[Finding]:
    """A check that could not run is a finding of its own; the other checks still run."""
    return [Finding(key, "warning", f"could not check {key}: {describe_error(error)}")]


def gateway_config(context: JobContext) -> tuple[list[Finding], Deployment | None]:
    """Find the gateway's state dir and config; parse the config (JSON5)."""
    path = resolve_config_path(context.gateway_state_dir, context.env)
    try:
        deployment = context.deployment
    except GatewayNotFound as error:
        return [
            Finding(
                "gateway.state_dir",
                "action",
                error.problem,
                "memwarden --state-dir <the gateway's state dir> doctor   (then set "
                '[gateway] state_dir = "<that dir>" in config.toml)',
            )
        ], None
    except GatewayConfigError as error:
        good = Path(f"{path}.last-good")
        fix = f"cp {good} {path}" if good.exists() else "openclaw config validate"
        return [Finding("gateway.config", "action", error.message, fix)], None
    if not path.exists():
        message = f"no gateway config at {path}: the gateway runs on its defaults"
        return [Finding("gateway.config", "info", message)], deployment
    return [Finding("gateway.config", "ok", f"{path} parses (JSON5)")], deployment


def hooks(deployment: Deployment, deliveries: Path) -> list[Finding]:
    """Check that memwarden's hooks are in `<state>/hooks/` and selected by the config, and
    that the bootstrap hook leaves its delivery receipts in `deliveries`, where health reads."""
    findings = []
    for name in HOOK_NAMES:
        folder = managed_hooks_dir(deployment.state_dir) / name
        selection = hook_selection(deployment.config, name)
        installed = hook_installed(folder)
        outdated = installed_hook_problems(folder, name, deliveries) if installed else []
        findings.append(check_hook(name, installed, str(folder), selection, outdated))
    return findings


def installed_hook_problems(folder: Path, name: str, deliveries: Path) -> list[str]:
    """What makes an installed hook differ from what `memwarden install hooks` would install."""
    problems = [
        f"{file} differs from this memwarden's (another version, or edited; install keeps a copy)"
        for file, payload in shipped_files(name).items()
        if current_bytes(folder / file) != payload
    ]
    if name not in STARTS_EXECUTABLE:
        receipts = installed_setting(folder, "deliveries")
        if receipts is None:
            problems.append(
                f"{SETTINGS_FILE} is missing or names no receipts folder: the hook leaves no "
                "delivery receipts, so health cannot tell whether a handoff reached the model"
            )
        elif Path(receipts) != deliveries:
            problems.append(
                f"{SETTINGS_FILE} sends the delivery receipts to {receipts}, not to "
                f"{deliveries} where health reads them"
            )
        return problems
    executable = installed_setting(folder, "executable")
    if executable is None:
        problems.append(f"{SETTINGS_FILE} is missing or names no executable")
    elif not is_executable(Path(executable)):
        problems.append(f"{SETTINGS_FILE} starts {executable}, which is not an executable file")
    return problems


def bootstrap(deployment: Deployment) -> list[Finding]:
    """Check each workspace's injected files (INDEX.md, every handoff) against its caps."""
    keeping_main_file = main_file_agents(deployment.agents)
    findings = []
    seen: set[Path] = set()
    for agent in deployment.agents:
        if agent.workspace in seen or not agent.workspace.is_dir():
            continue
        seen.add(agent.workspace)
        # ACTIVE_CONTEXT.md is one of the handoffs, read below.
        shared = bootstrap_lengths(agent.workspace, (*GATEWAY_BOOTSTRAP, INDEX_PATH))
        sharing = [other.id for other in deployment.agents if other.workspace == agent.workspace]
        found = read_handoffs(agent.memory_dir, sharing) if agent.memory_dir.is_dir() else []
        chosen = choose_handoffs(found, keeping_main_file, agent.workspace)[0]
        findings += check_bootstrap(
            agent.id,
            agent.workspace,
            shared,
            {file.path: file.chars or 0 for file in chosen},
            *deployment.bootstrap_caps(agent.id),
        )
    return findings


def storage(context: JobContext) -> list[Finding]:
    """Say which storage this gateway uses; warn about a root owned by a gateway now gone.

    A root owned by a state dir that is gone is most often this same gateway moved (its real
    path changed): its earlier state then sits in the root while this one starts afresh.
    """
    storage = context.storage
    findings = [
        Finding("storage", "info", f"memwarden's state for this gateway: {storage.describe()}")
    ]
    owner = storage.owner
    if owner is not None and owner != storage.gateway and not Path(owner).is_dir():
        record = f'{{"state_dir": "{storage.gateway}"}}'
        findings.append(
            Finding(
                "storage.owner",
                "warning",
                f"the state in {storage.root} belongs to the gateway at {owner}, which "
                f"no longer exists; this gateway keeps its own in {storage.path}. If "
                f"{owner} was this gateway before it moved, give it its state back",
                f"echo {shlex.quote(record)} > {shlex.quote(str(storage.root / OWNER_FILE))}",
            )
        )
    return findings


def timers(context: JobContext, manifests: dict[str, Manifest]) -> list[Finding]:
    """Check the installed timers, whether they match the settings, and the jobs' last runs."""
    wanted = {job.name: job.interval_minutes for job in scheduled_jobs(context.config)}
    last_success: dict[str, float | None] = {}
    if (context.storage_dir / "state.db").exists():
        for job in {*wanted, *(j for m in manifests.values() for j in m.jobs)}:
            run = context.state.last_success(job)
            last_success[job] = (run.finished_at or run.started_at) if run else None
    executable_ok = {
        target: os.access(manifest.executable, os.X_OK) for target, manifest in manifests.items()
    }
    health = context.config.health
    findings = check_timers(
        manifests,
        wanted,
        last_success,
        context.now().timestamp(),
        (health.stale_warning_multiple, health.stale_critical_multiple),
        executable_ok,
        str(context.log_dir),
        {target: _missing_files(context, manifest) for target, manifest in manifests.items()},
    )
    if "systemd" in manifests:
        findings.append(_linger())
    return findings


def _missing_files(context: JobContext, manifest: Manifest) -> list[str]:
    """The unit files (not the secrets file, which the operator may move) that are gone, and
    for cron memwarden's lines in the crontab (`crontab -l`), which are cron's unit files."""
    gone = [
        entry.path
        for entry in manifest.files
        if entry.role != "secrets" and not os.path.lexists(entry.path)
    ]
    if manifest.target == "cron" and manifest.jobs:
        try:
            has_block = find_block(read_crontab(context.env)[0]) is not None
        except UsageError as error:
            return [f"your crontab ({error})", *gone]
        if not has_block:
            return ["memwarden's lines in your crontab", *gone]
    return gone


def _linger() -> Finding:
    user, lingering = linger_user()
    if lingering:
        return Finding("timers.linger", "ok", f"lingering is on for {user}: timers run logged out")
    return Finding(
        "timers.linger",
        "warning",
        f"lingering is off for {user}: the systemd user timers stop when {user} logs out",
        f"sudo loginctl enable-linger {user}",
    )


def secrets_visibility(context: JobContext, manifests: dict[str, Manifest]) -> list[Finding]:
    """Warn about settings and tokens set in this shell that scheduled runs will not see."""
    path = secrets_file_path(context)
    pinned = {name for manifest in manifests.values() for name in manifest.environment}
    return [
        Finding(
            f"secrets.{name}",
            "warning",
            f"{name} is set in this shell only: scheduled runs will not see it",
            f"{name}=<value>   (a line in {path}, mode 0600)",
        )
        for name in variables_timers_miss(context, pinned)
    ]


def alert_destination(context: JobContext) -> list[Finding]:
    """Check that health alerts reach someone, that the secrets file can name a channel, and
    the other settings health refuses to run with: health.disabled_checks entries that name no
    check, and an Alertmanager resolve timeout within one health interval."""
    config, path = context.config, secrets_file_path(context)
    urls = alertmanager_urls(config.alertmanager)
    findings = check_alert_destination(
        config.slack, str(path), read_text_if_exists(path), [shown_url(url) for url in urls]
    )
    findings += [
        Finding("health.disabled_checks", "action", problem, "health.disabled_checks = [...]")
        for problem in unknown_check_patterns(config)
    ]
    try:
        if urls:
            alert_lifetime(config)
    except ConfigError as error:
        fix = f"alertmanager.resolve_timeout_minutes = {3 * config.schedule.health_minutes}"
        key = "alerts.resolve_timeout"
        findings += [Finding(key, "action", line, fix) for line in error.problems]
    return findings


def permissions(
    context: JobContext, deployment: Deployment | None, manifests: dict[str, Manifest]
) -> list[Finding]:
    """Check the modes of secrets, memwarden's state, memory folders and installed scripts."""
    paths: list[tuple[str, str, Path, Kind]] = [
        ("permissions.secrets_file", "secrets file", secrets_file_path(context), "secret"),
        ("permissions.storage_dir", "memwarden's state dir", context.storage_dir, "secret"),
    ]
    if deployment is not None:
        if deployment.gateway_token():
            label = "gateway config (holds the token)"
            paths.append(("permissions.gateway_config", label, deployment.config_path, "secret"))
        seen: set[Path] = set()
        for agent in deployment.agents:
            if agent.memory_dir not in seen:
                seen.add(agent.memory_dir)
                key, label = f"permissions.memory.{agent.id}", f"memory folder of {agent.id}"
                paths.append((key, label, agent.memory_dir, "private"))
    for target, manifest in manifests.items():
        for entry in manifest.files:
            if entry.role in ("unit", "runner"):
                key = f"permissions.{target}.{Path(entry.path).name}"
                paths.append((key, f"{target} {entry.role}", Path(entry.path), "code"))
    facts = [_path_facts(*path) for path in paths]
    return [check_permission(fact) for fact in facts if fact is not None]


def _path_facts(key: str, label: str, path: Path, kind: Kind) -> PathFacts | None:
    """Return the facts of `path`; None when it does not exist; why, when it cannot be read."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return PathFacts(key, label, str(path), 0, kind, describe_os_error(error))
    return PathFacts(key, label, str(path), info.st_mode, kind)


def gateway_reachable(context: JobContext, deployment: Deployment | None) -> Finding:
    """Connect to the gateway with memwarden's token (the connect handshake checks it)."""
    # lazy: websockets (about 55 ms) only when the gateway is contacted (not --skip-gateway)
    from memwarden.openclaw.gateway import GatewayAuthError, GatewayClient, GatewayError

    url, token = resolve_endpoint(context.config, deployment, context.env)
    token_line = (
        f"MEMWARDEN_GATEWAY_TOKEN=<the gateway token>   (a line in {secrets_file_path(context)})"
    )
    if token is None and deployment is None:
        # The token is usually in the gateway config, which was not found (gateway.state_dir
        # says why): asking for one here would send the operator the wrong way.
        return Finding(
            "gateway.token",
            "info",
            "not checked: no gateway config was read (see gateway.state_dir); the token is "
            "usually in it (gateway.auth.token)",
        )
    if token is None:
        return Finding(
            "gateway.token",
            "action",
            "no gateway token: memwarden cannot list or reset sessions (gateway.token, "
            "$OPENCLAW_GATEWAY_TOKEN and the gateway config's gateway.auth.token are unset)",
            token_line,
        )
    timeout = min(context.config.gateway.timeout_seconds, 10.0)
    try:
        with GatewayClient(url, token, timeout) as client:
            version = client.server_version
    except GatewayAuthError:
        return Finding(
            "gateway.reachable",
            "action",
            f"the gateway at {shown_url(url)} refused memwarden's token",
            token_line,
        )
    except GatewayError as error:
        return Finding(
            "gateway.reachable",
            "action",
            f"gateway not reachable: {error.message}",
            "openclaw gateway status",
        )
    shown = f" (openclaw {version})" if version else ""
    return Finding(
        "gateway.reachable",
        "ok",
        f"the gateway at {shown_url(url)} accepts memwarden's token{shown}",
    )
