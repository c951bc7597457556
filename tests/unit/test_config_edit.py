"""Minimal in-place edits of a JSON5 config: the rest of the text stays byte for byte."""

from __future__ import annotations

import json5
import pytest

from memwarden.hooks_config import changes, hooks_switched, restored
from memwarden.openclaw.config_edit import (
    DELETE,
    ConfigEditError,
    edit,
    remove_member,
    set_member,
)

NAMES = ("memory-index-inject", "session-summary")

HAND_WRITTEN = """// my gateway, edited by hand
{
  /* where it listens */
  gateway: { port: 18789, bind: 'loopback' }, // keep loopback
  agents: {
    list: [{ id: "main", workspace: "~/clawd" }],
  },
  hooks: {
    internal: {
      entries: {
        'oc-probe': { enabled: true }, // the probe
      },
    },
  },
}
"""

GATEWAY_JSON = """{
  "gateway": {
    "port": 18789
  },
  "hooks": {
    "internal": {
      "enabled": true,
      "entries": {
        "oc-probe": {
          "enabled": true
        }
      }
    }
  }
}
"""


@pytest.mark.parametrize("text", [HAND_WRITTEN, GATEWAY_JSON, "{}\n", "{\n}\n", ""])
def test_enable_then_restore_gives_back_the_same_text(text):
    config = json5.loads(text) if text else {}
    enabled = hooks_switched(config, NAMES, True)
    on = edit(text, changes(config, enabled), enabled)
    assert json5.loads(on) == enabled
    back, notes = restored(enabled, config, NAMES)
    off = edit(on, changes(enabled, back), back)
    assert (json5.loads(off) if off.strip() else {}) == config
    assert notes == []
    if text.strip() not in ("", "{}"):
        assert off == text  # symmetric: what install added is exactly what goes


def test_enable_keeps_comments_and_every_other_line():
    config = json5.loads(HAND_WRITTEN)
    enabled = hooks_switched(config, NAMES, True)
    text = edit(HAND_WRITTEN, changes(config, enabled), enabled)
    for line in HAND_WRITTEN.splitlines():
        assert line in text
    assert '        "memory-index-inject": {\n          "enabled": true\n        },\n' in text
    assert '      "enabled": true,\n' in text  # trailing commas, as its siblings have


def test_gateway_json_stays_json():
    config = json5.loads(GATEWAY_JSON)
    enabled = hooks_switched(config, NAMES, True)
    text = edit(GATEWAY_JSON, changes(config, enabled), enabled)
    import json

    assert json.loads(text) == enabled  # strict JSON: quoted keys, no trailing commas


@pytest.mark.parametrize(
    ("text", "path", "value", "expected"),
    [
        ('{"a": 1}', ["b"], 2, '{"a": 1, "b": 2}'),
        ("{a: 1,}", ["b"], 2, '{a: 1, "b": 2,}'),
        ('{"a": {"b": 1}}', ["a", "b"], [1, "x"], '{"a": {"b": [1,"x"]}}'),
        ('{"a": {}}', ["a", "c"], True, '{"a": {\n  "c": true\n}}'),
        ("{\n  a: 1 // one\n}", ["b"], None, '{\n  a: 1, // one\n  "b": null\n}'),
    ],
)
def test_set_member(text, path, value, expected):
    assert set_member(text, path, value) == expected


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ('{"a": 1, "b": 2}', ["b"], '{"a": 1}'),
        ('{"a": 1, "b": 2}', ["a"], '{"b": 2}'),
        ('{\n  "a": 1,\n  "b": 2\n}', ["b"], '{\n  "a": 1\n}'),
        ("{\n  a: 1,\n  b: 2, // two\n}", ["b"], "{\n  a: 1,\n}"),
        ('{\n  "a": {\n    "x": 1\n  },\n  "b": 2\n}', ["a"], '{\n  "b": 2\n}'),
        ('{"a": 1}', ["missing"], '{"a": 1}'),
        ('{"a": 1}', ["a", "deeper"], '{"a": 1}'),
    ],
)
def test_remove_member(text, path, expected):
    assert remove_member(text, path) == expected


def test_strings_and_comments_with_braces_do_not_confuse_it():
    text = '{\n  "a": "} { ,",\n  /* } */ \'b\': "x\\"y", // {\n  "c": 1\n}'
    assert json5.loads(remove_member(text, ["b"])) == {"a": "} { ,", "c": 1}
    assert json5.loads(set_member(text, ["d"], 4))["d"] == 4


@pytest.mark.parametrize("text", ["[1, 2]", "{ a: ", "{ a: 1 } trailing", '{"a": "open'])
def test_not_an_editable_object_is_an_error(text):
    with pytest.raises(ConfigEditError):
        set_member(text, ["b"], 1)


def test_path_through_a_value_that_is_not_an_object_is_an_error():
    with pytest.raises(ConfigEditError, match="hooks is not an object"):
        set_member('{"hooks": true}', ["hooks", "internal"], {})


def test_edit_refuses_a_result_that_does_not_mean_the_expected_config():
    with pytest.raises(ConfigEditError, match="expected config"):
        edit('{"a": 1}', [(("b",), 2)], {"a": 1, "b": 3})


def test_changes_are_minimal_and_delete_what_goes():
    before = {"a": 1, "hooks": {"internal": {"entries": {"x": {"enabled": True}}}}}
    after = {"a": 1, "hooks": {"internal": {"entries": {}}}}
    assert changes(before, after) == [(("hooks", "internal", "entries", "x"), DELETE)]
