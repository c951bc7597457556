"""One gateway, one state: two gateways on one host, both with an agent `main`, through the CLI.

The first gateway memwarden writes for owns the storage root (so a root from before per-gateway
storage keeps working where it is); the other gets `<root>/gateways/<name>-<hash>/`. Listings
and bytes are compared before and after.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import orjson
import pytest

from memwarden.history.git import blob_sha
from memwarden.store.storage import claim, folder_name, locate
from support.cli import run_cli
from support.deployments import make_sqlite_era_state


def digest(root: Path) -> dict[str, str]:
    """Every file under `root` with its SHA-256, and every folder, by relative path."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = str(path.relative_to(root))
        found[relative] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def gateways(tmp_path):
    """Two gateways on one host, each with an agent `main` and its own memory."""
    states = []
    for name in ("alpha", "beta"):
        state = make_sqlite_era_state(tmp_path / name)
        memory = state.workspace / "memory"
        memory.mkdir()
        (memory / "MEMORY.md").write_text(f"# {name}\n\n[FACT] only {name} knows this\n")
        states.append(state)
    return states


@pytest.fixture
def root(isolated_env) -> Path:
    return isolated_env / ".local" / "state" / "memwarden"


def memwarden(capsys, state, *arguments: str):
    result = run_cli(capsys, "--state-dir", state.state_dir, *arguments)
    assert result.exit_code in (0, 1), result.stderr
    return result


def snapshot_ids(capsys, state) -> list[str]:
    listing = memwarden(capsys, state, "history", "list", "--json").json()
    return [snapshot["id"] for snapshot in listing["snapshots"]]


def test_two_gateways_with_agent_main_never_share_positions_history_or_runs(
    capsys, gateways, root, fixture_clock
):
    alpha, beta = gateways
    memwarden(capsys, alpha, "checkpoint")
    memwarden(capsys, alpha, "history", "snapshot")
    alpha_snapshots = snapshot_ids(capsys, alpha)
    before = digest(root)
    assert orjson.loads((root / "gateway.json").read_bytes())["state_dir"] == os.path.realpath(
        alpha.state_dir
    )

    memwarden(capsys, beta, "checkpoint")
    memwarden(capsys, beta, "history", "snapshot")

    after = digest(root)
    beta_dir = root / "gateways" / folder_name(os.path.realpath(beta.state_dir))
    assert {path: sha for path, sha in after.items() if not path.startswith("gateways")} == before
    assert (beta_dir / "state.db").is_file()
    assert (beta_dir / "history" / "snapshots.git").is_dir()
    beta_snapshots = snapshot_ids(capsys, beta)
    assert len(alpha_snapshots) == len(beta_snapshots) == 1
    assert snapshot_ids(capsys, alpha) == alpha_snapshots  # alpha lists only its own
    assert set(alpha_snapshots).isdisjoint(beta_snapshots)
    for state, snapshots in ((alpha, alpha_snapshots), (beta, beta_snapshots)):
        shown = memwarden(capsys, state, "history", "show", snapshots[0], "--json").json()
        blobs = {entry["path"]: entry["blob"] for entry in shown["file_list"]}
        memory = (state.workspace / "memory" / "MEMORY.md").read_bytes()
        assert blobs["memory/MEMORY.md"] == blob_sha(memory)  # its own agent main's memory

    for state, folder in ((alpha, root), (beta, beta_dir)):
        status = memwarden(capsys, state, "status", "--json").json()
        assert status["storage"]["storage_dir"] == str(folder)
        assert status["storage"]["gateway"] == os.path.realpath(state.state_dir)
        checkpoint = next(job for job in status["jobs"] if job["job"] == "checkpoint")
        assert checkpoint["outcome"] != "never run"
        text = memwarden(capsys, state, "status").stdout
        assert text.splitlines()[0] == (
            f"storage: {folder} (gateway {os.path.realpath(state.state_dir)})"
        )


