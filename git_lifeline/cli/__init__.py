"""The command line face: `git lifeline <command>`.

`run` is the installed entry point (and `python -m git_lifeline`'s): the warm `context`
is answered by fast.py without importing click or pygit2; everything else, and whatever
fast.py does not answer, goes to the click group (main.py)."""

import sys


def run() -> None:
    import signal

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly, like git
    from .fast import answer

    code = answer(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from .main import run as run_click

    run_click()
