"""Starting the programs a setup names, to check that they start.

`init` and `doctor` write or read the command an MCP client (or an agent's hook) will run;
the only honest check that it works is to run it. Here alone, beside the git door, a
program other than git is started with captured output and a time limit.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Optional

PROBE_SECONDS = 60
_OUTPUT_CHARS = 2000


@dataclass(frozen=True)
class Probe:
    ok: bool
    code: Optional[int]  # None: it could not be started or did not finish in time
    output: str  # what it printed (stderr after stdout), trimmed


def probe(
    argv: list[str], cwd: Optional[str] = None, drop_env: tuple[str, ...] = (), timeout: float = PROBE_SECONDS
) -> Probe:
    """Run `argv` with no input; ok when it exits 0. `drop_env` names variables to leave out
    (the ones a client would not pass on, such as PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except FileNotFoundError:
        return Probe(False, None, f"{argv[0]}: not found")
    except PermissionError:
        return Probe(False, None, f"{argv[0]}: not executable")
    except subprocess.TimeoutExpired:
        return Probe(False, None, f"did not finish within {timeout:.0f} s")
    except OSError as exc:
        return Probe(False, None, f"{argv[0]}: {exc.strerror or exc}")
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    return Probe(proc.returncode == 0, proc.returncode, text[-_OUTPUT_CHARS:])
