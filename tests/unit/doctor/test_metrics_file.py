"""Doctor's check that node_exporter can read the metrics textfile."""

from __future__ import annotations

from memwarden.doctor.metrics_file import check_metrics_file

PATH = "/var/lib/node_exporter/textfile/memwarden.prom"


def test_no_metrics_file_is_information_with_the_setting_to_add():
    finding = check_metrics_file("", "0600", None)
    assert (finding.severity, finding.fix) == (
        "info",
        'health.metrics_file = "/var/lib/node_exporter/textfile/memwarden.prom"',
    )


def test_private_file_in_another_users_folder_warns_with_the_mode_to_set():
    finding = check_metrics_file(PATH, "0600", folder_owned_by_me=False)
    assert finding.severity == "warning"
    assert "cannot read it" in finding.message
    assert finding.fix.startswith('health.metrics_file_mode = "0644"')


def test_readable_file_or_own_folder_is_ok():
    assert check_metrics_file(PATH, "0644", folder_owned_by_me=False).severity == "ok"
    assert check_metrics_file(PATH, "0600", True, exporter_is_me=True).severity == "ok"


def test_missing_folder_warns():
    assert check_metrics_file(PATH, "0644", folder_owned_by_me=None).severity == "warning"


def test_a_private_file_and_a_node_exporter_of_another_user_is_a_warning():
    finding = check_metrics_file(PATH, "0600", folder_owned_by_me=True, exporter_is_me=False)
    assert finding.severity == "warning"
    assert "runs here as another user" in finding.message
    assert finding.fix.startswith('health.metrics_file_mode = "0644"')


def test_a_private_file_with_no_node_exporter_seen_says_who_could_not_read_it():
    finding = check_metrics_file(PATH, "0600", folder_owned_by_me=True, exporter_is_me=None)
    assert finding.severity == "info"
    assert "another user" in finding.message
    assert check_metrics_file(PATH, "0644", True, exporter_is_me=None).severity == "ok"


def test_a_file_node_exporter_ignores_for_its_name_is_a_warning_with_the_name_to_use():
    finding = check_metrics_file("/var/lib/node_exporter/textfile/memwarden.txt", "0644", True)
    assert finding.severity == "warning"
    assert "reads only *.prom files: it ignores this one" in finding.message
    assert finding.fix == 'health.metrics_file = "/var/lib/node_exporter/textfile/memwarden.prom"'


def test_group_readable_file_without_node_exporters_group_is_a_warning_with_the_group_step():
    finding = check_metrics_file(
        PATH, "0640", True, False, "group alice (your group: the folder has no setgid bit)", False
    )
    assert finding.severity == "warning"
    assert "0640 with group alice (your group: the folder has no setgid bit)" in finding.message
    assert "outside that group: it cannot read it" in finding.message
    assert "chmod 2775 /var/lib/node_exporter/textfile" in finding.fix
    readable = check_metrics_file(PATH, "0640", True, False, "group prometheus", True)
    assert readable.severity == "ok"
    unknown = check_metrics_file(PATH, "0640", True, None, "group alice (your group)", None)
    assert unknown.severity == "info"
    assert "must be in that group" in unknown.message
