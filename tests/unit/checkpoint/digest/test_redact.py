"""Redaction: every secret type the issue lists, masked with its typed placeholder."""

from __future__ import annotations

import pytest

from memwarden.checkpoint.digest.redact import Redactor, build_redactor
from memwarden.checkpoint.digest.secret_rules import LONG_WORD, Rule
from memwarden.process.errors import ConfigError
from support.secret_samples import RULES, SAMPLES, placements

# Realistic fakes: the shapes the providers issue, with made-up characters.
SECRETS = {
    "openai-key": "sk-proj-Zq8xVb3nLm5kJh7gFd2sAp9oIu4yTr6eWq1zXc0vBn8mLk3j",
    "anthropic-key": "sk-ant-api03-Xy7wV5uT3sR1qP9oN7mL5kJ3hG1fE9dC7bA5zY3xW1vU9tS7rQ5pO3nM1lK9jH7"
    "gF5eD3cB1aZ9yX7wV5uT3sR1qP9oN7mL5kJ3hG1-AbCdEfAA",
    "google-api-key": "AIzaSyD4k9X2m7Q1w8E5r3T6y0U9i2O5p8A1s4D",
    "google-oauth-token": "ya29.a0AfH6SMBx7Kq2Lm9Nn3Pp5Rr7Tt9Vv1Xx3Zz5Bb7Dd9",
    "github-token": "ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r",
    "gitlab-token": "glpat-xY9vW8uT7sR6qP5oN4mL",
    "slack-token": "xoxb-2048-4096-8192-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack-webhook": "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
    "stripe-key": "sk_live_51HqLyjWDarjtT1zdp7dcXyZaBcDeFgHiJkLmN",
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDa1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4aAAAAJg==\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.fixture
def redactor():
    return build_redactor()


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_redact_provider_secret_in_prose_becomes_typed_placeholder(redactor, kind):
    secret = SECRETS[kind]
    text = f"Here it is: {secret} — keep it safe."

    masked = redactor.redact(text)

    assert secret not in masked
    assert masked == f"Here it is: [REDACTED:{kind}] — keep it safe."
    assert redactor.take_counts() == {kind: 1}


def test_redact_assignment_keeps_name_and_masks_value_by_provider_type(redactor):
    masked = redactor.redact(f"export OPENAI_API_KEY={SECRETS['openai-key']}")

    assert masked == "export OPENAI_API_KEY=[REDACTED:openai-key]"


def test_redact_aws_secret_access_key_assignment_masks_only_the_value(redactor):
    masked = redactor.redact(f"aws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1")

    assert masked == "aws_secret_access_key = [REDACTED:aws-secret-key]\nregion = eu-west-1"
    assert redactor.take_counts() == {"aws-secret-key": 1}


def test_redact_private_key_block_masks_the_whole_block(redactor):
    masked = redactor.redact(f"key file:\n{PRIVATE_KEY}\nend of message")

    assert masked == "key file:\n[REDACTED:private-key]\nend of message"


def test_redact_private_key_without_end_line_masks_to_the_end(redactor):
    truncated = PRIVATE_KEY.rsplit("\n", 1)[0]

    masked = redactor.redact(f"partial:\n{truncated}")

    assert masked == "partial:\n[REDACTED:private-key]"


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        (
            "Authorization: Bearer abc123def456ghi789",
            "Authorization: Bearer [REDACTED:bearer-token]",
            "bearer-token",
        ),
        ("password=hunter22 ok", "password=[REDACTED:password] ok", "password"),
        ('{"db_password": "s3cr3t!"}', '{"db_password": "[REDACTED:password]"}', "password"),
        ("secret: kj3h4k5j6h", "secret: [REDACTED:secret]", "secret"),
        (
            "SLACK_SIGNING_SECRET='8f14e45fceea167a'",
            "SLACK_SIGNING_SECRET='[REDACTED:secret]'",
            "secret",
        ),
        ("token=abcdef123456", "token=[REDACTED:token]", "token"),
        ("GATEWAY_TOKEN: tk-998877665544", "GATEWAY_TOKEN: [REDACTED:token]", "token"),
        ("X-Api-Key: 0f9e8d7c6b5a", "X-Api-Key: [REDACTED:api-key]", "api-key"),
        (
            "postgres://app:s3cr3t-pass@db.internal:5432/app",
            "postgres://app:[REDACTED:url-credentials]@db.internal:5432/app",
            "url-credentials",
        ),
    ],
)
def test_redact_generic_secret_shapes_mask_the_value(redactor, text, expected, kind):
    assert redactor.redact(text) == expected
    assert redactor.take_counts() == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "The session used 5555 tokens; totalTokens: 5555 and max_tokens=4096.",
        "Open https://docs.openclaw.ai/gateway/hooks and http://127.0.0.1:18789/readyz please.",
        "Reset your password from the settings page; the secret is patience.",
        "Use the API key from the vault, not this one.",
        "task-list and disk-usage are fine, so is the sk- prefix alone.",
        "ghost gloves and xoxo hugs, AKIA is just four letters.",
    ],
)
def test_redact_ordinary_prose_is_left_alone(redactor, text):
    assert redactor.redact(text) == text
    assert redactor.take_counts() == {}


