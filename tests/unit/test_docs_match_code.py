"""The docs say what the code does, where a test can tell: documented defaults against the
schema, the layer numbers against the README's table, the event types against docs/events.md's
table, and every file a doc points at exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memwarden.jobs.events import EVENT_TYPES
from memwarden.settings import SECTIONS
from memwarden.settings.config import OPTIONS_BY_KEY

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted((REPO / "docs").glob("*.md"))
# Generated from the schema (and checked by its own test): it restates every default.
WRITTEN_BY_HAND = [REPO / "README.md", *(doc for doc in DOCS if doc.name != "configuration.md")]

# `option` (4), `option` (1 KB), `option` (default 5), `section.option` days (default 7),
# (`section.option`, default 8 ...)
DEFAULT_MENTION = re.compile(
    r"`(?P<key>[a-z_]+(?:\.[a-z_]+)?)`(?: days)? \((?:default )?(?P<value>\d[\d,.]*)"
    r"(?: ?(?P<unit>KB|MB|GB|s|%|min|h))?[ )]"
    r"|\(`(?P<key2>[a-z_]+\.[a-z_]+)`, default (?P<value2>\d[\d,.]*)"
)
SIZE_UNITS = {"KB": 1024, "MB": 1024**2, "GB": 1024**3}
OPTION_UNITS = {"_bytes": 1, "_kb": 1024, "_mb": 1024**2}


def documented_defaults() -> list[tuple[str, str, str, str | None]]:
    """Every (doc, option key, documented value, unit) that names a schema option."""
    found = []
    for doc in WRITTEN_BY_HAND:
        for match in DEFAULT_MENTION.finditer(doc.read_text(encoding="utf-8")):
            name = match["key"] or match["key2"]
            value = match["value"] or match["value2"]
            key = name if "." in name else f"{doc.stem}.{name}"
            if key in OPTIONS_BY_KEY:
                found.append((doc.name, key, value.rstrip(".,"), match["unit"]))
    return found


def test_documented_defaults_are_the_schema_defaults():
    mentions = documented_defaults()
    assert len(mentions) >= 25, "the pattern no longer finds the docs' defaults"
    wrong = []
    for doc, key, text, unit in mentions:
        default = OPTIONS_BY_KEY[key].default
        number = float(text.replace(",", ""))
        if unit in SIZE_UNITS:
            factor = next((f for suffix, f in OPTION_UNITS.items() if key.endswith(suffix)), None)
            assert factor is not None, f"{doc}: {key} documented in {unit}, a size it is not"
            same = number * SIZE_UNITS[unit] == default * factor
        else:
            same = number == float(default)
        if not same:
            wrong.append(f"{doc}: {key} documented as {text} {unit or ''}, default is {default}")
    assert wrong == []


def readme_layers() -> dict[str, int]:
    table = re.findall(r"^\| (\d) \| `memwarden (\w+)`", (REPO / "README.md").read_text(), re.M)
    return {job: int(number) for number, job in table}


def test_layer_numbers_everywhere_are_the_readme_s():
    layers = readme_layers()
    assert layers == {"rotate": 1, "checkpoint": 2, "index": 3, "health": 4}
    wrong = []
    for job, number in layers.items():
        page = (REPO / "docs" / f"{job}.md").read_text()
        if f"Layer {number} of memwarden" not in page:
            wrong.append(f"docs/{job}.md does not say Layer {number}")
        wrong += [
            f"docs/{job}.md says Layer {other}"
            for other in re.findall(r"\bLayer (\d)", page)
            if int(other) != number
        ]
    for section in SECTIONS:
        description = (REPO / "src/memwarden/settings" / f"{section}.py").read_text()
        for other in re.findall(r'"Layer (\d)', description):
            if layers.get(section) != int(other):
                wrong.append(f"settings/{section}.py says Layer {other}")
    demo = (REPO / "scripts" / "demo.py").read_text()
    for title, other in re.findall(r'banner\("\d+\. (\w+) \(layer (\d)\)', demo):
        if layers.get(title.lower()) != int(other):
            wrong.append(f"scripts/demo.py shows {title} as layer {other}")
    assert wrong == []


# Files of the gateway and of agents' workspaces that docs name: not memwarden's.
OUTSIDE_FILES = {
    "ACTIVE_CONTEXT.md",
    "AGENTS.md",
    "BOOTSTRAP.md",
    "DREAMS.md",
    "HEARTBEAT.md",
    "HOOK.md",
    "IDENTITY.md",
    "INDEX.md",
    "MEMORY.md",
    "SOUL.md",
    "TOOLS.md",
    "USER.md",
}
FILE_MENTION = re.compile(r"`([A-Za-z0-9_./-]+\.(?:py|md|j2|js|toml|json|sh|sql|plist))`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
BASES = (REPO, REPO / "src", REPO / "src" / "memwarden")


def repo_file_names() -> set[str]:
    skipped = {".git", ".venv", ".demo", "node_modules", "__pycache__"}
    return {
        path.name
        for path in REPO.rglob("*")
        if path.is_file() and not skipped & set(path.relative_to(REPO).parts)
    }


@pytest.mark.parametrize("doc", [REPO / "README.md", *DOCS], ids=lambda path: path.name)
def test_files_and_links_a_doc_points_at_exist(doc):
    text = doc.read_text(encoding="utf-8")
    missing = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        if not (doc.parent / target.split("#")[0]).exists():
            missing.append(f"link {target}")
    names = repo_file_names()
    for mention in FILE_MENTION.findall(text):
        parts = Path(mention).parts
        if len(parts) > 1:
            # A repository path: checked when it starts with a folder of the repository
            # (`memory/INDEX.md` and `plans/launch.md` are workspace examples).
            bases = [base for base in BASES if (base / parts[0]).is_dir()]
            if bases and not any((base / mention).exists() for base in bases):
                missing.append(mention)
        elif _unknown_document(mention, names):
            missing.append(mention)
    assert missing == []


def _unknown_document(name: str, repo_names: set[str]) -> bool:
    """A `NAME.md` neither in the repository nor one of the gateway's or workspaces' files."""
    is_document = name[0].isupper() and name.endswith(".md")
    return is_document and name not in repo_names and name not in OUTSIDE_FILES


def test_event_types_are_the_ones_docs_events_md_lists():
    types = (REPO / "docs" / "events.md").read_text(encoding="utf-8").split("## Types", 1)[1]
    rows = [line for line in types.split("\n\n", 2)[1].splitlines()[2:] if line.startswith("|")]
    listed = {name for row in rows for name in re.findall(r"`([a-z_.]+)`", row.split("|")[1])}
    assert listed == set(EVENT_TYPES)
