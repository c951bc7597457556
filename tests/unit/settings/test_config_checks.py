"""Values that fit an option's type but cannot work are refused when the settings are loaded: one
line naming the file (or variable), the option and the fix, never later in a job."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memwarden.process.errors import ConfigError
from memwarden.settings import ALL_OPTIONS, config

FLOAT_OPTIONS = [option for option in ALL_OPTIONS if option.kind == "float"]


def problems(path: Path | None = None, **env: str) -> list[str]:
    """Load the settings; return the problem lines (none: the load succeeded)."""
    try:
        config.load(path, env=env)
    except ConfigError as error:
        assert error.exit_code == 2
        return error.lines()
    return []


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


# --- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "1e999"])
@pytest.mark.parametrize("option", FLOAT_OPTIONS, ids=lambda option: option.key)
def test_load_non_finite_number_in_environment_is_refused(option, text):
    (line,) = problems(**{option.env_name: text})
    assert line.startswith(f"environment: {option.env_name} ({option.key}): expected a number")
    assert line.endswith(f'got "{text}"')


@pytest.mark.parametrize("value", ["nan", "+inf", "-nan"])
def test_load_non_finite_number_in_toml_names_file_and_option(tmp_path, value):
    path = toml(tmp_path, f"[checkpoint]\nstaleness_hours = {value}\n")
    assert problems(path) == [
        f"{path}: checkpoint.staleness_hours: expected a number between 0.01 and 8760, "
        f"got {float(value)!r}"
    ]


def test_load_finite_numbers_still_accepted():
    loaded = config.load(None, env={"MEMWARDEN_CHECKPOINT_STALENESS_HOURS": "0.5"})
    assert loaded.checkpoint.staleness_hours == 0.5


# --- checkpoint.redact_patterns ----------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["", "x*", "(?:tok_)?", "^", "\\b", "(?<=a)x*", "[0-9]{0,4}"])
def test_load_redact_pattern_matching_empty_text_is_refused_naming_the_rule(tmp_path, pattern):
    escaped = pattern.replace("\\", "\\\\")
    path = toml(
        tmp_path,
        f'[checkpoint]\nredact_patterns = [{{ name = "ok", pattern = "tok_[a-z]+" }}, '
        f'{{ name = "greedy", pattern = "{escaped}" }}]\n',
    )
    (line,) = problems(path)
    assert line.startswith(
        f"{path}: checkpoint.redact_patterns: rule 'greedy': pattern {pattern!r} matches an "
        "empty text"
    )
    assert "at least one character" in line


def test_load_redact_pattern_that_does_not_compile_is_refused_naming_the_option(tmp_path):
    path = toml(tmp_path, '[checkpoint]\nredact_patterns = [{ name = "broken", pattern = "(x" }]\n')
    (line,) = problems(path)
    assert line.startswith(f"{path}: checkpoint.redact_patterns: invalid regular expression '(x'")


def test_load_redact_pattern_with_a_secret_group_matching_text_is_accepted():
    rules = '[{"name": "itk", "pattern": "key=(?P<secret>[A-Za-z0-9]{24,})"}]'
    loaded = config.load(None, env={"MEMWARDEN_CHECKPOINT_REDACT_PATTERNS": rules})
    assert loaded.checkpoint.redact_patterns[0]["name"] == "itk"


# --- install.jobs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        (
            '["checkpoint", "bogus"]',
            "any of checkpoint, rotate, index, health, maintain, got 'bogus'",
        ),
        ("[]", "at least one of checkpoint, rotate, index, health, maintain, got []"),
    ],
)
def test_load_install_jobs_unknown_or_none_is_refused(tmp_path, jobs, expected):
    path = toml(tmp_path, f"[install]\njobs = {jobs}\n")
    assert problems(path) == [f"{path}: install.jobs: expected {expected}"]


def test_load_install_jobs_subset_is_accepted():
    loaded = config.load(None, env={"MEMWARDEN_INSTALL_JOBS": "health,checkpoint"})
    assert loaded.install.jobs == ["health", "checkpoint"]


# --- URLs and Alertmanager labels --------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("MEMWARDEN_GATEWAY_URL", "ws://[bad", "got 'ws://[bad' (Invalid IPv6 URL)"),
        ("MEMWARDEN_GATEWAY_URL", "http://127.0.0.1:18789", "starting with ws:// or wss://"),
        ("MEMWARDEN_GATEWAY_URL", "ws://127.0.0.1:99999", "(Port out of range 0-65535)"),
        ("MEMWARDEN_HEALTH_GATEWAY_HTTP_URL", "http://[bad", "(Invalid IPv6 URL)"),
        ("MEMWARDEN_SLACK_API_BASE_URL", "notaurl", "got 'notaurl' (no scheme)"),
        ("MEMWARDEN_ALERTMANAGER_URLS", '["ftp://x"]', "got 'ftp://x' (another scheme)"),
        ("MEMWARDEN_ALERTMANAGER_URLS", "http://ok:9093,am:9093", "got 'am:9093' (no scheme)"),
        ("MEMWARDEN_ALERTMANAGER_URLS", '["http://"]', "(no host)"),
    ],
)
def test_load_unusable_url_is_refused_naming_variable_and_option(variable, value, expected):
    (line,) = problems(**{variable: value})
    assert line.startswith(f"environment: {variable} (")
    assert "expected a URL starting with" in line
    assert expected in line


@pytest.mark.parametrize(
    ("value", "ending"),
    [
        ("http://127.0.0.1:39093/api/v2/alerts", "/api/v2/alerts"),
        ("https://ops:s3cret@am.example/prefix/api/v2/", "/api/v2"),
    ],
)
def test_load_alertmanager_url_with_the_api_path_is_refused_with_the_part_to_remove(value, ending):
    # memwarden adds /api/v2/alerts: every send went to /api/v2/alerts/api/v2/alerts (a 404).
    # The fix names the part to remove, not a URL rewritten without the user name and password.
    (line,) = problems(MEMWARDEN_ALERTMANAGER_URLS=json.dumps([value]))
    assert line.startswith("environment: MEMWARDEN_ALERTMANAGER_URLS (alertmanager.urls): ")
    assert f"memwarden adds /api/v2/alerts itself; remove {ending} from its end" in line
    assert "s3cret" not in line


def test_load_url_with_password_is_shown_without_it():
    (line,) = problems(MEMWARDEN_ALERTMANAGER_URLS='["https://ops:s3cret@[am:9093"]')
    assert "s3cret" not in line
    assert "got 'https://[am:9093' (Invalid IPv6 URL)" in line


@pytest.mark.parametrize("value", ["notaurl", "hooks.slack.com/services/secret-path"])
def test_load_bad_slack_webhook_url_is_refused_and_never_shown(value):
    (line,) = problems(MEMWARDEN_SLACK_WEBHOOK_URL=value)
    assert line.startswith("environment: MEMWARDEN_SLACK_WEBHOOK_URL (slack.webhook_url): ")
    assert "expected a URL starting with https:// or http://" in line
    assert value not in line and "secret-path" not in line


def test_load_usable_urls_are_accepted():
    loaded = config.load(
        None,
        env={
            "MEMWARDEN_GATEWAY_URL": "wss://gw.example:443/",
            "MEMWARDEN_SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x",
            "MEMWARDEN_SLACK_API_BASE_URL": "http://127.0.0.1:8080/api/",
            "MEMWARDEN_ALERTMANAGER_URLS": '["http://[::1]:9093", "https://u:p@am:9443"]',
        },
    )
    assert loaded.gateway.url == "wss://gw.example:443/"


def test_load_alertmanager_label_memwarden_sets_itself_is_refused(tmp_path):
    path = toml(tmp_path, '[alertmanager]\nlabels = { env = "prod", alertname = "x" }\n')
    assert problems(path) == [
        f"{path}: alertmanager.labels: 'alertname': memwarden sets this name itself; choose "
        "another name"
    ]


# --- operators' template files -----------------------------------------------------------------

TEMPLATE_OPTIONS = [option for option in ALL_OPTIONS if option.existing_file]


def file_problems(path: Path | None = None, **env: str) -> list[str]:
    """Load the settings and check their files, as the jobs that render do; return the problem
    lines (none: both succeeded)."""
    try:
        config.check_files(config.load(path, env=env))
    except ConfigError as error:
        assert error.exit_code == 2
        return error.lines()
    return []


def test_a_missing_template_does_not_stop_the_load_health_and_doctor_make():
    loaded = config.load(None, env={"MEMWARDEN_INDEX_TEMPLATE": "/nowhere/t.j2"})
    assert loaded.index.template == "/nowhere/t.j2"


def test_every_template_option_must_name_an_existing_file():
    templates = {option.key for option in ALL_OPTIONS if "template" in option.name}
    assert templates == {option.key for option in TEMPLATE_OPTIONS}
    assert len(templates) == 4


@pytest.mark.parametrize("option", TEMPLATE_OPTIONS, ids=lambda option: option.key)
def test_missing_template_names_option_and_path(tmp_path, option):
    missing = tmp_path / "nowhere" / "t.j2"
    path = toml(tmp_path, f'[{option.section}]\n{option.name} = "{missing}"\n')
    assert file_problems(path) == [
        f"{path}: {option.key}: no such file: {missing} (fix the path, or leave it empty for "
        "the default)"
    ]


def test_template_folder_from_environment_names_the_variable(tmp_path):
    (line,) = file_problems(MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE=str(tmp_path))
    assert line == (
        "environment: MEMWARDEN_CHECKPOINT_ACTIVE_CONTEXT_TEMPLATE "
        f"(checkpoint.active_context_template): it is a folder, not a file: {tmp_path} (fix the "
        "path, or leave it empty for the default)"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_template_is_refused(tmp_path):
    template = tmp_path / "t.j2"
    template.write_text("{{ agent }}\n")
    template.chmod(0)
    (line,) = file_problems(MEMWARDEN_INDEX_TEMPLATE=str(template))
    assert "(index.template): memwarden may not read it" in line


def test_load_missing_template_in_toml_overridden_by_environment_is_fine(tmp_path):
    template = tmp_path / "t.j2"
    template.write_text("{{ agent }}\n")
    path = toml(tmp_path, f'[index]\ntemplate = "{tmp_path / "gone.j2"}"\n')
    loaded = config.load(path, env={"MEMWARDEN_INDEX_TEMPLATE": str(template)})
    assert loaded.index.template == str(template)
    assert file_problems(path, MEMWARDEN_INDEX_TEMPLATE=str(template)) == []


def test_load_template_under_home_is_found_with_tilde(tmp_path, isolated_env):
    (isolated_env / "t.j2").write_text("{{ agent }}\n")
    loaded = config.load(None, env={"MEMWARDEN_INDEX_SUMMARY_TEMPLATE": "~/t.j2"})
    assert loaded.index.summary_template == "~/t.j2"
    assert file_problems(MEMWARDEN_INDEX_SUMMARY_TEMPLATE="~/t.j2") == []
    assert file_problems(MEMWARDEN_INDEX_SUMMARY_TEMPLATE="~/absent.j2") == [
        "environment: MEMWARDEN_INDEX_SUMMARY_TEMPLATE (index.summary_template): no such file: "
        f"{isolated_env / 'absent.j2'} (fix the path, or leave it empty for the default)"
    ]
