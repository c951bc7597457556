"""Plan one run's alerts (`plan_alerts`) and turn its notices into one message: plain text (the
fallback) and Slack blocks.

Sections in order: new, worse, still failing, resolved; a footer names the other problems still
open that were not due for a reminder. Text comes from templates in `templates/health/`.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from typing import Any

import orjson

from memwarden.alerts import AlertMessage
from memwarden.fs.templating import render
from memwarden.health.model import CheckResult, Status, duration
from memwarden.health.policy import AlertPlan, AlertState, Notice, decide_alerts
from memwarden.process.readable import utc_minute

SECTION_TITLES = {
    "new": "New",
    "worse": "Worse",
    "reminder": "Still failing",
    "resolved": "Resolved",
}
ICONS = {
    Status.CRITICAL: ":red_circle:",
    Status.WARNING: ":large_orange_circle:",
    Status.OK: ":white_check_mark:",
}
SECTION_LIMIT = 3000  # Slack's limit for a section's text
HEADER_LIMIT = 150  # and for a header's
ITEM_LIMIT = 1000  # one check's line; a longer message is cut (the plain text keeps it whole)
MORE_LINE_ROOM = 80  # the "… and N more" line


@dataclass(frozen=True)
class NewMessage:
    """A message to enqueue with the plan that produced it."""

    idempotency_key: str
    summary: str
    text: str
    blocks: list[dict[str, Any]] | None
    notices: list[dict[str, Any]]

    def to_alert(self) -> AlertMessage:
        """The message as a sink sends it."""
        return AlertMessage(self.text, self.blocks, self.idempotency_key)


@dataclass(frozen=True)
class AlertSettings:
    cooldown: timedelta
    send_resolved: bool
    mention: str
    host: str = field(default_factory=socket.gethostname)


@dataclass(frozen=True)
class Item:
    """One notice as people read it."""

    icon: str
    status: str
    key: str
    message: str
    note: str


def plan_alerts(
    previous: Mapping[str, AlertState],
    results: list[CheckResult],
    now: datetime,
    settings: AlertSettings,
    undelivered: Collection[str] = (),
    announced: bool = True,
) -> tuple[AlertPlan, NewMessage | None]:
    """Given the stored alert states (those that could be read), this run's results, the time,
    the settings, the keys named by a message still waiting for delivery and whether the news
    reaches anyone (`announced`: there is an alert destination), return the plan and the
    message it calls for (None when there is no news). Pure."""
    plan = decide_alerts(previous, results, now, settings.cooldown, undelivered, announced)
    notices = [n for n in plan.notices if settings.send_resolved or n.kind != "resolved"]
    message = build_message(plan, notices, now, settings.host, settings.mention)
    return plan, message


def build_message(
    plan: AlertPlan,
    notices: Sequence[Notice],
    now: datetime,
    host: str,
    mention: str = "",
) -> NewMessage | None:
    """Given the plan, the notices to send (the plan's, maybe without resolutions), the time, the
    host name and an optional mention for critical news, return the message, or None if there is
    nothing to say."""
    if not notices:
        return None
    sections = {  # the items under each title, titles without items left out
        title: [_item(notice, now) for notice in notices if notice.kind == kind]
        for kind, title in SECTION_TITLES.items()
        if any(notice.kind == kind for notice in notices)
    }
    summary = summarize(notices)
    critical = any(n.status is Status.CRITICAL and n.kind != "resolved" for n in notices)
    quiet = [state.key for state in plan.quiet]
    values = {
        "host": host,
        "summary": summary,
        "sections": sections,
        "quiet": quiet,
        "time": utc_minute(now),
        "mention": mention.strip() if critical else "",
        "escape": slack_escape,
    }

    text = render("health/alert.txt.j2", **values)
    notice_json = [notice.to_json() for notice in notices]
    return NewMessage(
        idempotency_key=idempotency_key(notice_json, now),
        summary=summary,
        text=text,
        blocks=_blocks(values),
        notices=notice_json,
    )


def summarize(notices: Sequence[Notice]) -> str:
    """Given notices, return a short summary such as `1 new critical, 1 resolved`."""
    parts = []
    for kind, label in (("new", "new"), ("worse", "worse"), ("reminder", "still failing")):
        chosen = [notice for notice in notices if notice.kind == kind]
        if not chosen:
            continue
        worst = max(chosen, key=lambda notice: notice.status.rank).status
        parts.append(f"{len(chosen)} {label} ({worst.value})")
    resolved = sum(1 for notice in notices if notice.kind == "resolved")
    if resolved:
        parts.append(f"{resolved} resolved")
    return ", ".join(parts)


def idempotency_key(notices: list[dict[str, Any]], now: datetime) -> str:
    """Given the notices and the time of a run, return a key naming that message for good."""
    digest = hashlib.sha256(orjson.dumps([now.isoformat(), notices], default=str)).hexdigest()
    return f"mw-{digest[:32]}"


def slack_escape(text: str) -> str:
    """Given text, return it safe for Slack mrkdwn (&, < and > are control characters)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def describe_open(states: Sequence[AlertState], now: datetime) -> list[str]:
    """Given open alert states, return one line each: status, key, for how long, message."""
    return [
        f"{state.status.value:<8} {state.key}: {state.message} (since {utc_minute(state.since)}, "
        f"{duration(now - state.since)})"
        for state in states
    ]


def _item(notice: Notice, now: datetime) -> Item:
    if notice.kind == "resolved":
        was = notice.previous_status.value if notice.previous_status else "bad"
        note = f"was {was} for {duration(now - notice.since)}"
        return Item(ICONS[Status.OK], "resolved", notice.key, notice.message, note)
    if notice.kind == "worse":
        previous = notice.previous_status.value if notice.previous_status else "?"
        note = f"{previous} → {notice.status.value}, bad since {utc_minute(notice.since)}"
    elif notice.kind == "reminder":
        note = f"bad for {duration(now - notice.since)}, since {utc_minute(notice.since)}"
    else:
        note = ""
    return Item(ICONS[notice.status], notice.status.value, notice.key, notice.message, note)


def _blocks(values: dict[str, Any]) -> list[dict[str, Any]]:
    header = render("health/alert_header.txt.j2", **values).strip()
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(header, HEADER_LIMIT)}}
    ]
    if values["mention"]:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": values["mention"]}})
    for title, items in values["sections"].items():
        blocks.append(_section_block(title, items))
    footer = render("health/alert_footer.mrkdwn.j2", **values).strip()
    blocks.append(
        {"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(footer, SECTION_LIMIT)}]}
    )
    return blocks


def _section_block(title: str, items: list[Item]) -> dict[str, Any]:
    """One Slack section: as many whole items as fit in Slack's limit, then how many more."""
    lines = [
        _cut(
            render("health/alert_item.mrkdwn.j2", item=item, escape=slack_escape).strip(),
            ITEM_LIMIT,
        )
        for item in items
    ]
    budget = SECTION_LIMIT - len(title) - MORE_LINE_ROOM
    kept = sum(1 for used in accumulate(len(line) + 1 for line in lines) if used <= budget)
    text = render(
        "health/alert_section.mrkdwn.j2",
        title=title,
        lines=lines[:kept],
        more=len(lines) - kept,
    )
    return {"type": "section", "text": {"type": "mrkdwn", "text": text.strip()}}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
