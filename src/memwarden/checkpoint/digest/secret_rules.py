"""The secret shapes memwarden masks, as a table of rules (applied by `redact`).

Provider tokens come first: their prefixes are distinctive, so they are masked wherever they
stand (mid-sentence, after `=`, in a URL, in JSON, in a path) and named by provider. Then come
the generic shapes, where a name says "secret" and the value follows (`password: …`,
`Authorization: Token …`, `mysql -p…`, `scheme://user:<password>@host`); only the value goes.

Every built-in rule is *anchored*: its matches start at (or `lead` characters before) one of
its literal `anchors`, found with `str.find` (in the lower-cased text for `folded` rules), and
the regular expression is only tried there. A text without any anchor costs one `str.find` per
anchor. The expressions are written so that one try costs at most the length of the run it
looks at: no quantified group can match the same characters in two ways, quantifiers over
open-ended runs stop at characters the run cannot hold, and every lazy or look-ahead scan and
every run that may be followed by a failing test is bounded (`{0,20}`, `{0,200}`). A try that
fails never scans past the anchors after it, so a text costs time linear in its length whatever
it holds (`tests/unit/checkpoint/digest/test_redact_speed.py` scans megabytes built to defeat each
rule). A rule with `near` is tried only within `NEAR_DISTANCE` characters of that literal (an
AWS secret key next to its masked access key id).

A pattern from `checkpoint.redact_patterns` is the operator's code: one with nested repetition
(`(a|aa)+$`) can backtrack for hours on an ordinary text. These patterns are compiled by the
`regex` module, whose matching stops after `seconds` of CPU time and raises (`TimedPattern`);
the error names the setting and the pattern. `regex` is imported only when an operator's
pattern is compiled.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from memwarden.process.errors import MemwardenError

OPERATOR_PATTERN_SECONDS = 1.0
"""CPU time one operator pattern may spend on one text."""


class PatternError(ValueError):
    """An operator's pattern does not compile."""


class PatternTimeout(MemwardenError):
    """An operator's pattern ran past its time limit on one text."""


class TimedPattern:
    """A compiled operator pattern whose `sub` stops after `seconds` (an operator's rule is
    applied to a text whole: redact scans it, having no anchors)."""

    def __init__(self, name: str, source: str, seconds: float = OPERATOR_PATTERN_SECONDS) -> None:
        """Raise PatternError if `source` does not compile."""
        import regex

        self.name = name
        self.source = source
        self.seconds = seconds
        try:
            self._compiled = regex.compile(source)
        except regex.error as error:
            raise PatternError(str(error)) from None

    def sub(self, replacement: Callable[[Any], str], text: str) -> str:
        try:
            return self._compiled.sub(replacement, text, timeout=self.seconds)
        except TimeoutError as error:
            raise PatternTimeout(
                f"checkpoint.redact_patterns: {self.name}: pattern {self.source!r} ran longer "
                f"than {self.seconds:g} s on one text and was stopped (nested repetition such "
                "as (a|aa)+ backtracks without end): rewrite it or remove it"
            ) from error


NEAR_DISTANCE = 256
# Every match of a `word` rule is one run of at least this many characters without a space.
LONG_WORD = 10
PLACEHOLDER = "[REDACTED:{}]"
_NOT_REDACTED = r"(?!\[REDACTED:)"
# Not glued to a word: `task-list` never starts an `sk-` key.
_EDGE = r"(?<![A-Za-z0-9_-])"
# A name's separator before its value, on the same line: `=`, `:`, `:=`, `=>`, quoted or not
# (`"token": "`, `token = '`, `'token' => '`), also with JSON-escaped quotes (`\"token\": \"…\"`
# in a tool call's arguments).
_QUOTE = r"(?:\\?[\"'])?"
_VALUE = _QUOTE + r"[ \t]*(?:=>|:=|[:=])[ \t]*" + _QUOTE + _NOT_REDACTED


def _value(minimum: int) -> str:
    """Return the `secret` group of a named value: a quoted value whole (spaces included, up to
    256 characters, a JSON-escaped closing quote too), else a run up to a space, quote, `,`, `;`
    or backslash, of at least `minimum` characters."""
    quoted = "".join(
        rf"(?<={quote})(?:[^{quote}\\\n]|\\(?!{quote})){{{minimum},256}}(?=\\?{quote})|"
        for quote in ('"', "'")
    )
    return rf"(?P<secret>{quoted}[^\s\"',;\\]{{{minimum},}})"


