"""Error types shared by every layer; the faces turn them into messages and exit codes.

Exit codes are part of the CLI contract (documented in the man page):
0 ok, 1 integrity failure, 2 usage or input error, 3 internal error (a bug),
4 the repository itself failed (read-only, disk full, missing objects).
"""

from typing import Callable, Optional


# ---- how to install what is missing -------------------------------------------------------
# git-lifeline is on no package index: every hint the tool prints names a command that works
# from a checkout of it, on a stock Debian/Ubuntu Python too (whose pip refuses to install
# into the system: "externally-managed-environment"). The one place that text is written.
def install_hint(extra: str = "") -> str:
    """The commands that install git-lifeline (with `extra`) from a checkout of it."""
    target = f"'.[{extra}]'" if extra else "."
    return (
        f"from a checkout of git-lifeline: pipx install --force {target} "
        f"(or: uv tool install --force {target}; inside a venv: pip install {target})"
    )


class LifelineError(Exception):
    """A failure the user can act on; `exit_code` is what the CLI returns.

    Its message is one line or several, each given apart: `LifelineError(first, *more)`
    (never lines joined with "\\n": a terminal could no longer tell our line breaks from a
    hostile name's). A terminal shows each line on its own line, made visible on its own;
    `str()` is the exact text, the lines joined with "\\n" (JSON, MCP)."""

    exit_code = 2

    @property
    def message_lines(self) -> tuple[str, ...]:
        """The message, line by line (at least one)."""
        return tuple(str(line) for line in self.args) or ("",)

    def lines_after(self, head: str) -> list[str]:
        """The message's lines, `head` (ours: "git-lifeline: ") before the first."""
        first, *more = self.message_lines
        return [head + first, *more]

    def __str__(self) -> str:
        return "\n".join(self.message_lines)


class InputError(LifelineError):
    """Bad input: nothing was written."""


class SecretError(InputError):
    """New content holds what looks like a credential: refused before any object is written."""


class NotARepoError(LifelineError):
    """The working directory is not inside a usable git repository."""


class IntegrityError(LifelineError):
    """The ledger failed verification (tampered, rewritten or corrupt)."""

    exit_code = 1


class ConflictError(LifelineError):
    """A concurrent writer kept winning the compare-and-swap; nothing was lost."""


class DedupKeyConflict(LifelineError):
    """A new entry's dedup key is already held by an entry of other content: nothing was
    written (the key says "this happened once"; dropping the write silently would report
    an entry that is not in the line)."""

    exit_code = 1


class RepositoryError(LifelineError):
    """The repository could not be read or written as needed: a read-only or full disk,
    missing objects. Writes move the ref last, so a failed write left the line as it was."""

    exit_code = 4


# ---- the one error boundary -----------------------------------------------------
# Lower layers name the failures of the libraries they wrap (git/ knows pygit2's), and
# register that knowledge here, so this module imports nothing and still says it clearly.
# A lower layer's reading of a failure: the error to show, or None when it is not its kind.
Explainer = Callable[[BaseException], Optional["LifelineError"]]
_EXPLAINERS: list[Explainer] = []

INTERRUPTED = 130  # the shell's code for a process ended by Ctrl-C


def explain_with(explain: Explainer) -> Explainer:
    """Register `explain(exc) -> LifelineError | None`: a lower layer's reading of a failure
    that is not a LifelineError (a full disk, a missing object). Returns `explain`."""
    if explain not in _EXPLAINERS:
        _EXPLAINERS.append(explain)
    return explain


class InternalError(LifelineError):
    """A bug of ours: named with the failure's type so it can be reported."""

    exit_code = 3


class Interrupted(LifelineError):
    """Ctrl-C."""

    exit_code = INTERRUPTED


def as_failure(exc: BaseException) -> LifelineError:
    """Any failure as the LifelineError every face shows (its lines, its exit code).

    A LifelineError says itself; a failure a lower layer recognises becomes its clear
    error (exit 4 for the repository itself); anything else is a bug of ours (exit 3),
    named with its type so it can be reported, never as a traceback - in one line, its
    text's own line breaks included (they are not ours)."""
    if isinstance(exc, LifelineError):
        return exc
    if isinstance(exc, KeyboardInterrupt):
        return Interrupted("interrupted")
    for explain in _EXPLAINERS:
        known = explain(exc)
        if known is not None:
            return known
    return InternalError(f"internal error: {type(exc).__name__}: {exc}")


def describe_failure(exc: BaseException) -> tuple[str, int]:
    """(the readable message, exit code) for any failure (as_failure): the exact text,
    its lines joined with "\\n", for a face that shows no terminal (MCP)."""
    failure = as_failure(exc)
    return str(failure), failure.exit_code
