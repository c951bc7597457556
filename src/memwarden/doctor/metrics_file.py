"""Can Prometheus read memwarden's metrics? The textfile's place and mode against who reads it."""

from __future__ import annotations

from memwarden.doctor.finding import Finding

FLEET_DOC = "docs/fleet.md"


def check_metrics_file(
    path: str, mode: str, folder_owned_by_me: bool | None, exporter_is_me: bool | None = None
) -> Finding:
    """Given `health.metrics_file` (empty: none), `health.metrics_file_mode`, whether the
    file's folder belongs to memwarden's user (None: the folder does not exist) and whether a
    node_exporter running on this host runs as memwarden's user (None: none seen), say whether
    node_exporter's textfile collector can read it.

    The default 0600 keeps agent ids and session keys private; node_exporter usually runs as
    its own user and owns its textfile folder, so it then cannot read the file.
    """
    if not path:
        return Finding(
            "metrics.file",
            "info",
            "no metrics textfile: Prometheus and Grafana see nothing of memwarden (and no "
            f"dead-man alert watches it); see {FLEET_DOC}",
            'health.metrics_file = "/var/lib/node_exporter/textfile/memwarden.prom"',
        )
    if folder_owned_by_me is None:
        return Finding(
            "metrics.file",
            "warning",
            f"{path}: its folder does not exist, so health writes no metrics",
            f"create the textfile collector's folder, or fix health.metrics_file ({FLEET_DOC})",
        )
    if mode == "0600" and exporter_is_me is False:
        return Finding(
            "metrics.file",
            "warning",
            f"{path} is written 0600 (health.metrics_file_mode) and node_exporter runs here as "
            "another user: it cannot read it",
            'health.metrics_file_mode = "0644" (or "0640" with a group node_exporter is in)',
        )
    if mode == "0600" and not folder_owned_by_me:
        return Finding(
            "metrics.file",
            "warning",
            f"{path} is written 0600 (health.metrics_file_mode) into a folder of another user: "
            "a node_exporter running as that user cannot read it",
            'health.metrics_file_mode = "0644" (or "0640" with a group node_exporter is in)',
        )
    if mode == "0600" and exporter_is_me is None:
        return Finding(
            "metrics.file",
            "info",
            f"metrics written to {path}, readable by memwarden's user only (0600); no "
            "node_exporter runs on this host as far as memwarden can see: one running as "
            "another user (the packaged one runs as its own) could not read it",
            'health.metrics_file_mode = "0644" if node_exporter runs as another user',
        )
    who = "only memwarden's user" if mode == "0600" else f"mode {mode}"
    return Finding("metrics.file", "ok", f"metrics written to {path} ({who} can read it)")