def test_redact_already_redacted_value_is_not_counted_again(redactor):
    once = redactor.redact(f"token={SECRETS['slack-token']}")
    redactor.take_counts()

    assert redactor.redact(once) == "token=[REDACTED:slack-token]"
    assert redactor.take_counts() == {}


def test_redact_counts_each_secret_by_type(redactor):
    text = (
        f"{SECRETS['github-token']} and {SECRETS['github-token'][:-1]}X, "
        f"password: pa55word, {SECRETS['jwt']}"
    )

    redactor.redact(text)

    assert redactor.take_counts() == {"github-token": 2, "jwt": 1, "password": 1}


def test_redact_text_whose_lowercase_changes_length_is_still_masked(redactor):
    text = "İstanbul: password=çok-gizli-şifre"

    assert redactor.redact(text) == "İstanbul: password=[REDACTED:password]"


def test_redact_extra_config_pattern_uses_its_name_and_secret_group():
    redactor = build_redactor(
        [
            {"name": "internal-token", "pattern": r"itk_[A-Za-z0-9]{24,}"},
            {"name": "pin", "pattern": r"(?i)pin code (?P<secret>\d{4,})"},
        ]
    )

    masked = redactor.redact("use itk_abcdefghijklmnopqrstuvwx1234, PIN code 82731")

    assert masked == "use [REDACTED:internal-token], PIN code [REDACTED:pin]"
    assert redactor.take_counts() == {"internal-token": 1, "pin": 1}


def test_build_redactor_invalid_extra_rule_raises_config_error():
    with pytest.raises(ConfigError) as raised:
        build_redactor([{"name": "broken", "pattern": "(unclosed"}])

    assert "checkpoint.redact_patterns: broken: invalid pattern" in str(raised.value)


def test_build_redactor_disabled_masks_nothing():
    redactor = build_redactor(enabled=False)

    assert redactor.redact(SECRETS["openai-key"]) == SECRETS["openai-key"]
    assert redactor.take_counts() == {}


# --- the sample catalogue (tests/support/secret_samples.py): every rule, every placement --------

PLACED = [
    pytest.param(sample, placement, text, id=f"{sample.name}-{placement}")
    for sample in SAMPLES
    for placement, text in placements(sample.snippet).items()
]


@pytest.mark.parametrize(("sample", "placement", "text"), PLACED)
def test_redact_sample_in_each_placement_is_masked_with_its_type(redactor, sample, placement, text):
    masked = redactor.redact(text)

    assert sample.secret not in masked
    for kind in sample.kinds:
        assert f"[REDACTED:{kind}]" in masked


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: f"{rule.kind}:{rule.source[:30]}")
def test_every_built_in_rule_masks_at_least_one_sample_by_itself(rule):
    before = [access_key_rule()] if rule.near else []
    alone = Redactor((*before, rule))

    masked = [
        sample.name for sample in SAMPLES if sample.secret not in alone.redact(sample.snippet)
    ]

    assert masked, f"no sample exercises {rule.kind} ({rule.source})"


