"""The destructive-rewrite rule: what counts as an entry, a section, a Candidate line; when a
rewrite of a root file is destructive, and where the rule errs (on purpose, documented)."""

from __future__ import annotations

from memwarden.history.guard import MIN_SECTIONS, assess, read_shape

SHARE, MINIMUM = 0.5, 10


def memory_md(entries: int, sections: int = 4, extra: str = "") -> str:
    """A MEMORY.md with `entries` list items spread over `sections` headings."""
    lines = ["# Memory", ""]
    per_section = -(-entries // sections)
    for number in range(entries):
        if number % per_section == 0:
            lines += ["", f"## Topic {number // per_section}", ""]
        lines.append(f"- fact {number}: the user said something worth keeping, number {number}")
    return "\n".join(lines) + "\n" + extra


def test_read_shape_counts_list_items_headings_tables_paragraphs_and_fences():
    text = "\n".join(
        [
            "# Memory",
            "",
            "Some prose that goes on",
            "over two lines.",
            "",
            "## Preferences",
            "- prefers tea",
            "  (green, no sugar)",
            "* [x] done item",
            "1. numbered item",
            "",
            "| key | value |",
            "|-----|-------|",
            "| editor | vim |",
            "",
            "```",
            "# not a heading inside code",
            "- not an item inside code",
            "```",
            "- Candidate: raw promoted line",
            "**Candidate:** another raw one",
        ]
    )
    shape = read_shape(text)
    assert [item.key for item in shape.sections] == ["memory", "preferences"]
    assert [item.key for item in shape.entries] == [
        "some prose that goes on over two lines.",
        "prefers tea (green, no sugar)",
        "done item",
        "numbered item",
        "key value",
        "editor vim",
        "``` # not a heading inside code - not an item inside code ```",
    ]
    assert shape.entries[1].line == "- prefers tea"
    assert shape.candidates == 2


def test_assess_rewrite_to_20_of_160_entries_with_candidates_is_destructive():
    old = memory_md(160)
    facts = [line for line in old.splitlines() if line.startswith("- fact")]
    new = "# Memory\n\n## Topic 0\n" + "\n".join(facts[:20]) + "\n"
    new += "".join(f"- Candidate: promoted thing {n}\n" for n in range(12))
    rewrite = assess(read_shape(old), read_shape(new), SHARE, MINIMUM)
    assert rewrite is not None
    assert (rewrite.entries_before, rewrite.entries_after, len(rewrite.dropped_entries)) == (
        160,
        20,
        140,
    )
    assert (rewrite.sections_before, len(rewrite.dropped_sections)) == (5, 3)
    assert rewrite.candidates_added == 12
    assert rewrite.summary() == (
        "lost 140 of 160 entries (88 %), lost 3 of 5 sections, gained 12 raw Candidate: line(s)"
    )
    assert rewrite.first_dropped() == facts[20:23]


def test_assess_appending_and_reordering_entries_is_not_destructive():
    old = memory_md(40)
    lines = old.splitlines()
    shuffled = "\n".join(lines[:3] + list(reversed(lines[3:]))) + "\n- a new fact\n"
    assert assess(read_shape(old), read_shape(shuffled), SHARE, MINIMUM) is None


def test_assess_dropping_exactly_half_is_not_more_than_half():
    old = memory_md(20, sections=1)
    lines = old.splitlines()
    half = "\n".join(lines[:-10]) + "\n"
    assert assess(read_shape(old), read_shape(half), SHARE, MINIMUM) is None
    assert assess(read_shape(old), read_shape("\n".join(lines[:-11])), SHARE, MINIMUM)


def test_assess_small_file_is_judged_only_on_candidate_lines():
    old, new = memory_md(5, sections=1), "# Memory\n- one left\n"
    assert assess(read_shape(old), read_shape(new), SHARE, MINIMUM) is None
    gained = new + "- Candidate: raw\n"
    assert assess(read_shape(old), read_shape(gained), SHARE, MINIMUM).candidates_added == 1


def test_assess_losing_most_sections_is_destructive_even_with_few_entries():
    old = "\n".join(f"## Part {n}\nprose of part {n}\n" for n in range(MIN_SECTIONS + 1))
    new = "## Part 0\nprose of part 0\n"
    rewrite = assess(read_shape(old), read_shape(new), SHARE, MINIMUM)
    assert rewrite is not None and len(rewrite.dropped_sections) == MIN_SECTIONS
    assert rewrite.dropped_sections[0] == "## Part 1"


def test_assess_deleted_file_is_destructive_when_it_was_judged():
    rewrite = assess(read_shape(memory_md(12)), None, SHARE, MINIMUM)
    assert rewrite is not None and rewrite.deleted and rewrite.entries_after == 0
    assert rewrite.summary().startswith("was deleted, lost 12 of 12 entries (100 %)")


def test_assess_where_the_rule_errs_reworded_entries_count_as_dropped():
    old = memory_md(12, sections=1)
    reworded = old.replace("the user said something worth keeping", "noted")
    assert assess(read_shape(old), read_shape(reworded), SHARE, MINIMUM) is not None


def test_assess_where_the_rule_errs_whitespace_case_and_markers_do_not_count():
    old = memory_md(12, sections=1)
    restyled = old.replace("- fact", "*   FACT")
    assert assess(read_shape(old), read_shape(restyled), SHARE, MINIMUM) is None


def test_assess_duplicate_entries_are_counted_as_many_times_as_they_appear():
    old = "- same\n" * 12
    assert assess(read_shape(old), read_shape("- same\n"), SHARE, MINIMUM) is not None
