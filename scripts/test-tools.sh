#!/bin/sh
# Install the Debian packages whose programs some tests run for real, when they are missing:
#   systemd-analyze (package `systemd`): verify the rendered units and rate their hardening;
#   promtool (`prometheus`) and Alertmanager (`prometheus-alertmanager`): metrics, rules, alerts;
#   zsh and fish: the shell completion scripts load and complete.
# Called by `make test` and `make e2e`.
#
# - All present: returns at once.
# - Missing, running as root with apt-get (CI on a fresh Debian/Ubuntu machine): installs them
#   without recommended packages. Nothing here starts a service.
# - Missing otherwise (not root, no apt-get): says so and returns 0; the tests that need the
#   tools skip with the same reason, unless MEMWARDEN_TEST_REQUIRE_TOOLS=1 (.ci/run sets it),
#   which makes them fail instead.
set -eu

# command:package, one pair per program the tests run
TOOLS="systemd-analyze:systemd promtool:prometheus prometheus-alertmanager:prometheus-alertmanager zsh:zsh fish:fish"

missing_packages() {
    for pair in $TOOLS; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || printf '%s ' "${pair#*:}"
    done
}

PACKAGES=$(missing_packages)
[ -n "$PACKAGES" ] || exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "test-tools: missing $PACKAGES and cannot install them here (needs root and apt-get):" \
        "the tests that run them will skip. Install with:" \
        "sudo apt-get install --no-install-recommends $PACKAGES" >&2
    exit 0
fi

install_packages() {
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
        --no-install-recommends $PACKAGES >/dev/null
}

echo "test-tools: installing $PACKAGES(apt-get)" >&2
if ! install_packages; then
    # A fresh machine may not have the package lists yet.
    apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null
    install_packages
fi
[ -z "$(missing_packages)" ]
