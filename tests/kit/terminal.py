"""The CLI on a real pseudo-terminal, as a human at a terminal runs it (the pager, colour,
progress bars and escaping all depend on it)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from kit.run import ROOT, TIMEOUT


def on_a_terminal(repo: Path, *args: str, env: Mapping[str, str], stdout_piped: bool = False) -> tuple[int, str]:
    """Run the CLI with its stdin, stdout and stderr on a pseudo-terminal (stdout on a pipe
    instead with `stdout_piped`); (exit code, what the terminal showed)."""
    full = {k: v for k, v in os.environ.items() if k not in ("PAGER", "GIT_PAGER", "GIT_PAGER_IN_USE", "LESS", "LV")}
    full["PYTHONPATH"] = str(ROOT)
    full["TERM"] = "xterm"
    full.update(env)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "git_lifeline", *args],
        cwd=str(repo),
        stdin=slave,
        stdout=subprocess.DEVNULL if stdout_piped else slave,
        stderr=slave,
        env=full,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    code = proc.wait(timeout=TIMEOUT)
    os.close(master)
    return code, shown.decode("utf-8", "replace")
