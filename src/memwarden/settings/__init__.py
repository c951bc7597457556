"""The schema of memwarden's settings: every option with its type, default and description.

One module per section keeps each job's options beside the others without one long file; this
package gathers them. `memwarden config example` and `memwarden config docs` render the
example config and the docs table from it, and a test keeps both in sync. Beside the schema:
`config` loads the settings from their sources, `envfile` reads the secrets file, `urls` judges
and shows the URLs the settings hold.
"""

from __future__ import annotations

from memwarden.settings import (
    alertmanager,
    checkpoint,
    gateway,
    general,
    health,
    history,
    index,
    install,
    maintain,
    rotate,
    schedule,
    slack,
)
from memwarden.settings.option import Option

_MODULES = (
    general,
    gateway,
    checkpoint,
    rotate,
    index,
    health,
    slack,
    alertmanager,
    maintain,
    history,
    schedule,
    install,
)

# A section is named by its options' keys (`section.name`).
SECTIONS: dict[str, str] = {module.OPTIONS[0].section: module.DESCRIPTION for module in _MODULES}
ALL_OPTIONS: tuple[Option, ...] = tuple(option for module in _MODULES for option in module.OPTIONS)

__all__ = ["ALL_OPTIONS", "SECTIONS", "Option"]