def test_a_root_from_before_stays_with_the_first_gateway_after_upgrade_nothing_lost(
    capsys, gateways, root, fixture_clock
):
    alpha, beta = gateways
    memwarden(capsys, alpha, "checkpoint")
    memwarden(capsys, alpha, "history", "snapshot")
    earlier = snapshot_ids(capsys, alpha)
    (root / "gateway.json").unlink()  # the layout of a memwarden from before the upgrade
    legacy = digest(root)

    status = memwarden(capsys, alpha, "status")  # reading claims nothing
    assert f"storage: {root} (gateway {os.path.realpath(alpha.state_dir)}) (not claimed yet)" in (
        status.stdout
    )
    assert digest(root) == legacy

    memwarden(capsys, alpha, "checkpoint")  # the first job after the upgrade

    now = digest(root)
    assert set(legacy) <= set(now)  # nothing moved, nothing lost
    assert legacy["history/snapshots.git"] == "dir"
    assert snapshot_ids(capsys, alpha) == earlier
    runs = memwarden(capsys, alpha, "events", "--json").json()
    assert runs  # the earlier timeline is still read from the same state.db
    assert orjson.loads((root / "gateway.json").read_bytes())["state_dir"] == os.path.realpath(
        alpha.state_dir
    )
    memwarden(capsys, beta, "checkpoint")
    assert (root / "gateways" / folder_name(os.path.realpath(beta.state_dir))).is_dir()
    assert set(snapshot_ids(capsys, beta)).isdisjoint(earlier)
    assert snapshot_ids(capsys, alpha) == earlier


def test_dry_runs_and_read_only_commands_claim_nothing(capsys, gateways, root):
    alpha, _beta = gateways
    for arguments in (("status",), ("checkpoint", "--dry-run"), ("doctor", "--skip-gateway")):
        run_cli(capsys, "--state-dir", alpha.state_dir, *arguments)
    assert not (root / "gateway.json").exists()


def test_a_gateway_that_does_not_exist_claims_nothing(capsys, tmp_path, root):
    missing = tmp_path / "no-such-gateway"
    run_cli(capsys, "--state-dir", missing, "history", "list")
    assert not (root / "gateway.json").exists()


def test_doctor_names_the_storage_and_a_root_left_to_a_gateway_that_moved(
    capsys, gateways, root, tmp_path
):
    _alpha, beta = gateways
    root.mkdir(parents=True)
    gone = tmp_path / "moved-away"
    (root / "gateway.json").write_text(orjson.dumps({"state_dir": str(gone)}).decode())

    result = run_cli(capsys, "--state-dir", beta.state_dir, "doctor", "--skip-gateway", "--json")

    findings = {finding["key"]: finding for finding in result.json()["findings"]}
    beta_dir = root / "gateways" / folder_name(os.path.realpath(beta.state_dir))
    assert findings["storage"]["message"].endswith(
        f"{beta_dir} (gateway {os.path.realpath(beta.state_dir)})"
    )
    moved = findings["storage.owner"]
    assert moved["severity"] == "warning"
    assert f"belongs to the gateway at {gone}, which no longer exists" in moved["message"]
    assert moved["fix"].endswith(f"> {root / 'gateway.json'}")


def test_an_unreadable_owner_record_is_a_config_error_naming_it(capsys, gateways, root):
    alpha, _beta = gateways
    root.mkdir(parents=True)
    (root / "gateway.json").write_text("{broken")
    result = run_cli(capsys, "--state-dir", alpha.state_dir, "status")
    assert result.exit_code == 2
    assert f"{root / 'gateway.json'}: not a record of the gateway" in result.stderr


def test_claim_lost_to_another_gateway_gives_this_one_its_own_folder(gateways, root):
    alpha, beta = gateways
    seen_by_beta = locate(root, beta.state_dir)  # nobody owns the root yet
    assert seen_by_beta.path == root and seen_by_beta.owner is None
    assert claim(locate(root, alpha.state_dir)).path == root  # alpha claims first

    claimed = claim(seen_by_beta)

    assert claimed.owner == os.path.realpath(alpha.state_dir)
    assert claimed.path == root / "gateways" / folder_name(os.path.realpath(beta.state_dir))
    assert stat.S_IMODE((root / "gateway.json").stat().st_mode) == 0o600


def test_folder_names_are_readable_and_distinct():
    assert folder_name("/home/alice/.openclaw").startswith("openclaw-")
    assert folder_name("/srv/Gate Way!").startswith("gate-way-")
    assert folder_name("/").startswith("gateway-")
    assert folder_name("/a/.openclaw") != folder_name("/b/.openclaw")
