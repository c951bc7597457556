"""Stand-ins for the schedulers' commands, for tests that install timers on this machine."""

from __future__ import annotations

from pathlib import Path

# A crontab that keeps the table in $STUB_CRONTAB, as the real one keeps it in the spool.
CRONTAB = """#!/bin/sh
case "$1" in
  -l) [ -f "$STUB_CRONTAB" ] || { echo "no crontab for $USER" >&2; exit 1; }; cat "$STUB_CRONTAB" ;;
  -) cat > "$STUB_CRONTAB" ;;
esac
"""


def crontab_stub(folder: Path) -> dict[str, str]:
    """Write the stub `crontab` into `folder`; return the variables that make it the one used
    (PATH, and STUB_CRONTAB: the table, `<folder>/crontab.txt`)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "crontab"
    script.write_text(CRONTAB)
    script.chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin", "STUB_CRONTAB": str(folder / "crontab.txt")}