@dataclass(frozen=True)
class Rule:
    """One secret shape: its placeholder type and pattern, and where its matches can start.

    `anchors`: literal strings a match starts with (`lead` characters after its start), looked
    up with `str.find`, in the lower-cased text when `folded`. `word`: every match is one word
    (no whitespace) of LONG_WORD characters or more, so a text whose long words hold no anchor
    is passed over without searching it whole. `near`: a literal the rule only looks around. A
    rule with neither anchors nor `near` (an operator's `redact_patterns` rule) is scanned as a
    whole, with a time limit (`operator`: see `TimedPattern`). The pattern is compiled when first
    used: a run with nothing to write never pays.
    """

    kind: str
    source: str
    anchors: tuple[str, ...] = ()
    folded: bool = False
    lead: int = 0
    near: str = ""
    word: bool = False
    operator: bool = False

    @cached_property
    def pattern(self) -> re.Pattern[str] | TimedPattern:
        return TimedPattern(self.kind, self.source) if self.operator else re.compile(self.source)


def _token(kind: str, pattern: str, *anchors: str, edge: bool = True) -> Rule:
    """A case-sensitive token, one word, that starts with one of `anchors` (after `_EDGE` when
    `edge`)."""
    return Rule(kind, (_EDGE if edge else "") + pattern, anchors, word=True)


def _named(kind: str, pattern: str, *anchors: str) -> Rule:
    """A shape found by lower-case `anchors` (its name), any case."""
    return Rule(kind, pattern, anchors, folded=True)


# `key` preceded by api / access / private / … joined by `_`, `-` or nothing, any case.
_KEY_PREFIXES = "|".join(
    f"(?<=(?i:{word}){joint})"
    for word in (
        *("api", "access", "private", "priv", "secret", "client", "auth", "signing"),
        *("encryption", "master", "service", "account", "db", "database", "consumer", "license"),
        *("app", "shared"),
    )
    for joint in ("_", "-", "")
)
_HEADER = r"(?i:authorization)" + _QUOTE + r"[ \t]*[:=][ \t]*" + _QUOTE
_HEADER_SCHEMES = (
    r"(?i:token|bearer|basic|bot|apikey|api-key|key|sso-key|ssws|oauth|splunk|geniekey)"
)
_BASE64_40 = r"[A-Za-z0-9/+]"

