"""memwarden's own settings: one schema, every problem at once, env overrides, masked secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwarden.process.errors import ConfigError
from memwarden.process.runtime import JobContext
from memwarden.settings import ALL_OPTIONS, SECTIONS, config, render

REPO = Path(__file__).resolve().parents[3]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def private_secrets(folder: Path, text: str) -> tuple[Path, dict[str, str]]:
    """Write a secrets file (0600) holding `text`; return it and the environment naming it."""
    secrets = write(folder / "secrets.env", text)
    secrets.chmod(0o600)
    return secrets, {"MEMWARDEN_GENERAL_SECRETS_FILE": str(secrets)}


def test_load_without_file_returns_schema_defaults():
    loaded = config.load(None, env={})
    for option in ALL_OPTIONS:
        assert loaded.values[option.key] == option.default
        assert loaded.sources[option.key] == "default"
    assert loaded.schedule.checkpoint_minutes == 20


def test_load_toml_value_overrides_default_and_records_source(tmp_path):
    path = write(tmp_path / "c.toml", "[schedule]\nhealth_minutes = 7\n")
    loaded = config.load(path, env={})
    assert loaded.schedule.health_minutes == 7
    assert loaded.sources["schedule.health_minutes"] == str(path)


def test_load_env_wins_over_toml(tmp_path):
    path = write(tmp_path / "c.toml", "[schedule]\nhealth_minutes = 7\n")
    loaded = config.load(path, env={"MEMWARDEN_SCHEDULE_HEALTH_MINUTES": "9"})
    assert loaded.schedule.health_minutes == 9
    assert "MEMWARDEN_SCHEDULE_HEALTH_MINUTES" in loaded.sources["schedule.health_minutes"]


def test_load_many_problems_reports_all_at_once_one_line_each(tmp_path):
    path = write(
        tmp_path / "c.toml",
        '[schedule]\nhealth_minutes = "soon"\nrotate_minute = 3\n\n[nope]\nx = 1\n',
    )
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={"MEMWARDEN_GATEWAY_TIMEOUT_SECONDS": "fast"})
    problems = raised.value.lines()
    assert len(problems) == 4
    assert (
        f'{path}: schedule.health_minutes: expected an integer between 1 and 10080, got "soon"'
        in (problems)
    )
    assert any(
        "schedule.rotate_minute: unknown option (did you mean schedule.rotate_minutes?)" in p
        for p in problems
    )
    assert any(p.startswith(f"{path}: nope: unknown section") for p in problems)
    assert any("MEMWARDEN_GATEWAY_TIMEOUT_SECONDS (gateway.timeout_seconds)" in p for p in problems)
    assert all("\n" not in problem for problem in problems)
    assert raised.value.exit_code == 2


def test_load_invalid_toml_names_file(tmp_path):
    path = write(tmp_path / "c.toml", "[schedule\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        config.load(path, env={})


def test_load_toml_starting_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes(b"\xef\xbb\xbf[schedule]\nhealth_minutes = 7\n")
    assert config.load(path, env={}).schedule.health_minutes == 7


def test_load_toml_not_utf8_after_a_byte_order_mark_names_the_byte(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes(b"\xef\xbb\xbf#\xff\n")
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={})
    assert raised.value.lines() == [f"{path}: not UTF-8 text (byte 5); save it as UTF-8"]


def test_load_explicit_missing_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        config.load(tmp_path / "absent.toml", env={})


def test_load_default_location_missing_is_fine(tmp_path):
    loaded = config.load(None, env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert loaded.path is None


def test_load_unknown_memwarden_variable_is_reported():
    with pytest.raises(ConfigError, match="MEMWARDEN_SCHEDULE_HEALTH_MINUTE: unknown"):
        config.load(None, env={"MEMWARDEN_SCHEDULE_HEALTH_MINUTE": "5"})


def test_load_retired_install_stale_multiple_names_what_replaced_it(tmp_path):
    path = write(tmp_path / "c.toml", "[install]\nstale_multiple = 4.0\n")
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={"MEMWARDEN_INSTALL_STALE_MULTIPLE": "4"})
    assert raised.value.lines() == [
        f"{path}: install.stale_multiple: no longer an option (doctor grades staleness with "
        "health.stale_warning_multiple and health.stale_critical_multiple)",
        "environment: MEMWARDEN_INSTALL_STALE_MULTIPLE: no longer an option (doctor grades "
        "staleness with health.stale_warning_multiple and health.stale_critical_multiple)",
    ]
    assert "install.stale_multiple" not in {option.key for option in ALL_OPTIONS}


def test_load_secrets_file_private_is_read(tmp_path):
    _, env = private_secrets(tmp_path, "# comment\nMEMWARDEN_GATEWAY_TOKEN='s3cr3t'\n")
    loaded = config.load(None, env=env)
    assert loaded.gateway.token == "s3cr3t"


def test_load_default_secrets_file_ignores_a_relative_xdg_config_home(tmp_path):
    (tmp_path / ".config" / "memwarden").mkdir(parents=True)
    secrets = write(tmp_path / ".config/memwarden/secrets.env", "MEMWARDEN_GATEWAY_TOKEN=t\n")
    secrets.chmod(0o600)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "relative"}
    assert config.default_secrets_file(env) == secrets
    assert config.load(None, env=env).gateway.token == "t"


def test_load_secrets_file_readable_by_others_is_refused(tmp_path):
    secrets = write(tmp_path / "secrets.env", "MEMWARDEN_GATEWAY_TOKEN=s3cr3t\n")
    secrets.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        config.load(None, env={"MEMWARDEN_GENERAL_SECRETS_FILE": str(secrets)})


def test_effective_toml_masks_secrets():
    loaded = config.load(None, env={"MEMWARDEN_GATEWAY_TOKEN": "s3cr3t"})
    text = render.effective_toml(loaded.values, loaded.sources)
    assert "s3cr3t" not in text
    assert 'token = "********"' in text


def test_effective_toml_masks_passwords_in_urls():
    env = {"MEMWARDEN_ALERTMANAGER_URLS": '["https://ops:s3cr3t@am:9093", "http://am2:9093"]'}
    loaded = config.load(None, env=env)
    text = render.effective_toml(loaded.values, loaded.sources)
    assert "s3cr3t" not in text
    assert 'urls = ["https://ops:********@am:9093", "http://am2:9093"]' in text


def test_str_map_option_from_toml_and_environment(tmp_path):
    path = write(tmp_path / "config.toml", '[alertmanager]\nlabels = { env = "prod" }\n')
    assert config.load(path, env={}).alertmanager.labels == {"env": "prod"}
    with pytest.raises(ConfigError, match="expected a JSON object of strings"):
        config.load(None, env={"MEMWARDEN_ALERTMANAGER_LABELS": "env=prod"})
    with pytest.raises(ConfigError, match="expected a table of strings"):
        config.load(None, env={"MEMWARDEN_ALERTMANAGER_LABELS": '{"env": 1}'})


def test_every_option_has_description_and_valid_default():
    for option in ALL_OPTIONS:
        assert option.section in SECTIONS, option.key
        assert len(option.description) > 20, option.key
        assert option.coerce(option.default) == option.default, option.key


def test_example_config_is_in_sync_with_schema():
    example = (REPO / "config" / "memwarden.example.toml").read_text(encoding="utf-8")
    assert example == render.example_toml(), "run: make config-example"


def test_docs_reference_is_in_sync_with_schema():
    docs = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert docs == render.docs_markdown(), "run: make config-example"


def test_example_config_uncommented_parses_to_defaults(tmp_path):
    lines = render.example_toml().splitlines()
    body = "\n".join(
        line[2:] if line.startswith("# ") else line for line in lines if not line.startswith("##")
    )
    path = write(tmp_path / "example.toml", body)
    loaded = config.load(path, env={})
    for option in ALL_OPTIONS:
        expected = option.example if option.example is not None else option.default
        assert loaded.values[option.key] == expected, option.key


def test_load_secrets_file_line_the_grammar_refuses_names_file_and_line(tmp_path):
    secrets, env = private_secrets(
        tmp_path,
        '# slack\nMEMWARDEN_SLACK_BOT_TOKEN=xoxb-1\nMEMWARDEN_SLACK_CHANNEL="C0123" # ops\n',
    )
    with pytest.raises(ConfigError) as raised:
        config.load(None, env=env)
    (line,) = raised.value.lines()
    assert line.startswith(f"{secrets}:3: `#` after a value is not a comment")
    assert "xoxb-1" not in line


def test_load_secrets_file_dollar_is_literal_and_other_variables_reach_the_job(tmp_path):
    _, env = private_secrets(
        tmp_path, "MEMWARDEN_SLACK_BOT_TOKEN=xoxb-a$b${c}\nOPENCLAW_GATEWAY_TOKEN='gw$1'\n"
    )
    env["PATH"] = "/bin"
    loaded = config.load(None, env=env)
    assert loaded.values["slack.bot_token"] == "xoxb-a$b${c}"
    assert loaded.secrets_environment == {"OPENCLAW_GATEWAY_TOKEN": "gw$1"}
    context = JobContext(config=loaded, env=env)
    assert context.env["OPENCLAW_GATEWAY_TOKEN"] == "gw$1"
    real = JobContext(config=loaded, env={**env, "OPENCLAW_GATEWAY_TOKEN": "from-env"})
    assert real.env["OPENCLAW_GATEWAY_TOKEN"] == "from-env"  # the environment wins


def test_a_time_zone_file_path_is_refused_at_load_as_the_jobs_would_refuse_it():
    with pytest.raises(ConfigError, match="unknown time zone '/etc/localtime'"):
        config.load(None, env={"MEMWARDEN_GENERAL_TIMEZONE": "/etc/localtime"})


def test_unknown_time_zone_names_the_file_or_variable_it_came_from(tmp_path):
    path = write(tmp_path / "c.toml", '[general]\ntimezone = "Mars/Olympus"\n')
    with pytest.raises(ConfigError) as from_file:
        config.load(path, env={})
    assert from_file.value.lines() == [
        f"{path}: general.timezone: unknown time zone 'Mars/Olympus'; set an IANA name such as "
        "Europe/Paris, or leave it empty for the machine's zone"
    ]
    with pytest.raises(ConfigError) as from_env:
        config.load(path, env={"MEMWARDEN_GENERAL_TIMEZONE": "Europe/Pariss"})
    (line,) = from_env.value.lines()
    assert line.startswith(
        "environment: MEMWARDEN_GENERAL_TIMEZONE (general.timezone): unknown time zone "
        "'Europe/Pariss'"
    )


@pytest.mark.parametrize("tz", ["Europe/Paris", ":Europe/Paris", "EST5EDT", "UTC", "Mars/Olympus"])
def test_tz_is_left_to_the_system_and_never_a_configuration_error(tz):
    # glibc reads TZ=UTC without zone files, where zoneinfo would not: not memwarden's to judge
    assert config.load(None, env={"TZ": tz}).general.timezone == ""


def test_load_huge_integer_for_a_number_option_is_one_problem_not_a_crash(tmp_path):
    path = write(tmp_path / "c.toml", "[gateway]\ntimeout_seconds = " + "9" * 400 + "\n")
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={})
    (problem,) = raised.value.lines()
    assert problem.startswith(f"{path}: gateway.timeout_seconds: expected a number between 0.1")


def test_load_huge_integer_for_a_number_option_without_a_maximum_is_one_problem(tmp_path):
    path = write(tmp_path / "c.toml", "[health]\nstale_warning_multiple = " + "9" * 400 + "\n")
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={})
    (problem,) = raised.value.lines()
    assert problem.startswith(f"{path}: health.stale_warning_multiple: expected a number")


def test_load_secret_in_the_config_file_is_refused_with_where_it_goes(tmp_path):
    path = write(tmp_path / "c.toml", '[slack]\nbot_token = "xoxb-1"\nwebhook_url = ""\n')
    path.chmod(0o600)  # private or not: the config file is no secret's place
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={"HOME": str(tmp_path)})
    (line,) = raised.value.lines()
    assert line.startswith(f"{path}: slack.bot_token: a secret does not belong in the config")
    assert "MEMWARDEN_SLACK_BOT_TOKEN=…" in line and "mode 0600" in line
    assert "xoxb-1" not in line
    assert str(tmp_path / ".config" / "memwarden" / "secrets.env") in line


def test_load_secrets_file_variable_without_the_memwarden_prefix_is_refused(tmp_path):
    secrets, env = private_secrets(
        tmp_path, "SLACK_BOT_TOKEN=xoxb-1\nMEMWARDEN_SLACK_CHANNEL=C1\nOPENCLAW_GATEWAY_TOKEN=t\n"
    )
    with pytest.raises(ConfigError) as raised:
        config.load(None, env=env)
    assert raised.value.lines() == [
        f"{secrets}: SLACK_BOT_TOKEN: not a memwarden variable (did you mean "
        "MEMWARDEN_SLACK_BOT_TOKEN?)"
    ]


def test_load_a_typo_of_a_retired_option_says_it_is_no_longer_one(tmp_path):
    path = write(tmp_path / "c.toml", "[checkpoint]\ntail_entrys = 5\n")
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={"MEMWARDEN_CHECKPOINT_MAX_TODO": "3"})
    toml, variable = raised.value.lines()
    assert "checkpoint.tail_entrys: unknown option (did you mean checkpoint.tail_entries? no " in (
        toml
    )
    assert toml.endswith("remove it)")
    assert "(did you mean MEMWARDEN_CHECKPOINT_MAX_TODOS? no longer an option: " in variable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[health]\nmetrics_file_mode = 0644\n",
            'write it in quotes: metrics_file_mode = "0644")',
        ),
        (
            "[schedule]\nhealth_minutes = 05\n",
            "0 in TOML; write health_minutes = 5)",
        ),
        (
            "[health]\nmetrics_file_mode = 0o644\n",
            "health.metrics_file_mode: expected one of 0600, 0640, 0644, got 420 (write it in "
            'quotes: "0644")',
        ),
        (
            "[health]\nmetrics_file_mode = 644\n",
            "health.metrics_file_mode: expected one of 0600, 0640, 0644, got 644 (write it in "
            'quotes: "0644")',
        ),
        (
            '[slack]\nsend_resolved = "false"\n',
            "slack.send_resolved: expected true or false, got 'false' (write it without "
            "quotes: false)",
        ),
        (
            'metrics_file = "/tmp/m.prom"\n[health]\n',
            "metrics_file: an option outside its section (did you mean [health] metrics_file?)",
        ),
    ],
)
def test_load_common_config_mistakes_name_the_fix(tmp_path, text, expected):
    path = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError) as raised:
        config.load(path, env={})
    (line,) = raised.value.lines()
    assert line.startswith(f"{path}: ")
    assert line.endswith(expected), line
