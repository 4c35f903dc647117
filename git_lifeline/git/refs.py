"""Our refs and commits: the one way a commit is made, compare-and-swap on a ref, and
what a ref's reflog says about its past (every namespace of fanout.py goes through here).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..errors import LifelineError, RepositoryError
from .libgit2 import pygit2
from .repo import GitRepo

HEX40 = re.compile(r"[0-9a-f]{40}")


def make_commit(
    gr: GitRepo, message: str, tree: pygit2.Oid, parents: list[pygit2.Oid], sig: pygit2.Signature
) -> pygit2.Oid:
    """The one way a commit of ours (a line, a review trail) is made: author and committer
    are `sig`, and the commit is signed when git's config asks for it (commit.gpgSign).
    Signing goes through `git commit-tree -S`, so every signing setup git supports (gpg,
    ssh with a key file or an agent, x509, gpg.program, gpg.ssh.defaultKeyCommand) works
    exactly as for the user's own commits; the message is passed verbatim, so a signed
    commit differs from an unsigned one only by its signature. The ref is not touched:
    callers move it by compare-and-swap."""
    if not gr.config_bool("commit.gpgsign", False):
        return gr.repo.create_commit(None, sig, sig, message, tree, parents)
    offset = sig.offset
    date = f"@{sig.time} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME=sig.name,
        GIT_AUTHOR_EMAIL=sig.email,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_NAME=sig.name,
        GIT_COMMITTER_EMAIL=sig.email,
        GIT_COMMITTER_DATE=date,
    )
    args = ["commit-tree", "-S", str(tree)]
    for p in parents:
        args += ["-p", str(p)]
    proc = gr.git(args, input=message.encode("utf-8"), env=env, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise LifelineError(f"cannot sign the commit (commit.gpgSign is set): {err}; nothing was written")
    return pygit2.Oid(hex=proc.stdout.decode("ascii").strip())


def ensure_reflog(gr: GitRepo, ref_name: str) -> None:
    """git and libgit2 write a reflog for refs outside heads/remotes/notes only when the
    log file already exists; create it so every move of our refs is recorded."""
    log = gr.common_dir / "logs" / ref_name
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()


def cas_ref(gr: GitRepo, ref_name: str, old: Optional[str], new: pygit2.Oid, message: str) -> bool:
    """Compare-and-swap `ref_name` from `old` (None: must not exist) to `new`.
    False when another writer won; the caller re-reads and retries. A failure of the
    disk is a RepositoryError, and leaves no reflog entry for the move that failed."""
    ensure_reflog(gr, ref_name)
    repo = gr.repo
    try:
        if old is None:
            repo.create_reference_direct(ref_name, new, False, message=message)
            return True
        ref = repo.lookup_reference(ref_name)
        if str(ref.target) != old:
            return False
        ref.set_target(new, message)
        return True
    except (pygit2.AlreadyExistsError, KeyError):
        return False
    except (pygit2.GitError, OSError) as exc:
        # libgit2 reports a concurrent writer either as a value mismatch (GitError)
        # or as a held `<ref>.lock` (OSError, with no OS reason): both mean "someone
        # else won". Anything else (no space, read-only, permissions) is the disk.
        text = str(exc)
        held = "lock" in text.lower() and (text.rstrip().endswith(":") or "exist" in text.lower())
        if "does not match" in text or held or "already exists" in text:
            return False
        drop_phantom_reflog(gr, ref_name, old, str(new))
        raise RepositoryError(f"cannot update {ref_name}: {text}; the ref was not changed") from None


def ref_value(repo: pygit2.Repository, ref_name: str) -> Optional[str]:
    try:
        return str(repo.lookup_reference(ref_name).target)
    except (KeyError, pygit2.InvalidSpecError):
        return None


def drop_phantom_reflog(gr: GitRepo, ref_name: str, old: Optional[str], new: str) -> None:
    """libgit2 appends the reflog entry before it renames `<ref>.lock` into place; when
    that last step fails (a full disk) or the writer is killed between the two, the
    reflog records a move that never happened, which verify would then report as a
    rewound line. Drop that last entry, but only when it is exactly that move and the
    ref is still at `old` (call it holding the ref's writers' lock)."""
    if ref_value(gr.repo, ref_name) != old:
        return
    try:
        with open(gr.common_dir / "logs" / ref_name, "rb+") as f:
            data = f.read()
            body = data[:-1] if data.endswith(b"\n") else data
            start = body.rfind(b"\n") + 1
            if body[start:].startswith(f"{old or '0' * 40} {new} ".encode("ascii")):
                f.truncate(start)
    except OSError:
        pass


def rewound_value(repo: pygit2.Repository, ref_name: str, head: pygit2.Oid) -> Optional[pygit2.Oid]:
    """A value the ref really held, per its reflog, that `head` does not contain (a
    rewind or a rewrite), or None when history only grew.

    A reflog line whose new value the ref never took — the writer was killed between
    logging and moving the ref, so the next line (or the ref itself) still starts from
    the old value — is not a value the ref held, and is skipped."""
    try:
        lines = list(reversed(list(repo.lookup_reference(ref_name).log())))  # oldest first
    except (KeyError, pygit2.GitError):
        return None
    for i, item in enumerate(lines):
        value = item.oid_new
        if value == head or int(str(value), 16) == 0:
            continue
        following = lines[i + 1].oid_old if i + 1 < len(lines) else head
        if following != value and following == item.oid_old:
            continue  # an update that never took effect
        try:
            if not repo.descendant_of(head, value):
                return value
        except pygit2.GitError:
            return value
    return None
