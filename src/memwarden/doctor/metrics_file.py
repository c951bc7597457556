"""Can Prometheus read memwarden's metrics? The textfile's place and mode against who reads it."""

from __future__ import annotations

from pathlib import PurePath

from memwarden.doctor.finding import Finding

FLEET_DOC = "docs/fleet.md"


def check_metrics_file(
    path: str,
    mode: str,
    folder_owned_by_me: bool | None,
    exporter_is_me: bool | None = None,
    file_group: str = "",
    exporter_in_group: bool | None = None,
) -> Finding:
    """Given `health.metrics_file` (empty: none), `health.metrics_file_mode`, whether the
    file's folder belongs to memwarden's user (None: the folder does not exist), whether a
    node_exporter running on this host runs as memwarden's user (None: none seen), the group
    the file takes (its name and why) and whether that node_exporter is in it, say whether
    node_exporter's textfile collector can read it.

    The default 0600 keeps agent ids and session keys private; node_exporter usually runs as
    its own user and owns its textfile folder, so it then cannot read the file. 0640 is read
    through the file's group: the folder's with its setgid bit, else memwarden's own.
    """
    if path and not path.endswith(".prom"):
        return Finding(
            "metrics.file",
            "warning",
            f"{path}: node_exporter's textfile collector reads only *.prom files: it ignores "
            "this one",
            f'health.metrics_file = "{PurePath(path).with_suffix(".prom")}"',
        )
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
    folder = PurePath(path).parent
    if mode == "0640" and exporter_is_me is False and exporter_in_group is False:
        return Finding(
            "metrics.file",
            "warning",
            f"{path} is written 0640 with {file_group}, and node_exporter runs here as another "
            "user outside that group: it cannot read it",
            "give the folder node_exporter's group with the setgid bit (sudo chgrp prometheus "
            f"{folder} && sudo chmod 2775 {folder}), or "
            f'health.metrics_file_mode = "0644" ({FLEET_DOC})',
        )
    if mode == "0640" and exporter_is_me is None:
        return Finding(
            "metrics.file",
            "info",
            f"metrics written to {path}, readable by memwarden's user and {file_group}; no "
            "node_exporter runs on this host as far as memwarden can see: one running as "
            "another user must be in that group",
            f"give the folder node_exporter's group with the setgid bit ({FLEET_DOC})",
        )
    who = "only memwarden's user" if mode == "0600" else f"mode {mode}"
    return Finding("metrics.file", "ok", f"metrics written to {path} ({who} can read it)")
