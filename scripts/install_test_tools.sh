#!/bin/sh
# Installs what some tests need and a fresh machine may lack: `systemd-analyze` (Debian package
# `systemd`), with which the tests verify the rendered units and rate their hardening.
# As root with apt-get (as on CI) it installs it; otherwise it says how, and those tests skip.
set -eu
if command -v systemd-analyze >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing systemd-analyze (apt-get install systemd) for the unit tests"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends systemd >/dev/null
else
	echo "note: systemd-analyze is missing, so the checks of the rendered systemd units skip;" \
		"install it with: sudo apt-get install systemd" >&2
fi
