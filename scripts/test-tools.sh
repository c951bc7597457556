#!/bin/sh
# Install the Debian packages some tests run for real: promtool (package `prometheus`) and
# Alertmanager (package `prometheus-alertmanager`). Called by `make test` and `make e2e`.
#
# - Both present: returns at once.
# - Missing, running as root with apt-get (CI on a fresh Debian/Ubuntu machine): installs them
#   without recommended packages. Services are not started where policy-rc.d forbids it
#   (containers); nothing here starts them.
# - Missing otherwise (not root, no apt-get): says so and returns 0; the tests that need the
#   tools skip with the same reason, unless MEMWARDEN_TEST_REQUIRE_TOOLS=1 (.ci/run sets it),
#   which makes them fail instead.
set -eu

have_tools() {
    command -v promtool >/dev/null 2>&1 &&
        { command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1; }
}

if have_tools; then
    exit 0
fi

PACKAGES="prometheus prometheus-alertmanager"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "test-tools: promtool or alertmanager missing and cannot install them here (needs root" \
        "and apt-get): the tests that run them will skip. Install with:" \
        "sudo apt-get install --no-install-recommends $PACKAGES" >&2
    exit 0
fi

install_packages() {
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
        --no-install-recommends $PACKAGES >/dev/null
}

echo "test-tools: installing $PACKAGES (apt-get)" >&2
if ! install_packages; then
    # A fresh machine may not have the package lists yet.
    apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
    install_packages
fi
have_tools
