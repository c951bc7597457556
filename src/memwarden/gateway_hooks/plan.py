"""Where one `install hooks` or `uninstall hooks` works, and what it has to say."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memwarden.openclaw.gateway_settings import managed_hooks_dir


@dataclass
class HooksPlan:
    state_dir: Path
    config_path: Path
    storage_dir: Path
    now: datetime
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def hooks_dir(self) -> Path:
        return managed_hooks_dir(self.state_dir)
