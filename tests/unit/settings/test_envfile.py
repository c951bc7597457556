"""The secrets file's grammar: systemd's EnvironmentFile= rules, and the lines it refuses."""

from __future__ import annotations

import pytest

from memwarden.settings.envfile import parse_env_text


def values(text: str) -> dict[str, str]:
    parsed = parse_env_text(text)
    assert parsed.problems == [], parsed.problems
    return parsed.values


def problems(text: str) -> list[tuple[int, str]]:
    return [(problem.line, problem.message) for problem in parse_env_text(text).problems]


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("A=plain", "plain"),
        ("A=  padded  \t", "padded"),
        ("A = spaced name", "spaced name"),  # whitespace around `=` and inside the value
        ("A=", ""),
        ("A=x=y==", "x=y=="),
        ('A="double quoted"', "double quoted"),
        ("A='single quoted'", "single quoted"),
        ("A=  'kept  inner  '  ", "kept  inner  "),
        ('A="a\\"b\\\\c\\$d\\`e"', 'a"b\\c$d`e'),
        ('A="keeps \\n and \\x"', "keeps \\n and \\x"),  # other escapes keep their backslash
        ("A='no \\\\ escapes'", "no \\\\ escapes"),
        ("A=bare\\ escape\\\\s", "bare escape\\s"),
        ("A=\\ leading", " leading"),
        ("A=trailing\\ ", "trailing "),
        ('A="a" \'b\' "c"', "abc"),  # quoted parts join up
        ('A="a"b', "ab"),
        ('A=a"b c"d', 'a"b c"d'),  # quotes inside bare text are plain characters
        ("A=#not-a-comment", "#not-a-comment"),
        ('A="x"#y', "x#y"),
        ('A="C0123 # ops channel"', "C0123 # ops channel"),
    ],
)
def test_value_follows_systemd_environmentfile_rules(line, value):
    assert values(line + "\n") == {"A": value}


def test_dollar_and_backticks_are_never_expanded():
    text = "TOKEN=xoxb-a$b${HOME}`id`\nQUOTED=\"p$ss\"\nSINGLE='$x'\n"
    assert values(text) == {"TOKEN": "xoxb-a$b${HOME}`id`", "QUOTED": "p$ss", "SINGLE": "$x"}


def test_comments_blank_lines_and_the_last_assignment_wins():
    text = "# a comment\n\n; another\n   # indented\nA=1\nB=2\nA=3\n"
    assert values(text) == {"A": "3", "B": "2"}


def test_continued_lines_and_multi_line_quoted_values():
    text = 'A=one\\\ntwo\nB="first\nsecond"\nC=\'x\ny\'\nD="joined\\\nhere"\nE=after\n'
    assert values(text) == {
        "A": "onetwo",
        "B": "first\nsecond",
        "C": "x\ny",
        "D": "joinedhere",
        "E": "after",
    }


def test_crlf_lines_and_a_last_line_without_newline():
    assert values('A=1\r\nB="two"\r\nC=3') == {"A": "1", "B": "two", "C": "3"}


@pytest.mark.parametrize(
    "line",
    [
        'MEMWARDEN_SLACK_CHANNEL="C0123" # ops channel',
        "MEMWARDEN_SLACK_CHANNEL=C0123 # ops channel",
        "MEMWARDEN_SLACK_CHANNEL= # nothing yet",
        "MEMWARDEN_SLACK_CHANNEL='C0123'\t# ops channel",
    ],
)
def test_hash_after_a_value_is_refused_not_guessed(line):
    parsed = parse_env_text(f"# secrets\n{line}\nOTHER=ok\n")
    assert parsed.values == {"OTHER": "ok"}  # the line defines nothing; the next one is read
    ((number, message),) = [(p.line, p.message) for p in parsed.problems]
    assert number == 2
    assert "not a comment" in message and "line of its own" in message


def test_line_without_equals_is_a_problem_that_never_shows_the_line():
    assert problems("A=1\nxoxb-pasted-token\n") == [
        (2, "expected NAME=VALUE: this line has no `=`")
    ]


def test_export_prefix_is_refused_with_the_fix():
    assert problems("export MEMWARDEN_SLACK_BOT_TOKEN=xoxb-1\n") == [
        (
            1,
            "`export MEMWARDEN_SLACK_BOT_TOKEN=`: write `MEMWARDEN_SLACK_BOT_TOKEN=` "
            "(this file is not a shell script)",
        )
    ]


@pytest.mark.parametrize("name", ["1ABC", "MY-TOKEN", "A B", "ÄB"])
def test_invalid_names_are_refused(name):
    ((number, message),) = problems(f"OK=1\n{name}=value\n")
    assert number == 2
    assert "not a variable name" in message
    assert "value" not in message.split("(")[0].replace("variable", "")


def test_unterminated_quote_names_the_line_it_opened_on():
    parsed = parse_env_text('A=1\nB="never closed\nC=3\n')
    assert parsed.values == {"A": "1"}
    assert [(p.line, p.message) for p in parsed.problems] == [
        (2, 'the " opened on this line is never closed')
    ]


def test_problem_line_numbers_count_continued_lines():
    text = 'A="x\ny"\nB=1\\\n2\nC="v" # c\n'
    assert [line for line, _ in problems(text)] == [5]


def test_a_byte_order_mark_is_named_as_such():
    parsed = parse_env_text("\ufeffMEMWARDEN_SLACK_BOT_TOKEN=xoxb-1\n")
    (problem,) = parsed.problems
    assert problem.line == 1
    assert "byte-order mark" in problem.message
    assert parsed.values == {}
