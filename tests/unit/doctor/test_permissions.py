"""Doctor's check of the modes of secrets, state, memory folders and installed scripts."""

from __future__ import annotations

import stat

import pytest

from memwarden.doctor.permissions import PathFacts, check_permission


def judge(mode: int, kind: str, is_dir: bool = False):
    kind_bits = stat.S_IFDIR if is_dir else stat.S_IFREG
    return check_permission(PathFacts("k", "thing", "/p", kind_bits | mode, kind))


@pytest.mark.parametrize("kind", ["secret", "private"])
def test_private_modes_are_ok(kind):
    assert judge(0o600, kind).severity == "ok"
    assert judge(0o700, kind, is_dir=True).severity == "ok"


def test_secret_file_readable_by_others_needs_chmod_600():
    finding = judge(0o644, "secret")
    assert (finding.severity, finding.fix) == ("action", "chmod 600 /p")


def test_readable_secret_folder_only_warns():
    finding = judge(0o755, "secret", is_dir=True)
    assert (finding.severity, finding.fix) == ("warning", "chmod 700 /p")


def test_memory_folder_readable_by_others_warns():
    assert judge(0o755, "private", is_dir=True).severity == "warning"


def test_anything_writable_by_others_needs_action():
    assert judge(0o666, "private").severity == "action"
    finding = judge(0o775, "code")
    assert (finding.severity, finding.fix) == ("action", "chmod go-w /p")


def test_readable_code_is_fine():
    assert judge(0o755, "code").severity == "ok"


def test_unreadable_path_is_a_warning_of_its_own_and_the_others_are_still_judged():
    facts = [
        PathFacts("a", "memory folder of a", "/a", 0, "private", "/a: not a directory"),
        PathFacts("b", "memory folder of b", "/b", stat.S_IFDIR | 0o755, "private"),
    ]
    unreadable, judged = [check_permission(fact) for fact in facts]
    assert (unreadable.key, unreadable.severity) == ("a", "warning")
    assert (
        unreadable.message == "could not check the mode of memory folder of a: /a: not a directory"
    )
    assert (judged.severity, judged.fix) == ("warning", "chmod 700 /b")
