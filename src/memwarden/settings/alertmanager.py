"""The `[alertmanager]` options: forwarding health alerts to Alertmanager, for fleets."""

from memwarden.settings.option import Option

DESCRIPTION = (
    "Health alerts sent to Prometheus Alertmanager, beside Slack or instead of it, for fleets of "
    "gateways (docs/fleet.md): every open check is re-sent each health run, each resolution once."
)
LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
# Labels memwarden sets itself on every alert: alertmanager.labels may not replace them.
OWN_LABELS = (
    "alertname",
    "check",
    "severity",
    "gateway",
    "instance",
    "agent",
    "session",
    "memwarden_job",
    "mount",
)

OPTIONS = [
    Option(
        "alertmanager.urls",
        "str_list",
        [],
        "Base URLs of Alertmanager (http://host:9093, without /api/v2/alerts). Several (the "
        "members of a cluster) each get the alerts; they are delivered when one accepts them. "
        "Empty: no Alertmanager.",
        example=["http://127.0.0.1:9093"],
        url_schemes=("http", "https"),
        api_path="/api/v2/alerts",
    ),
    Option(
        "alertmanager.timeout_seconds",
        "float",
        5.0,
        "Deadline of the whole call to one Alertmanager URL (connect, send, answer); the URLs "
        "are called at once.",
        minimum=0.1,
        maximum=120,
    ),
    Option(
        "alertmanager.resolve_timeout_minutes",
        "int",
        0,
        "How long Alertmanager keeps an open alert firing after memwarden's last send (its "
        "endsAt). memwarden re-sends open alerts every health run, so this must be longer than "
        "schedule.health_minutes; if memwarden stops, its alerts expire after it (the Prometheus "
        "dead-man rule then fires). 0: three health intervals.",
        minimum=0,
        maximum=24 * 60,
    ),
    Option(
        "alertmanager.labels",
        "str_map",
        {},
        'Extra labels on every alert, for routing and silences (e.g. { team = "ai-ops" }). They '
        "may not replace memwarden's own labels (" + ", ".join(OWN_LABELS) + ").",
        example={"env": "prod"},
        pattern=LABEL_NAME,
        reserved_names=OWN_LABELS,
    ),
    Option(
        "alertmanager.generator_url",
        "str",
        "",
        "URL put in every alert's generatorURL (this gateway's dashboard or runbook). Empty: none.",
        example="https://grafana.example.com/d/memwarden-gateway",
    ),
]
