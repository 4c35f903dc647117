"""Where the write policy is read from: a ref that checking out a branch cannot move.

The policy routes an agent's write into the ledger, which every branch and worktree of the
repository shares. Read from HEAD, it followed whatever branch was checked out: checking out
a contributor's branch that commits `"default": "direct"` gave the running agent direct
writes. It is read instead from the first of these that names a commit:

1. `git config lifeline.policyRef` (a branch, a remote-tracking branch or a tag; never HEAD);
2. the default branch of the shared remote as last fetched: what `refs/remotes/origin/HEAD`
   points at (origin, or the only remote when there is one);
3. the local default branch: `init.defaultBranch`, else `main`, else `master`.

None of them: there is no trusted policy file and the built-in policy applies. A configured
ref that names no commit is an error: agent writes stop rather than fall back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..core.entry import abbrev
from ..core.policy import MAX_POLICY_BYTES, POLICY_PATH, PolicyError, overrides_refused
from .libgit2 import pygit2
from .repo import GitRepo

CONFIG_KEY = "lifeline.policyRef"
ALLOW_OVERRIDE_KEY = "lifeline.allowSecretOverride"
_REVISION_SYNTAX = ("~", "^", ":", "@{", "..")


@dataclass(frozen=True)
class PolicyRef:
    ref: str  # the full ref name, e.g. refs/remotes/origin/main
    commit: str
    why: str  # how it was chosen, for `git lifeline policy`


def _commit_of(repo: pygit2.Repository, ref: pygit2.Reference) -> Optional[str]:
    try:
        return str(ref.peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def _configured(gr: GitRepo, value: str) -> PolicyRef:
    name = value.strip()
    if not name or name == "HEAD" or any(s in name for s in _REVISION_SYNTAX):
        raise PolicyError(
            f"git config {CONFIG_KEY} {value!r}: name a branch or a tag (e.g. refs/remotes/origin/main); "
            "HEAD follows the checkout, so it cannot be trusted"
        )
    try:
        ref = gr.repo.lookup_reference_dwim(name)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        ref = None
    commit = _commit_of(gr.repo, ref) if ref is not None and ref.name.startswith("refs/") else None
    if ref is None or commit is None:
        raise PolicyError(
            f"git config {CONFIG_KEY} {value!r} names no commit; agent writes are refused until it "
            "names one (git branch -a lists them) or the setting is removed"
        )
    return PolicyRef(ref.name, commit, f"git config {CONFIG_KEY}")


def _shared_remote(gr: GitRepo) -> Optional[str]:
    names = list(gr.repo.remotes.names())
    if "origin" in names:
        return "origin"
    return names[0] if len(names) == 1 else None


def _remote_default(gr: GitRepo) -> Optional[PolicyRef]:
    remote = _shared_remote(gr)
    if remote is None:
        return None
    head = gr.repo.references.get(f"refs/remotes/{remote}/HEAD")
    if head is None:
        return None
    target = head.target if isinstance(head.target, str) else head.name
    ref = gr.repo.references.get(target)
    commit = _commit_of(gr.repo, ref) if ref is not None else None
    if ref is None or commit is None:
        return None
    return PolicyRef(ref.name, commit, f"{remote}'s default branch ({head.name})")


def _local_default(gr: GitRepo) -> Optional[PolicyRef]:
    configured = (gr.config_get("init.defaultBranch") or "").strip()
    candidates = [(configured, "init.defaultBranch")] if configured else []
    candidates += [("main", "the default branch"), ("master", "the default branch")]
    for branch, why in candidates:
        ref = gr.repo.references.get(f"refs/heads/{branch}")
        commit = _commit_of(gr.repo, ref) if ref is not None else None
        if ref is not None and commit is not None:
            return PolicyRef(ref.name, commit, why)
    return None


def find_policy_ref(gr: GitRepo) -> Optional[PolicyRef]:
    """The trusted ref the policy is read from, or None (the built-in policy applies)."""
    configured = gr.config_get(CONFIG_KEY)
    if configured is not None:
        return _configured(gr, configured)
    return _remote_default(gr) or _local_default(gr)


def read_file_at(gr: GitRepo, commit: str, path: str) -> Optional[bytes]:
    """The bytes of `path` in `commit`; None when there is no such path. IsADirectoryError
    when something other than a regular file is there (a directory, a submodule's commit, a
    symbolic link, whose blob is the name it points to); PolicyError when it is too large to
    be a policy."""
    try:
        entry = gr.repo[commit].peel(pygit2.Commit).tree[path]
    except KeyError:
        return None
    if entry.filemode not in (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE):
        raise IsADirectoryError(path)
    kind, size = gr.repo.odb.read_header(entry.id)
    if kind != pygit2.enums.ObjectType.BLOB:
        raise IsADirectoryError(path)
    if size > MAX_POLICY_BYTES:
        raise PolicyError(
            f"policy {abbrev(commit)}:{path} is {size} bytes; a policy file is at most {MAX_POLICY_BYTES}"
        )
    blob = gr.repo[entry.id]
    assert isinstance(blob, pygit2.Blob)
    return blob.data


def overrides_allowed(gr: GitRepo) -> bool:
    """Whether an entry's `allow-secret:` header is honoured here (verify, pull, both hooks).
    Either source may refuse, and a refusal wins: the repository's own config
    (`lifeline.allowSecretOverride false`, which no push or clone can set) and the policy file
    on the trusted ref (`"allow_secret_override": false`, what the team committed; a server's
    pre-receive reads its own default branch). A policy that cannot be found or read refuses
    nothing: doctor and `git lifeline policy` report it."""
    if not gr.config_bool(ALLOW_OVERRIDE_KEY, True):
        return False
    try:
        ref = find_policy_ref(gr)
        data = read_file_at(gr, ref.commit, POLICY_PATH) if ref is not None else None
    except (PolicyError, IsADirectoryError):
        return True
    if data is None:
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not overrides_refused(text)
