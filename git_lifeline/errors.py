"""Error types shared by every layer; the faces turn them into messages and exit codes.

Exit codes are part of the CLI contract (documented in the man page):
0 ok, 1 integrity failure, 2 usage or input error, 3 internal error (a bug),
4 the repository itself failed (read-only, disk full, missing objects).
"""


class LifelineError(Exception):
    """A failure the user can act on; `exit_code` is what the CLI returns."""

    exit_code = 2


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


class RepositoryError(LifelineError):
    """The repository could not be read or written as needed: a read-only or full disk,
    missing objects. Writes move the ref last, so a failed write left the line as it was."""

    exit_code = 4

