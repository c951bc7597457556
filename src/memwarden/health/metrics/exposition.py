"""The Prometheus text format: the families rendered, and the file replaced atomically."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from memwarden.fs.files import fsync_dir, remove_stale_temp_files, replace_or_remove, write_temp
from memwarden.fs.templating import render
from memwarden.health.metrics.families import Family, MetricSources
from memwarden.process.errors import MemwardenError, UnsafePathError

log = logging.getLogger("memwarden.health")


def render_metrics(families: Sequence[Family], sources: MetricSources) -> tuple[str, list[str]]:
    """Given the families and their sources, return the textfile's content and one problem line
    per family that could not be collected (it is left out; the others are written).

    The template gets each family with its samples: (label set as text, value as text)."""
    rendered, problems = [], []
    for family in families:
        try:
            samples = [
                (format_labels({"gateway": sources.gateway, **labels}), format_value(value))
                for labels, value in family.collect(sources)
            ]
        except MemwardenError as error:
            problems.append(f"metrics: {family.name} left out: {error.message}")
            continue
        except Exception as error:  # one family never stops the file
            log.debug("metric family %s failed", family.name, exc_info=True)
            problems.append(f"metrics: {family.name} left out: {type(error).__name__}: {error}")
            continue
        rendered.append((family, samples))
    return render("health/metrics.prom.j2", families=rendered), problems


def check_metrics_target(path: Path) -> None:
    """Raise MemwardenError if health could not write the textfile at `path`: its folder does
    not exist (memwarden never creates it: a mistyped path would hide the metrics for good),
    or the path is a symlink (memwarden does not write through links)."""
    if path.is_symlink():
        raise UnsafePathError(
            f"health.metrics_file: {path}: is a symlink; memwarden does not write through "
            "links: point health.metrics_file at the file itself"
        )
    if not path.parent.is_dir():
        raise _missing_folder(path)


def write_metrics(path: Path, text: str, mode: int) -> None:
    """Replace the textfile at `path` with `text`, atomically and already carrying `mode`.

    node_exporter may read it at any moment: the content is written to a temp file beside it,
    given its mode, then renamed over it, so a reader never sees a partial file or one it may
    not read. Raise MemwardenError as check_metrics_target says, OSError if the file cannot be
    written; the folder is never created.
    """
    check_metrics_target(path)
    remove_stale_temp_files(path.parent, of=lambda target: target == path.name)
    try:
        temporary = write_temp(path, text.encode("utf-8"), mode=mode)
    except FileNotFoundError:  # the folder went away since the check
        raise _missing_folder(path) from None
    try:
        check_metrics_target(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    replace_or_remove(temporary, path)
    fsync_dir(path.parent)


def _missing_folder(path: Path) -> MemwardenError:
    return MemwardenError(
        f"health.metrics_file: {path}: folder {path.parent} does not exist; create it first "
        "(node_exporter's textfile folder), or fix health.metrics_file"
    )


def format_labels(labels: Mapping[str, str]) -> str:
    """Given labels, return them as a label set: `{a="x",b="y"}` (empty for none)."""
    inner = ",".join(f'{name}="{escape_label(str(value))}"' for name, value in labels.items())
    return "{" + inner + "}" if labels else ""


def format_value(value: float) -> str:
    """Given a number, return it as the text format writes it (integers without a point)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    return repr(round(float(value), 6))


def escape_label(value: str) -> str:
    """Given a label value, return it escaped for the Prometheus text format."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