PROVIDER_RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
        ("-----BEGIN ",),
    ),
    # A key whose BEGIN line is gone: the 2026.9 gateway writes `*** RSA PRIVATE KEY-----\n…`
    # into transcripts, masking only `-----BEGIN` (seen in JSON-escaped text, `\\n` once or twice).
    Rule(
        "private-key",
        r"PRIVATE KEY(?: BLOCK)?-----(?=(?:\s|\\+[nr]){0,8}[A-Za-z0-9+/]{16})"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)",
        ("PRIVATE KEY",),
    ),
    # AI model providers (the keys an agent's operator is most likely to paste).
    _token("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _token("openrouter-key", r"sk-or-[A-Za-z0-9_-]{20,}", "sk-or-"),
    _token("openai-key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", "sk-"),
    _token("groq-key", r"gsk_[A-Za-z0-9]{30,}", "gsk_"),
    _token("xai-key", r"xai-[A-Za-z0-9]{30,}", "xai-"),
    _token("perplexity-key", r"pplx-[A-Za-z0-9]{30,}", "pplx-"),
    _token("replicate-token", r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _token("huggingface-token", r"(?:hf_|api_org_)[A-Za-z0-9]{30,}", "hf_", "api_org_"),
    _token("langsmith-key", r"lsv2_(?:pt|sk)_[A-Za-z0-9_]{30,}", "lsv2_"),
    _token("tavily-key", r"tvly-[A-Za-z0-9-]{20,}", "tvly-"),
    # Google, Microsoft, AWS, DigitalOcean and other clouds.
    _token("google-api-key", r"AIza[0-9A-Za-z_-]{35,}", "AIza"),
    _token("google-oauth-token", r"(?:ya29\.|1//0)[0-9A-Za-z_-]{20,}", "ya29.", "1//0"),
    _token("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{20,}", "GOCSPX-"),
    Rule(
        "azure-client-secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        ("Q~",),
        lead=4,
        word=True,
    ),
    _named(
        "azure-storage-key",
        r"(?i:accountkey|sharedaccesskey)" + _VALUE + r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "accountkey",
        "sharedaccesskey",
    ),
    Rule(
        "azure-sas-signature",
        r"sig=(?<=[?&;]sig=)(?P<secret>[A-Za-z0-9%+/=]{20,})",
        ("sig=",),
        word=True,
    ),
    _token(
        "aws-access-key",
        # Also as a gateway shortens it in its transcripts (`AKIAZQ…2ZVO`): the secret key near
        # it is then still found.
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)(?:[A-Z0-9]{16}|[A-Z0-9]{2}…[A-Z0-9]{4})"
        r"(?![A-Za-z0-9])",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
        "A3T",
    ),
    _named(
        "aws-secret-key",
        # The name may be shortened by the gateway (`aws_se…_key`).
        r"(?i:aws[\w.-]{0,20}(?:secret|sk|…)[\w.-]{0,20})"
        + _VALUE
        + rf"(?P<secret>{_BASE64_40}{{40}})(?![A-Za-z0-9+])",
        "aws",
    ),
    # A 40-character secret key near its access key id (masked just above), with no name: both
    # cases of letters, so a 40-hex commit id is left alone. A `/` may follow (a path).
    Rule(
        "aws-secret-key",
        r"(?<![A-Za-z0-9+=])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])"
        rf"{_BASE64_40}{{40}}(?![A-Za-z0-9+=])",
        near=PLACEHOLDER.format("aws-access-key"),
    ),
    _token(
        "digitalocean-token",
        r"do[opr]_v1_[A-Za-z0-9]{32,}",
        "dop_v1_",
        "doo_v1_",
        "dor_v1_",
        edge=False,
    ),
    _token("databricks-token", r"dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", "dapi"),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{20,}", "hvs.", "hvb.", "hvr."),
    _token("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{30,}", "dp."),
    _token("pulumi-token", r"pul-[a-f0-9]{40}(?![A-Za-z0-9])", "pul-"),
    _token("heroku-key", r"HRKU-[A-Za-z0-9_-]{40,}", "HRKU-"),
    _token("flyio-token", r"f(?:o1_|m1[ar]_|m2_)[A-Za-z0-9+/=_-]{40,}", "fo1_", "fm1", "fm2_"),
    _token("supabase-key", r"(?:sbp_|sb_secret_)[A-Za-z0-9_-]{30,}", "sbp_", "sb_secret_"),
    _token("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{30,}", "pscale_"),
    # Code hosting, package registries, CI.
    _token("github-token", r"gh[pousr]_[A-Za-z0-9]{30,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _token("github-token", r"github_pat_[A-Za-z0-9_]{30,}", "github_pat_", edge=False),
    _token(
        "gitlab-token",
        r"gl(?:pat|dt|rt|ptt|ft|cbt|imt|agent|oas|soat|ffct)-[A-Za-z0-9_.-]{20,}",
        "gl",
    ),
    _token("gitlab-token", r"GR1348941[A-Za-z0-9_-]{20,}", "GR1348941", edge=False),
    _token("npm-token", r"npm_[A-Za-z0-9]{36,}", "npm_"),
    _token("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-AgE", edge=False),
    _token("rubygems-key", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    _token("docker-token", r"dckr_pat_[A-Za-z0-9_-]{20,}", "dckr_pat_", edge=False),
    _token("atlassian-token", r"ATATT[A-Za-z0-9_=-]{50,}", "ATATT"),
    _token("linear-key", r"lin_api_[A-Za-z0-9]{40,}", "lin_api_"),
    _token("notion-token", r"ntn_[A-Za-z0-9]{40,}", "ntn_"),
    _token("postman-key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-"),
    _token("sentry-token", r"sntry[su]_[A-Za-z0-9+/=_]{40,}", "sntry"),
    _token("grafana-token", r"gl(?:c|sa)_[A-Za-z0-9_+/=]{32,}", "glc_", "glsa_"),
    _token("newrelic-key", r"NR(?:AK|II|JS)-[A-Za-z0-9-]{19,}", "NRAK-", "NRII-", "NRJS-"),
    _token("onepassword-token", r"ops_eyJ[A-Za-z0-9+/=_-]{50,}", "ops_eyJ"),
    _token("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}", "AGE-SECRET-KEY-1", edge=False),
    # Messaging and payments.
    _token("slack-token", r"xox(?:[abposre]|e\.xox[bp])-[A-Za-z0-9-]{10,}", "xox"),
    _token("slack-token", r"xapp-[0-9]-[A-Za-z0-9-]{10,}", "xapp-"),
    _token(
        "slack-webhook",
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]+",
        "https://hooks.slack.com/",
        "http://hooks.slack.com/",
        "hooks.slack.com/",
        edge=False,
    ),
    _token(
        "discord-webhook",
        r"(?:https?://)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
        "https://discord",
        "discord.com/api/webhooks/",
        "discordapp.com/api/webhooks/",
        edge=False,
    ),
    # A bot token (the secret after the bot's public numeric id).
    Rule(
        "telegram-bot-token",
        r":(?<=[0-9]{5}:)(?P<secret>A[A-Za-z0-9_-]{32,})",
        (":A",),
        word=True,
    ),
    _token(
        "teams-webhook",
        r"webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,}",
        "webhook.office.com/webhookb2/",
        edge=False,
    ),
    _token("sendgrid-key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "SG."),
    _token("twilio-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", "SK"),
    _token("stripe-key", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}", "sk_", "rk_"),
    _token("stripe-key", r"whsec_[A-Za-z0-9+/=]{24,}", "whsec_"),
    _token("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}", "shp"),
    _token("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "eyJ"),
    # The other distinctive shapes of gitleaks' catalogue (docs/checkpoint.md#secrets).
    _token("grafana-token", r"eyJrIjoi[A-Za-z0-9]{70,}={0,3}", "eyJrIjoi"),
    _token(
        "onepassword-token",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
        r"(?:-[A-Z0-9]{5}){3}",
        "A3-",
    ),
    _token("adobe-secret", r"p8e-[A-Za-z0-9]{32}", "p8e-"),
    _token("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"),
    _token("alibaba-access-key", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", "LTAI"),
    _token("artifactory-key", r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})", "AKCp", "cmVmd"),
    _token("aws-bedrock-key", r"ABSK[A-Za-z0-9+/]{100,}={0,2}", "ABSK"),
    _token(
        "aws-bedrock-key",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&?._-]*",
        "bedrock-api-key-",
    ),
    _token("clickhouse-key", r"4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])", "4b1d"),
    _token("clojars-token", r"CLOJARS_[A-Za-z0-9]{60}", "CLOJARS_"),
    _token("cloudflare-origin-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    _token("duffel-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    _token("dynatrace-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    _token("easypost-key", r"EZ[AT]K[A-Za-z0-9]{54}", "EZAK", "EZTK"),
    _token("facebook-token", r"EAA[MC][A-Za-z0-9]{100,}", "EAAM", "EAAC"),
    _token("flutterwave-key", r"FLW(?:SECK|PUBK)_TEST-[A-Za-z0-9]{12,}(?:-X)?", "FLW"),
    _token("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    _token("gitlab-token", r"_gitlab_session=[0-9a-z]{32}", "_gitlab_session=", edge=False),
    _token(
        "harness-key",
        r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        "pat.",
        "sat.",
    ),
    Rule(
        "terraform-token",
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
        (".atlasv1.",),
        lead=14,
        word=True,
    ),
    _token("infracost-key", r"ico-[A-Za-z0-9]{32}", "ico-"),
    _token("intra42-secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", "s-s4t2"),
    Rule(
        "maxmind-key",
        r"(?<![A-Za-z0-9_])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk",
        ("_mmk",),
        lead=36,
        word=True,
    ),
    _token("octopus-key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "API-"),
    _token("openshift-token", r"sha256~[A-Za-z0-9_-]{43}", "sha256~"),
    _token("prefect-key", r"pnu_[A-Za-z0-9]{36}", "pnu_"),
    _token("readme-key", r"rdme_[a-z0-9]{70}", "rdme_"),
    _token("scalingo-token", r"tk-us-[A-Za-z0-9_-]{48}", "tk-us-"),
    _token(
        "brevo-key", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-", "xsmtpsib-"
    ),
    _token("settlemint-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", "sm_"),
    _token("shippo-token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    _token(
        "sourcegraph-token",
        r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
        "sgp_",
    ),
    _token(
        "square-token", r"(?:sq0atp-|sq0csp-|EAAA)[A-Za-z0-9_-]{22,}", "sq0atp-", "sq0csp-", "EAAA"
    ),
)

GENERIC_RULES: tuple[Rule, ...] = (
    _named(
        "bearer-token",
        r"(?i:bearer)\s+" + _NOT_REDACTED + r"(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
        "bearer",
    ),
    _named(
        "basic-auth",
        _HEADER + r"(?i:basic)\s+" + _NOT_REDACTED + r"(?P<secret>[A-Za-z0-9+/_-]{6,}={0,2})",
        "authorization",
    ),
    # `Authorization: Token …` and the other token schemes; without a scheme, a value of 16+
    # characters with a digit (not `authorization = request.headers.get(…)`).
    _named(
        "auth-token",
        _HEADER
        + r"(?:"
        + _HEADER_SCHEMES
        + r"\s+(?=[A-Za-z0-9._~+/=:-]{6})"
        + r"|(?=[A-Za-z0-9._~+/=:-]{16})(?=[A-Za-z._~+/=:-]{0,200}[0-9]))"
        + _NOT_REDACTED
        + r"(?P<secret>[A-Za-z0-9._~+/=:-]+)",
        "authorization",
    ),
    # The same values without the header's name, which a gateway's own masking can take away
    # (`*** Basic …`): `Basic` + base64 holding a digit, `+`, `/` or `=`; `Token` + 16 or more
    # characters with a digit.
    Rule(
        "basic-auth",
        r"(?<![\w-])Basic\s+"
        + _NOT_REDACTED
        + r"(?=[A-Za-z_-]{0,200}[0-9+/=])(?P<secret>[A-Za-z0-9+/_-]{12,}={0,2})",
        ("Basic",),
    ),
    Rule(
        "auth-token",
        r"(?<![\w-])Token\s+"
        + _NOT_REDACTED
        + r"(?=[A-Za-z._~+/=:-]{0,200}[0-9])(?P<secret>[A-Za-z0-9._~+/=:-]{16,})",
        ("Token",),
    ),
    # A command-line flag that names a secret, its value after a space or `=`:
    # `--password X`, `--api-token X`, `--client-secret=X`, `--credential X` (not `--auth token`,
    # a mode).
    Rule(
        "cli-secret",
        r"--(?:[a-z0-9]+-){0,4}(?:password|passwd|pass|token|secret|api-?key|access-key|"
        r"secret-key|private-key|credentials?)(?:[ \t]+|=)(?!-)"
        + _QUOTE
        + _NOT_REDACTED
        + r"(?P<secret>[^\s\"']+)",
        ("--",),
    ),
    # `-u user:password` (curl, wget, httpie…), unless all digits (`docker -u 1000:1000`), and
    # `-u user -p<password>` (mysql and its kin, even with the command name masked away).
    Rule(
        "password",
        r"(?<!\S)-u[ \t]*"
        + _QUOTE
        + r"[^\s:\"']+:"
        + _NOT_REDACTED
        + r"(?![0-9]+(?![^\s\"']))(?P<secret>[^\s\"']+)",
        ("-u",),
    ),
    Rule(
        "password",
        r"(?<!\S)-u[ \t]*[^\s\"']+[ \t]+-p" + _QUOTE + _NOT_REDACTED + r"(?P<secret>[^\s\"']+)",
        ("-u",),
    ),
    # Passwords on command lines: `mysql -u root -pS3cret`, `sshpass -p …`, `curl -u user:…`.
    _named(
        "password",
        r"(?i:mysql|mariadb)[\w-]{0,20}(?=\s)[^\n]{0,200}?\s-p"
        + _QUOTE
        + _NOT_REDACTED
        + r"(?P<secret>[^\s\"']+)",
        "mysql",
        "mariadb",
    ),
    _named(
        "password",
        r"(?i:sshpass)\s+-p\s*" + _QUOTE + _NOT_REDACTED + r"(?P<secret>[^\s\"']+)",
        "sshpass",
    ),
    _named(
        "password",
        r"(?i:curl)(?=\s)[^\n]{0,300}?\s(?:-u\s*|--user[=\s]\s*)"
        + _QUOTE
        + r"[^\s:\"']*:"
        + _NOT_REDACTED
        + r"(?P<secret>[^\s\"']+)",
        "curl",
    ),
    # The password of `scheme://user:password@host` (the user may be empty: `redis://:pw@`);
    # the last `@` before the path ends it, as URL parsers read it.
    Rule(
        "url-credentials",
        r"://[^\s:/@\[\]]*:" + _NOT_REDACTED + r"(?P<secret>[^\s/?#]+)@",
        ("://",),
    ),
    _named(
        "password",
        r"(?i:pass(?:word|wd|phrase)|pwd)" + _VALUE + _value(3),
        "pass",
        "pwd",
    ),
    _named("api-key", r"(?:" + _KEY_PREFIXES + r")(?i:key)" + _VALUE + _value(6), "key"),
    _named("secret", r"(?i:secret)" + _VALUE + _value(6), "secret"),
    _named("token", r"(?i:token)" + _VALUE + _value(6), "token"),
)
