"""The pager, chosen and started the way git does it (git's pager.c).

The command: GIT_PAGER, else git config core.pager, else PAGER, else `less`; `cat` or
an empty command means no pager. It runs through the shell with LESS=FRX and LV=-c
unless they are set (quit when the text fits one screen, keep colours, leave the
screen as it was), and with GIT_PAGER_IN_USE set so that no git (or git-lifeline)
below it pages again.
"""

from __future__ import annotations

import os
import subprocess
from typing import Callable, Optional


def pager_command(config: Optional[Callable[[str], Optional[str]]]) -> Optional[str]:
    """The pager git would run, or None for none."""
    command = (
        os.environ.get("GIT_PAGER")
        or (config("core.pager") if config is not None else None)
        or os.environ.get("PAGER")
        or "less"
    )
    command = command.strip()
    return None if not command or command == "cat" else command


def spawn(command: str) -> Optional[subprocess.Popen]:
    """Start the pager reading a pipe (its stdin); None when it cannot start."""
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    env["GIT_PAGER_IN_USE"] = "true"
    try:
        return subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return None  # git too goes on without a pager it cannot start