@pytest.mark.parametrize(("sample", "placement", "text"), PLACED[::7])
def test_redact_masked_text_again_changes_nothing_and_counts_nothing(sample, placement, text):
    once = build_redactor().redact(text)
    again = build_redactor()

    assert again.redact(once) == once
    assert again.take_counts() == {}


def access_key_rule() -> Rule:
    return next(rule for rule in RULES if rule.kind == "aws-access-key")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Issue 14: the fine-grained GitHub token was never masked (the rule read `ghithub_pat_`).
        ("use github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPq"
         "RsTuVwXyZ01234", "use [REDACTED:github-token]"),
        # Issue 14: an empty user name (`redis://:pw@host`) left the password in place.
        ("REDIS_URL=redis://:s3cr3t-pw@cache:6379/0", "REDIS_URL=redis://:[REDACTED:url-credentials]@cache:6379/0"),
        ("postgres://app:p@ss@db/app", "postgres://app:[REDACTED:url-credentials]@db/app"),
        ("mysql -uroot -p'S3cret pw' db", "mysql -uroot -p'[REDACTED:password] pw' db"),
        ('{"password": "correct horse battery"}', '{"password": "[REDACTED:password]"}'),
        (r'{\"token\": \"tk/abc.def-123\"}', r'{\"token\": \"[REDACTED:token]\"}'),
        ("Authorization: Bearer short1", "Authorization: Bearer [REDACTED:auth-token]"),
    ],
)  # fmt: skip
def test_redact_shapes_of_issue_14(redactor, text, expected):
    assert redactor.redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e fixed it; AKIA is in the docs",
        "run 123e4567-e89b-12d3-a456-426614174000 and sha256:9f86d081884c7d659a2feaa0c55ad015",
        "authorization = request.headers.get('Authorization')",
        "Authorization: required for every endpoint",
        "The basic idea: mysql -u root -p prompts for the password.",
        "Open https://example.com:8080/path/file.txt and http://[::1]:3000/@scope/pkg",
        "Meeting at 12:30, room 101:Alpha, then 16:45.",
        "the sky is blue, the task-list is long and the skeleton-key is lost",
    ],
)
def test_redact_look_alikes_are_left_alone(redactor, text):
    assert redactor.redact(text) == text


def test_redact_commit_id_next_to_an_access_key_id_is_left_alone(redactor):
    text = "key id AKIAIOSFODNN7EXAMPLE, commit 3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e"

    masked = redactor.redact(text)

    assert (
        masked
        == "key id [REDACTED:aws-access-key], commit 3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e"
    )


def test_redact_aws_secret_key_far_from_its_access_key_id_is_left_alone(redactor):
    text = "AKIAIOSFODNN7EXAMPLE " + "x " * 200 + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    assert redactor.redact(text).endswith("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


def test_redact_same_text_twice_is_counted_once_until_counts_are_taken(redactor):
    text = f"token={SECRETS['slack-token']}"

    assert redactor.redact(text) == redactor.redact(text) == "token=[REDACTED:slack-token]"
    assert redactor.take_counts() == {"slack-token": 1}
    redactor.redact(text)
    assert redactor.take_counts() == {"slack-token": 1}


@pytest.mark.parametrize(
    "rule", [rule for rule in RULES if rule.word], ids=lambda rule: f"{rule.kind}:{rule.anchors[0]}"
)
def test_word_rule_matches_are_long_words_so_short_words_need_no_search(rule):
    texts = [param.values[2] for param in PLACED]
    matches = [match.group(0) for text in texts for match in rule.pattern.finditer(text)]

    assert matches
    assert all(len(match) >= LONG_WORD and not any(map(str.isspace, match)) for match in matches)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("'secret_key' => 'sk_abcdefghijklmnopqrstuvwxyz012'",
         "'secret_key' => '[REDACTED:api-key]'"),
        ("TWITTER_CONSUMER_KEY=xvz1evFS4wEEPTGEFPHBog", "TWITTER_CONSUMER_KEY=[REDACTED:api-key]"),
        ('token := "abc123def"', 'token := "[REDACTED:token]"'),
        ("password:\ntoken: abc123def", "password:\ntoken: [REDACTED:token]"),
    ],
)  # fmt: skip
def test_redact_named_values_after_each_separator_on_the_same_line(redactor, text, expected):
    assert redactor.redact(text) == expected
