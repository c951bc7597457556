"""`--help` that teaches: every command ends with real examples and says where the docs are."""

from __future__ import annotations

import shlex

import pytest

from memwarden.cli import build_parser
from memwarden.fs.resources import docs_dir
from memwarden.jobs import JOBS
from support.cli import run_cli


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: spec.name)
def test_every_command_help_ends_with_examples_and_the_docs_folder(capsys, spec):
    with pytest.raises(SystemExit):
        run_cli(capsys, spec.name, "--help")
    out = capsys.readouterr().out
    assert 1 <= len(spec.examples) <= 3
    examples = out[out.index("\nexamples:\n") :]
    for example in spec.examples:
        assert f"\n  {example}\n" in examples
    assert out.rstrip().endswith(f"docs: {docs_dir()}")


@pytest.mark.parametrize(
    ("spec", "example"),
    [(spec, example) for spec in JOBS for example in spec.examples],
    ids=lambda value: getattr(value, "name", None) or value.split("#")[0].strip(),
)
def test_every_example_is_accepted_by_the_parser(spec, example):
    words = shlex.split(example.split(" > ")[0].split(" | ")[0], comments=True)
    assert words[0] == "memwarden"
    parser, chosen = build_parser(words[1:])
    assert chosen is spec
    parser.parse_args(words[1:])


def test_the_docs_folder_named_in_help_holds_the_documentation():
    assert (docs_dir() / "install.md").is_file()
    assert (docs_dir() / "operations.md").is_file()


def verbs_of(spec) -> list[tuple[str, object]]:
    """The sub-commands (verbs, targets) of a command, with their parsers."""
    import argparse

    parser, _ = build_parser([spec.name])
    command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = command.choices[spec.name]
    actions = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices.items()) if actions else []


@pytest.mark.parametrize(
    ("spec", "verb"),
    [(spec, verb) for spec in JOBS for verb, _ in verbs_of(spec)],
    ids=lambda value: getattr(value, "name", value),
)
def test_every_sub_command_help_ends_with_its_examples_and_the_docs_folder(capsys, spec, verb):
    with pytest.raises(SystemExit):
        run_cli(capsys, spec.name, verb, "--help")
    out = capsys.readouterr().out
    assert out.rstrip().endswith(f"docs: {docs_dir()}")
    for example in spec.examples:
        if f"{example} ".startswith(f"memwarden {spec.name} {verb} "):
            assert f"\n  {example}\n" in out
