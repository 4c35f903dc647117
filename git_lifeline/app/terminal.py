"""Whether and with what to page a command's output, by git's rules (git/pager.py).

`pager.lifeline` in git config: false never pages, a command pages through that
command, true pages. Otherwise the listing commands page and the others do not. Only a
terminal is paged, and never when git already pages us (GIT_PAGER_IN_USE: `git -p
lifeline ...`, or `pager.lifeline` read by git's own dispatch).
"""

from __future__ import annotations

import os
from typing import Callable, Optional

from ..git.pager import pager_command, spawn

# Handed to the faces, which may import only app/ (tests/test_layers.py): the pager's spawn, for cli/terminal.py.
__all__ = ["spawn"]

ConfigReader = Callable[[str], Optional[str]]  # a git config key -> its value, or None

_FALSE = ("false", "no", "off", "0")
_TRUE = ("true", "yes", "on", "1", "")


def choose_pager(config: Optional[ConfigReader], listing: bool, paginate: bool, to_terminal: bool) -> Optional[str]:
    """The pager command to run for this output, or None."""
    if not to_terminal or os.environ.get("GIT_PAGER_IN_USE"):
        return None
    setting = config("pager.lifeline") if config is not None else None
    if setting is not None:
        flag = setting.strip().lower()
        if flag in _FALSE:
            return None
        if flag not in _TRUE:
            return setting.strip()
        listing = True
    if not (listing or paginate):
        return None
    return pager_command(config)
