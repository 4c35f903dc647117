"""pygit2, imported once for every module of git/ (`from .libgit2 import pygit2`).

Importing pygit2 hands libgit2 the system's CA bundle file, which OpenSSL parses whole
(some 140 certificates: 59 M instructions, a seventh of the import, 7% of a small
`git lifeline log`). Nothing here talks TLS through libgit2 (fetch, push and clone run
the git executable), so the import is shown the bundle's directory only: libgit2 would
look a certificate up there by its hash when one is needed, never read them all up front.
Where there is no such directory, the file is kept (libgit2 refuses to have neither).
"""

from __future__ import annotations

import ssl

_default_verify_paths = ssl.get_default_verify_paths


def _directory_only() -> ssl.DefaultVerifyPaths:
    paths = _default_verify_paths()
    # ssl itself answers None for a missing file (typeshed says str)
    return paths._replace(cafile=None) if paths.capath else paths  # type: ignore[arg-type]


ssl.get_default_verify_paths = _directory_only  # only while pygit2's settings are made
try:
    import pygit2 as pygit2
finally:
    ssl.get_default_verify_paths = _default_verify_paths

__all__ = ["pygit2"]
