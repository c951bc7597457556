"""Minimal in-place edits of a JSON5 config (gateway_hooks.json5_text): the rest of the text
stays byte for byte."""

from __future__ import annotations

import json5
import pytest

from memwarden.gateway_hooks.json5_text import MISSING, ConfigEditError, changes, edit
from memwarden.gateway_hooks.selection import restored, selected

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
    enabled = selected(config, NAMES)
    on = edit(text, config, enabled)
    assert json5.loads(on) == enabled
    back, notes = restored(enabled, config, NAMES)
    off = edit(on, enabled, back)
    assert (json5.loads(off) if off.strip() else {}) == config
    assert notes == []
    if text.strip() not in ("", "{}"):
        assert off == text  # symmetric: what install added is exactly what goes


def test_enable_keeps_comments_and_every_other_line():
    config = json5.loads(HAND_WRITTEN)
    enabled = selected(config, NAMES)
    text = edit(HAND_WRITTEN, config, enabled)
    for line in HAND_WRITTEN.splitlines():
        assert line in text
    # its own lines, indented and with a trailing comma as its siblings have
    assert '        "memory-index-inject": {\n          "enabled": true\n        },\n' in text
    assert '        "session-summary": {\n          "enabled": true\n        },\n' in text
    assert "enabled" not in json5.loads(text)["hooks"]["internal"]  # no master switch added


def test_gateway_json_stays_json():
    config = json5.loads(GATEWAY_JSON)
    enabled = selected(config, NAMES)
    text = edit(GATEWAY_JSON, config, enabled)
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
        ('{"a": true}', ["a"], {"x": 1}, '{"a": {\n  "x": 1\n}}'),
        ("{\n  a: 1, // one\n}", ["a"], 1, "{\n  a: 1, // one\n}"),
    ],
)
def test_set_a_member(text, path, value, expected):
    after = json5.loads(text)
    parent = after
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    assert edit(text, json5.loads(text), after) == expected


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ('{"a": 1, "b": 2}', ["b"], '{"a": 1}'),
        ('{"a": 1, "b": 2}', ["a"], '{"b": 2}'),
        ('{\n  "a": 1,\n  "b": 2\n}', ["b"], '{\n  "a": 1\n}'),
        ("{\n  a: 1,\n  b: 2, // two\n}", ["b"], "{\n  a: 1,\n}"),
        ('{\n  "a": {\n    "x": 1\n  },\n  "b": 2\n}', ["a"], '{\n  "b": 2\n}'),
        ('{"a": {"x": 1, "y": 2}}', ["a", "y"], '{"a": {"x": 1}}'),
    ],
)
def test_remove_a_member(text, path, expected):
    after = json5.loads(text)
    parent = after
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    assert edit(text, json5.loads(text), after) == expected


def test_strings_and_comments_with_braces_do_not_confuse_it():
    text = '{\n  "a": "} { ,",\n  /* } */ \'b\': "x\\"y", // {\n  "c": 1\n}'
    config = json5.loads(text)
    assert json5.loads(edit(text, config, {"a": "} { ,", "c": 1})) == {"a": "} { ,", "c": 1}
    assert json5.loads(edit(text, config, {**config, "d": 4}))["d"] == 4


@pytest.mark.parametrize("text", ["[1, 2]", "{ a: ", "{ a: 1 } trailing", '{"a": "open'])
def test_not_one_json5_object_is_an_error(text):
    with pytest.raises(ConfigEditError):
        edit(text, {}, {"b": 1})


def test_edit_refuses_a_text_that_does_not_hold_the_config_it_was_told():
    with pytest.raises(ConfigEditError, match="does not hold the config"):
        edit('{"a": 1}', {"a": 2}, {"a": 2, "b": 3})


def test_edit_refuses_a_result_that_does_not_mean_the_expected_config():
    with pytest.raises(ConfigEditError, match="expected config"):
        edit('{"a": 1, "a": 2}', {"a": 2}, {})  # a duplicate key: the first one would stay


def test_changes_are_minimal_and_delete_what_goes():
    before = {"a": 1, "hooks": {"internal": {"entries": {"x": {"enabled": True}}}}}
    after = {"a": 1, "hooks": {"internal": {"entries": {}}}}
    assert changes(before, after) == [(("hooks", "internal", "entries", "x"), MISSING)]
