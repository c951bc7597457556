"""Doctor's check of each agent's workspace."""

from __future__ import annotations

from memwarden.doctor.workspaces import WorkspaceFacts, check_workspace

CONFIG = "/h/.openclaw/openclaw.json"


def facts(**changes) -> WorkspaceFacts:
    values = dict(agent_id="main", workspace="/h/ws", refused=None, exists=True, writable=True)
    return WorkspaceFacts(**(values | changes))


def test_a_usable_workspace_is_ok():
    finding = check_workspace(CONFIG, facts())
    assert (finding.key, finding.severity) == ("workspace.main", "ok")


def test_a_refused_workspace_needs_action_with_the_reason_and_the_config_to_edit():
    why = 'agent rel: workspace "ws/rel" is a relative path'
    finding = check_workspace(CONFIG, facts(agent_id="rel", refused=why, exists=False))
    assert (finding.key, finding.severity, finding.message) == ("workspace.rel", "action", why)
    assert CONFIG in finding.fix


def test_a_missing_or_read_only_workspace_needs_action():
    gone = check_workspace(CONFIG, facts(exists=False, writable=False))
    assert gone.severity == "action" and "does not exist" in gone.message
    locked = check_workspace(CONFIG, facts(writable=False))
    assert locked.severity == "action" and "cannot write" in locked.message
