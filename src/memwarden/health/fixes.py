"""What to do when a check fires: one line per check family, for alerts that reach machines
(Alertmanager's `fix` annotation). docs/health.md says the same at length."""

from __future__ import annotations

DOCS = "docs/health.md"

FIXES = {
    "gateway.state_dir": "memwarden is pointed at a folder with no gateway: fix --state-dir, "
    "$OPENCLAW_STATE_DIR or gateway.state_dir (`memwarden config show` says which is used).",
    "memwarden.state": "memwarden cannot write its state database: free space on its "
    "filesystem, or end the process holding state.db (`lsof <state.db>`).",
    "gateway.live": "The gateway is down or hung: `openclaw gateway status`, read its logs "
    "(`openclaw logs --follow`) and restart it.",
    "gateway.ready": "The gateway runs but is not ready: read its logs for the failing channels "
    "or plugins.",
    "gateway.rpc": "The HTTP side answers but not the RPC: check the gateway token "
    "(MEMWARDEN_GATEWAY_TOKEN) and the gateway logs.",
    "gateway.process": "No gateway process on this machine: start it and find out why it "
    "stopped (OOM killer, crash loop in its service logs).",
    "disk": "Free space: `memwarden maintain`, remove old *.jsonl.reset.* archives, or grow "
    "the volume.",
    "transcripts.volume": "Run `memwarden maintain` (retention of archives), or raise "
    "health.transcript_warning_mb.",
    "memory.oversized": "Split the file and move old parts to memory/archive/; `memwarden "
    "index` catalogs them.",
    "bootstrap.budget": "Trim the file named, or move older MEMORY.md entries into files "
    "under memory/ (`memwarden index` catalogs them), or raise the gateway's bootstrapMaxChars "
    "or bootstrapTotalMaxChars.",
    "cron.errors": "`openclaw cron runs --id <jobId>` and the gateway logs: a failing model "
    "provider, delivery channel or prompt.",
    "jobs.stale": "`memwarden status` shows the job's last outcome; check that its timer is "
    "installed and running.",
    "rotate.failing": "`memwarden status` and `memwarden events` show the errors: token scope, "
    "sessions changing under rotation, or the gateway unreachable.",
    "context.pressure": "Rotation has not handled these conversations: is rotate running or "
    "failing? `memwarden rotate --dry-run` shows its decision.",
    "config.drift": "Compare the gateway config with the backup named in the message and "
    "restore what is missing.",
    "sessions.store": "The file named cannot be read; a corrupt sessions.json has "
    "sessions.json.bak.* copies beside it.",
}


def family(key: str) -> str:
    """Given a check key (`disk:/var`), return its family (`disk`)."""
    return key.split(":", 1)[0]


def fix_for(key: str) -> str:
    """Given a check key, return what to do about it (a pointer to the docs when unknown)."""
    return FIXES.get(family(key), f"See {DOCS} for the check {family(key)}.")
