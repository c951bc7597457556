"""Synthetic secrets shaped like the real ones, one (or more) per redaction rule, and the places
a conversation puts them.

Every value is made up here from a seeded generator (never a real credential, never a literal
token in the source); its shape follows the provider's format, so a rule that matches the real
thing matches the sample. A sample's `snippet` is how the secret is written (with the context a
generic rule needs: `Authorization: Basic …`, `mysql -p…`); `secret` is the part that must never
be written; `kinds` the placeholders expected in its place.

    for sample in SAMPLES:
        for placement, text in placements(sample.snippet).items(): ...
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

import orjson

from memwarden.checkpoint.digest.secret_rules import GENERIC_RULES, PROVIDER_RULES

# Every built-in rule, in the order redact applies them (an operator's rules go between).
RULES = (*PROVIDER_RULES, *GENERIC_RULES)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BASE64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
UPPER_DIGITS = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Sample:
    name: str
    secret: str
    snippet: str
    kinds: tuple[str, ...]


def _make(name: str, alphabet: str, length: int) -> str:
    """Return `length` characters of `alphabet`, the same for the same name, holding each kind
    of character (lower, upper, digit) the alphabet has, as real keys do."""
    generator = random.Random(f"{name}:{length}")
    kinds = [test for test in (str.islower, str.isupper, str.isdigit) if any(map(test, alphabet))]
    while True:
        value = "".join(generator.choice(alphabet) for _ in range(length))
        if all(any(map(test, value)) for test in kinds):
            return value


def _token(name: str, kind: str, value: str) -> Sample:
    return Sample(name, value, value, (kind,))


def _shaped(name: str, kind: str, secret: str, snippet: str, *kinds: str) -> Sample:
    return Sample(name, secret, snippet.format(secret=secret), kinds or (kind,))


def _samples() -> list[Sample]:
    access_id = "AKIA" + _make("aws-id", string.ascii_uppercase + "234567", 16)
    aws_secret = _make("aws-secret", BASE64, 40)
    aws_near = _make("aws-near", BASE64, 40)
    key_body = _make("rsa-1", BASE64, 64)
    uuid = "{}-{}-{}-{}-{}".format(
        *(_make(f"uuid{n}", HEX, size) for n, size in enumerate((8, 4, 4, 4, 12)))
    )
    basic = base64.b64encode(b"deploy:" + _make("basic", ALNUM, 18).encode()).decode()
    return [
        _shaped(
            "private-key",
            "private-key",
            key_body,
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{secret}\n"
            + _make("rsa-2", BASE64, 64)
            + "\n-----END RSA PRIVATE KEY-----",
        ),
        _shaped(
            "private-key-headless",
            "private-key",
            _make("rsa-3", BASE64, 64),
            "*** RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA{secret}\\n-----END RSA PRIVATE KEY-----",
        ),
        _token("anthropic", "anthropic-key", "sk-ant-api03-" + _make("ant", URLSAFE, 93) + "AA"),
        _token("openrouter", "openrouter-key", "sk-or-v1-" + _make("or", HEX, 64)),
        _token("openai", "openai-key", "sk-proj-" + _make("oai", URLSAFE, 56)),
        _token("groq", "groq-key", "gsk_" + _make("groq", ALNUM, 52)),
        _token("xai", "xai-key", "xai-" + _make("xai", ALNUM, 80)),
        _token("perplexity", "perplexity-key", "pplx-" + _make("pplx", ALNUM, 48)),
        _token("replicate", "replicate-token", "r8_" + _make("r8", ALNUM, 37)),
        _token("huggingface", "huggingface-token", "hf_" + _make("hf", string.ascii_letters, 34)),
        _token(
            "langsmith", "langsmith-key", f"lsv2_pt_{_make('ls', HEX, 32)}_{_make('ls2', HEX, 10)}"
        ),
        _token("tavily", "tavily-key", "tvly-" + _make("tvly", ALNUM, 32)),
        _token("google-api", "google-api-key", "AIza" + _make("aiza", URLSAFE, 35)),
        _token("google-oauth", "google-oauth-token", "ya29." + _make("ya29", URLSAFE, 60)),
        _token("google-refresh", "google-oauth-token", "1//0" + _make("g1", URLSAFE, 60)),
        _token("google-secret", "google-oauth-secret", "GOCSPX-" + _make("gocspx", URLSAFE, 28)),
        _token(
            "azure-client-secret",
            "azure-client-secret",
            _make("az0", ALNUM, 3) + "8Q~" + _make("az1", ALNUM + "_~.-", 34),
        ),
        _shaped(
            "azure-storage",
            "azure-storage-key",
            _make("azsk", BASE64, 86) + "==",
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={secret};"
            "EndpointSuffix=core.windows.net",
        ),
        _shaped(
            "azure-sas",
            "azure-sas-signature",
            _make("sas", ALNUM, 40) + "%2B" + _make("sas2", ALNUM, 6) + "%3D",
            "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={secret}",
        ),
        _token("aws-access", "aws-access-key", "ASIA" + _make("asia", string.ascii_uppercase, 16)),
        _shaped("aws-named", "aws-secret-key", aws_secret, "aws_secret_access_key = {secret}"),
        _shaped(
            "aws-pair",
            "aws-secret-key",
            aws_near,
            f"key id {access_id}, secret {{secret}}",
            "aws-access-key",
            "aws-secret-key",
        ),
        _token("digitalocean", "digitalocean-token", "dop_v1_" + _make("do", HEX, 64)),
        _token("databricks", "databricks-token", "dapi" + _make("dapi", HEX, 32)),
        _token("vault", "vault-token", "hvs." + _make("hvs", URLSAFE, 90)),
        _token("doppler", "doppler-token", "dp.pt." + _make("dp", ALNUM, 43)),
        _token("pulumi", "pulumi-token", "pul-" + _make("pul", HEX, 40)),
        _token("heroku", "heroku-key", "HRKU-AA" + _make("hrku", URLSAFE, 58)),
        _token("flyio", "flyio-token", "fo1_" + _make("fly", URLSAFE, 43)),
        _token("supabase", "supabase-key", "sbp_" + _make("sbp", HEX, 40)),
        _token("planetscale", "planetscale-token", "pscale_tkn_" + _make("ps", URLSAFE, 43)),
        _token("github-classic", "github-token", "ghp_" + _make("ghp", ALNUM, 36)),
        _token(
            "github-fine-grained",
            "github-token",
            f"github_pat_{_make('gp1', ALNUM, 22)}_{_make('gp2', ALNUM, 59)}",
        ),
        _token("gitlab", "gitlab-token", "glpat-" + _make("glpat", URLSAFE, 20)),
        _token("gitlab-runner", "gitlab-token", "GR1348941" + _make("gr", URLSAFE, 20)),
        _token("npm", "npm-token", "npm_" + _make("npm", ALNUM, 36)),
        _token("pypi", "pypi-token", "pypi-AgEIcHlwaS5vcmc" + _make("pypi", URLSAFE, 70)),
        _token("rubygems", "rubygems-key", "rubygems_" + _make("gem", HEX, 48)),
        _token("docker", "docker-token", "dckr_pat_" + _make("dckr", URLSAFE, 27)),
        _token("atlassian", "atlassian-token", "ATATT3xFfGF0" + _make("atl", URLSAFE, 60)),
        _token("linear", "linear-key", "lin_api_" + _make("lin", ALNUM, 40)),
        _token("notion", "notion-token", "ntn_" + _make("ntn", ALNUM, 46)),
        _token("postman", "postman-key", f"PMAK-{_make('pm1', HEX, 24)}-{_make('pm2', HEX, 34)}"),
        _token("sentry", "sentry-token", "sntryu_" + _make("sntry", HEX, 64)),
        _token(
            "grafana", "grafana-token", f"glsa_{_make('glsa', ALNUM, 32)}_{_make('gl2', HEX, 8)}"
        ),
        _token(
            "newrelic",
            "newrelic-key",
            "NRAK-" + _make("nrak", string.ascii_uppercase + string.digits, 27),
        ),
        _token("onepassword", "onepassword-token", "ops_eyJ" + _make("ops", BASE64, 250)),
        _token(
            "age",
            "age-secret-key",
            "AGE-SECRET-KEY-1" + _make("age", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
        ),
        _token(
            "slack-bot",
            "slack-token",
            f"xoxb-1234567890123-1234567890123-{_make('xoxb', ALNUM, 24)}",
        ),
        _token(
            "slack-app", "slack-token", f"xapp-1-A0123ABCDEF-1234567890123-{_make('xapp', HEX, 64)}"
        ),
        _shaped(
            "slack-webhook",
            "slack-webhook",
            _make("slackhook", ALNUM, 24),
            "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{secret}",
        ),
        _shaped(
            "discord-webhook",
            "discord-webhook",
            _make("dischook", URLSAFE, 68),
            "https://discord.com/api/webhooks/123456789012345678/{secret}",
        ),
        _shaped(
            "telegram",
            "telegram-bot-token",
            "AA" + _make("tg", URLSAFE, 33),
            "123456789:{secret}",
        ),
        _shaped(
            "teams-webhook",
            "teams-webhook",
            _make("teams", HEX, 32),
            f"https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/"
            f"{{secret}}/{uuid}",
        ),
        _token(
            "sendgrid",
            "sendgrid-key",
            f"SG.{_make('sg1', URLSAFE, 22)}.{_make('sg2', URLSAFE, 43)}",
        ),
        _token("twilio", "twilio-key", "SK" + _make("twilio", HEX, 32)),
        _token("stripe", "stripe-key", "sk_live_" + _make("stripe", ALNUM, 99)),
        _token("stripe-webhook", "stripe-key", "whsec_" + _make("whsec", ALNUM, 32)),
        _token("shopify", "shopify-token", "shpat_" + _make("shpat", HEX, 32)),
        _token(
            "jwt",
            "jwt",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtZW13YXJkZW4tdGVzdCJ9."
            + _make("jwt", URLSAFE, 43),
        ),
        # The other distinctive shapes of gitleaks' catalogue.
        _token("grafana-api", "grafana-token", "eyJrIjoi" + _make("grafana", ALNUM, 80)),
        _token(
            "onepassword-secret",
            "onepassword-token",
            "A3-{}-{}-{}-{}-{}".format(
                *(_make(f"op{n}", UPPER_DIGITS, size) for n, size in enumerate((6, 11, 5, 5, 5)))
            ),
        ),
        _token("adobe", "adobe-secret", "p8e-" + _make("adobe", ALNUM, 32)),
        _token(
            "airtable", "airtable-token", f"pat{_make('at1', ALNUM, 14)}.{_make('at2', HEX, 64)}"
        ),
        _token("alibaba", "alibaba-access-key", "LTAI" + _make("ltai", ALNUM, 20)),
        _token("artifactory", "artifactory-key", "AKCp" + _make("akcp", ALNUM, 69)),
        _token("artifactory-reference", "artifactory-key", "cmVmd" + _make("cmvmd", ALNUM, 59)),
        _token("bedrock", "aws-bedrock-key", "ABSK" + _make("absk", BASE64, 132)),
        _shaped(
            "bedrock-short",
            "aws-bedrock-key",
            _make("bedrock", ALNUM, 60),
            "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{secret}",
        ),
        _token("clickhouse", "clickhouse-key", "4b1d" + _make("ch", ALNUM, 38)),
        _token("clojars", "clojars-token", "CLOJARS_" + _make("clojars", ALNUM, 60)),
        _token(
            "cloudflare-origin",
            "cloudflare-origin-key",
            f"v1.0-{_make('cf1', HEX, 24)}-{_make('cf2', HEX, 146)}",
        ),
        _token("duffel", "duffel-token", "duffel_test_" + _make("duffel", URLSAFE, 43)),
        _token(
            "dynatrace",
            "dynatrace-token",
            f"dt0c01.{_make('dt1', UPPER_DIGITS, 24)}.{_make('dt2', UPPER_DIGITS, 64)}",
        ),
        _token("easypost", "easypost-key", "EZAK" + _make("ezak", ALNUM, 54)),
        _token("facebook", "facebook-token", "EAAC" + _make("eaac", ALNUM, 120)),
        _token("flutterwave", "flutterwave-key", f"FLWSECK_TEST-{_make('flw', HEX, 32)}-X"),
        _token("frameio", "frameio-token", "fio-u-" + _make("fio", URLSAFE, 64)),
        _shaped(
            "gitlab-session",
            "gitlab-token",
            _make("glsession", string.ascii_lowercase + string.digits, 32),
            "_gitlab_session={secret}",
        ),
        _token(
            "harness",
            "harness-key",
            f"pat.{_make('h1', URLSAFE, 22)}.{_make('h2', ALNUM, 24)}.{_make('h3', ALNUM, 20)}",
        ),
        _token(
            "terraform",
            "terraform-token",
            f"{_make('tf1', ALNUM, 14)}.atlasv1.{_make('tf2', URLSAFE, 67)}",
        ),
        _token("infracost", "infracost-key", "ico-" + _make("ico", ALNUM, 32)),
        _token("intra42", "intra42-secret", "s-s4t2ud-" + _make("intra", HEX, 64)),
        _token("maxmind", "maxmind-key", f"{_make('mm1', ALNUM, 6)}_{_make('mm2', ALNUM, 29)}_mmk"),
        _token("octopus", "octopus-key", "API-" + _make("octo", UPPER_DIGITS, 26)),
        _token("openshift", "openshift-token", "sha256~" + _make("oc", URLSAFE, 43)),
        _token("prefect", "prefect-key", "pnu_" + _make("pnu", ALNUM, 36)),
        _token(
            "readme",
            "readme-key",
            "rdme_" + _make("rdme", string.ascii_lowercase + string.digits, 70),
        ),
        _token("scalingo", "scalingo-token", "tk-us-" + _make("scalingo", URLSAFE, 48)),
        _token(
            "brevo", "brevo-key", f"xkeysib-{_make('brevo', HEX, 64)}-{_make('brevo2', ALNUM, 16)}"
        ),
        _token("settlemint", "settlemint-token", "sm_pat_" + _make("sm", ALNUM, 16)),
        _token("shippo", "shippo-token", "shippo_live_" + _make("shippo", HEX, 40)),
        _token(
            "sourcegraph",
            "sourcegraph-token",
            f"sgp_{_make('sg1', HEX, 16)}_{_make('sg2', HEX, 40)}",
        ),
        _token("square", "square-token", "sq0atp-" + _make("square", URLSAFE, 22)),
        _token("square-eaaa", "square-token", "EAAA" + _make("eaaa", URLSAFE, 60)),
        # Generic shapes: the name says "secret" and the value follows. Several values hold
        # `/` and `.`, so they look like paths.
        _shaped(
            "bearer",
            "bearer-token",
            "b3/" + _make("bearer", ALNUM, 20) + ".x9",
            "Authorization: Bearer {secret}",
        ),
        _shaped("basic", "basic-auth", basic, "Authorization: Basic {secret}"),
        # Values whose name a gateway's own masking took away (seen on 2026.7.35 and 2026.9.6).
        _shaped("basic-bare", "basic-auth", basic[::-1].strip("=") + "==", "*** Basic {secret}"),
        _shaped(
            "token-bare", "auth-token", "tb/" + _make("tokenbare", HEX, 24), "*** Token {secret}"
        ),
        _shaped(
            "u-user", "password", "Pw.u/" + _make("uuser", ALNUM, 10), "*** -sS -u deploy:{secret}"
        ),
        _shaped(
            "u-root-p", "password", "Pw!" + _make("uroot", ALNUM, 10), "*** -u root -p{secret} db"
        ),
        _shaped(
            "aws-shortened-id",
            "aws-secret-key",
            _make("aws-short", BASE64, 40),
            f"key id {access_id[:6]}…{access_id[-4:]}, secret {{secret}}",
            "aws-access-key",
            "aws-secret-key",
        ),
        _shaped(
            "aws-shortened-name",
            "aws-secret-key",
            _make("aws-short-name", BASE64, 40),
            "aws_se…_key = {secret}",
        ),
        _shaped(
            "cli-flag",
            "cli-secret",
            "cf_" + _make("cliflag", ALNUM, 20),
            "deploy --api-token {secret} -v",
        ),
        _shaped(
            "auth-token",
            "auth-token",
            "tk/" + _make("authtk", HEX, 24) + ".v2",
            "Authorization: Token {secret}",
        ),
        _shaped(
            "mysql",
            "password",
            "S3cr3t!" + _make("mysql", ALNUM, 8),
            "mysql -h db.internal -u root -p{secret} appdb",
        ),
        _shaped(
            "sshpass",
            "password",
            "Hunter2-" + _make("sshpass", ALNUM, 8),
            "sshpass -p '{secret}' ssh deploy@host",
        ),
        _shaped(
            "curl-user",
            "password",
            "Curl.P4ss/" + _make("curl", ALNUM, 8),
            "curl -sS -u deploy:{secret} https://api.example.com/v1/me",
        ),
        _shaped(
            "redis-empty-user",
            "url-credentials",
            "rd-" + _make("redis", ALNUM, 16),
            "redis://:{secret}@cache.internal:6379/0",
        ),
        _shaped(
            "postgres",
            "url-credentials",
            "pg.S3cret-" + _make("pg", ALNUM, 10),
            "postgres://app:{secret}@db.internal:5432/app",
        ),
        _shaped(
            "password", "password", "pa/ss.W0rd-" + _make("pw", ALNUM, 6), "password: {secret}"
        ),
        _shaped(
            "api-key",
            "api-key",
            "ak/live." + _make("apikey", ALNUM, 16),
            '"apiKey": "{secret}"',
        ),
        _shaped(
            "client-secret",
            "secret",
            "cs/" + _make("cs", ALNUM, 12) + ".def",
            "client_secret={secret}",
        ),
        _shaped(
            "api-token",
            "token",
            "at/" + _make("apitoken", ALNUM, 12) + ".q1",
            "API_TOKEN={secret}",
        ),
        _shaped(
            "json-token",
            "token",
            "jt/" + _make("jsontoken", ALNUM, 12) + ".z9",
            '{{"token": "{secret}"}}',
        ),
    ]


SAMPLES: tuple[Sample, ...] = tuple(_samples())


def placements(snippet: str) -> dict[str, str]:
    """Return the texts that hold `snippet`: mid-sentence, after `=`, in a URL, in JSON, in a
    tool call's (JSON) arguments and in a file path."""
    return {
        "mid-sentence": f"Yesterday I set {snippet} on the staging box and it worked.",
        "after-equals": f"SETTING={snippet}",
        "url": f"see https://console.example.com/settings?value={snippet}&tab=keys",
        "json": orjson.dumps({"name": "deploy", "value": snippet}).decode(),
        "tool-arguments": orjson.dumps(tool_arguments(snippet)).decode(),
        "path": f"Wrote {file_path(snippet)} today.",
    }


def tool_arguments(snippet: str) -> dict[str, str]:
    """Return the arguments of a tool call that carries `snippet` in a command and a path."""
    return {"command": f"echo '{snippet}' >> .env", "path": file_path(snippet)}


def file_path(snippet: str) -> str:
    return f"/srv/app/{snippet}/config.json"
