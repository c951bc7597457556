"""Fixtures for the end-to-end tests against the real OpenClaw gateway (`make e2e`).

Everything under tests/e2e is marked `e2e` (deselected by the default `-m 'not e2e'`) and gets a
15-minute timeout (the first test of a version may include the npm install). The fixtures are
parametrised over both storage eras, `2026.9.6` (SQLite) and `2026.7.35` (files):

- `openclaw_version`: the version string (session scope, parametrised);
- `openclaw_bin`: the installed `openclaw` (both versions are installed together, in parallel, on
  first use; skips only when the npm registry is unreachable, any other install error fails);
- `gateway`: one running `Gateway` per version for the whole session, shared by the tests (use
  your own session keys; do not assume an empty store);
- `gateway_factory`: `make(**options) -> Gateway` for a private, started gateway of the same
  version (own state, ports and fake model), closed at the end of the test.

When a test fails, the tail of the logs of every gateway it used is added to its report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import (
    OPENCLAW_VERSIONS,
    E2EError,
    Gateway,
    RegistryUnreachable,
    cache_root,
    ensure_openclaw,
    ensure_openclaw_all,
)

E2E_DIR = Path(__file__).parent
E2E_TIMEOUT_SECONDS = 900


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/e2e `e2e` (before `-m` deselects) and give it a long timeout."""
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_SECONDS))


def pytest_report_header(config: pytest.Config) -> str:
    return f"memwarden e2e: openclaw {', '.join(OPENCLAW_VERSIONS)}; cache {cache_root()}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        gateways: list[Gateway] = []
        for value in funcargs.values():
            if isinstance(value, Gateway):
                gateways.append(value)
            gateways.extend(getattr(value, "gateways", []))
        for gateway in dict.fromkeys(gateways):
            report.sections.append(
                (f"openclaw {gateway.version} logs ({gateway.root})", gateway.log_tail())
            )
    return report


@pytest.fixture(scope="session", params=OPENCLAW_VERSIONS)
def openclaw_version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def openclaw_installs() -> dict[str, Path | E2EError]:
    """Both versions installed at once (in parallel when the cache is cold)."""
    return ensure_openclaw_all(OPENCLAW_VERSIONS)


@pytest.fixture(scope="session")
def openclaw_bin(openclaw_version: str, openclaw_installs: dict[str, Path | E2EError]) -> Path:
    installed = openclaw_installs.get(openclaw_version)
    if installed is None:  # a version outside OPENCLAW_VERSIONS
        try:
            installed = ensure_openclaw(openclaw_version)
        except E2EError as exc:
            installed = exc
    if isinstance(installed, RegistryUnreachable):
        pytest.skip(f"openclaw {openclaw_version} not installed: {installed}")
    if isinstance(installed, E2EError):
        raise installed
    return installed


@pytest.fixture(scope="session")
def gateway(
    openclaw_version: str, openclaw_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    root = tmp_path_factory.mktemp(f"gw-{openclaw_version}")
    with Gateway(openclaw_version, root) as running:
        yield running


class GatewayFactory:
    """Starts private gateways for one test and closes them all afterwards."""

    def __init__(self, version: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.version = version
        self.tmp_path_factory = tmp_path_factory
        self.gateways: list[Gateway] = []

    def __call__(self, *, start: bool = True, **options: Any) -> Gateway:
        root = self.tmp_path_factory.mktemp(f"gw-{self.version}-private")
        gateway = Gateway(self.version, root, **options)
        self.gateways.append(gateway)
        return gateway.start() if start else gateway

    def close(self) -> None:
        for gateway in reversed(self.gateways):
            gateway.close()


@pytest.fixture
def gateway_factory(
    openclaw_version: str, openclaw_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Gateway]]:
    factory = GatewayFactory(openclaw_version, tmp_path_factory)
    try:
        yield factory
    finally:
        factory.close()
