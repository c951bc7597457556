"""Stand-ins for the schedulers' commands (systemctl, launchctl, crontab) on PATH.

Each is a small shell script that records its arguments in `calls.log`; `crontab` also keeps
the crontab in a file, as the real one does (`-l`, `-r`, `-` for stdin). A call whose arguments
are `$STUB_FAIL` fails (exit 1), saying `$STUB_FAIL_OUTPUT` ("stub failure" when unset) on stderr.

    stubs = install_stubs(tmp_path / "stubs")
    env = {**os.environ, **stubs.env()}
"""

from __future__ import annotations

import os
from pathlib import Path

RECORDER = """#!/bin/sh
echo "$(basename "$0") $*" >> "$STUB_LOG"
if [ -n "${STUB_FAIL:-}" ] && [ "$*" = "$STUB_FAIL" ]; then
  echo "${STUB_FAIL_OUTPUT:-stub failure}" >&2; exit 1
fi
"""
CRONTAB = """#!/bin/sh
echo "crontab $*" >> "$STUB_LOG"
if [ -n "${STUB_FAIL:-}" ] && [ "$*" = "$STUB_FAIL" ]; then
  echo "${STUB_FAIL_OUTPUT:-stub failure}" >&2; exit 1
fi
case "$1" in
  -l) [ -f "$STUB_CRONTAB" ] || { echo "no crontab for $USER" >&2; exit 1; }
      cat "$STUB_CRONTAB" ;;
  -r) [ -f "$STUB_CRONTAB" ] || { echo "no crontab for $USER" >&2; exit 1; }
      rm -f "$STUB_CRONTAB" ;;
  -) cat > "$STUB_CRONTAB" ;;
esac
"""


class Stubs:
    """The stub folder, the log of the calls, and the crontab file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "calls.log"
        self.crontab = folder / "crontab.txt"

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def env(self, path: str = "/usr/bin:/bin") -> dict[str, str]:
        """The variables that put the stubs first on PATH and tell them where to record."""
        return {
            "PATH": f"{self.folder}{os.pathsep}{path}",
            "STUB_LOG": str(self.log),
            "STUB_CRONTAB": str(self.crontab),
        }

    def cron_command(self, job: str) -> str:
        """Return the command of the installed crontab line that runs `job` (what cron runs)."""
        for line in self.crontab.read_text().splitlines():
            if line and not line.startswith("#") and f" {job} >>" in line:
                return line.split(None, 5)[5]
        raise AssertionError(f"no crontab line for {job}:\n{self.crontab.read_text()}")


def install_stubs(folder: Path) -> Stubs:
    """Write the three stubs into `folder` (created) and return them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("systemctl", "launchctl"):
        (folder / name).write_text(RECORDER)
    (folder / "crontab").write_text(CRONTAB)
    for script in folder.iterdir():
        script.chmod(0o755)
    return Stubs(folder)


def crontab_stub(folder: Path) -> dict[str, str]:
    """Write the stubs into `folder`; return the variables that make them the ones used (PATH,
    STUB_LOG, and STUB_CRONTAB: the table, `<folder>/crontab.txt`)."""
    return install_stubs(folder).env()
