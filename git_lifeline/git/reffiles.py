"""A repository's location and one ref's value, read from the files git keeps, without
libgit2: what the warm `context` needs to know its cache is current (app/warm_context.py)
before it would pay for importing pygit2.

It only ever answers for the plain layouts it fully understands, and says None for
everything else, so that its caller takes the normal path through pygit2: a `.git`
directory or a linked worktree's `gitdir:` file found the way libgit2 finds it (the start
directory's `.git`, then the directory itself, then the parent's, on one file system),
or GIT_DIR naming a `.git` directory; the ref as a loose file (`<hex>\\n`, a regular file,
no symlink anywhere under refs/) or one line of packed-refs. None for: a bare repository,
a directory that looks like a git dir itself, reftable, alternates, a file or directory
owned by another user (libgit2 refuses those), GIT_* variables that move the repository
(GIT_COMMON_DIR, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY, ...), a symbolic ref, a symlink, a
FIFO, garbage, an unreadable file.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Mapping, NamedTuple, Optional

# Variables that make git look elsewhere than the files read here; libgit2 ignores most
# of them, git honours them: with any set, neither answer is certain here.
_MOVED_BY = (
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_REF_STORAGE",
)
_LOOSE = re.compile(rb"[0-9a-f]{40}\n")
_PACKED = re.compile(r"([0-9a-f]{40}) (\S+)")
_PEELED = re.compile(r"\^[0-9a-f]{40}")
_MAX_LOOSE = 4096
# A branch name as git's check-ref-format allows it, in ASCII: no whitespace or control
# character, none of ~^:?*[\ , no component starting with `.` or ending in `.` or `.lock`,
# no `..` nor `@{`.
_BRANCH = re.compile(r"refs/heads(?:/(?!\.)(?:(?!\.\.|@\{)[^\x00-\x20\x7f~^:?*\[\\/])+(?<!\.)(?<!\.lock))+")


class Location(NamedTuple):
    """Where a repository's files are, as open_repo (git/repo.py) would find them."""

    git_dir: str  # this worktree's git dir
    common_dir: str  # refs, objects and our cache
    workdir: str


def common_dir_of(git_dir: str) -> str:
    """The common dir of a git dir: itself, or where a linked worktree's `commondir` points."""
    commondir_file = os.path.join(git_dir, "commondir")
    if os.path.exists(commondir_file):
        with open(commondir_file, encoding="utf-8") as f:
            return os.path.realpath(os.path.join(git_dir, f.read().strip()))
    return git_dir


def lifeline_dir_of(common_dir: str) -> str:
    """Where our rebuildable cache lives: inside the shared git dir, never the tree."""
    return os.path.join(common_dir, "lifeline")


def locate(cwd: str, environ: Mapping[str, str]) -> Optional[Location]:
    """The repository open_repo would open from `cwd` with `environ`; None when this
    cannot be sure of it (see the module's docstring)."""
    if any(environ.get(name) for name in _MOVED_BY):
        return None
    try:
        if environ.get("GIT_DIR"):
            git_dir = os.path.realpath(environ["GIT_DIR"])  # as open_repo: Path(GIT_DIR).resolve()
            if os.path.basename(git_dir) != ".git" or not _is_git_dir(git_dir):
                return None  # a git dir by another name: bare or not is libgit2's call
            found: Optional[tuple[str, str]] = (git_dir, os.path.dirname(git_dir))
        else:
            found = _discover(os.path.realpath(cwd))
        if found is None:
            return None
        git_dir, workdir = found
        common = common_dir_of(git_dir)
        if common != git_dir and _worktree_of(git_dir) != workdir:
            return None  # a linked worktree whose `gitdir` file points elsewhere (moved, pruned)
        if not (_is_git_dir(git_dir) and _plain_store(common) and _mine(git_dir, common, workdir)):
            return None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return Location(git_dir, common, workdir)


def _discover(start: str) -> Optional[tuple[str, str]]:
    """(git dir, work tree) found from `start` in libgit2's order: `D/.git`, then `D` itself,
    then D's parent, never across a file system. None when the first thing found is not a
    `.git` directory or `gitdir:` file of the plain kind."""
    path, device = start, None
    while True:
        dot_git = os.path.join(path, ".git")
        for candidate in (dot_git, path):
            try:
                st = os.stat(candidate)
            except FileNotFoundError:
                continue
            if device is None:
                device = st.st_dev
            elif st.st_dev != device:
                return None  # libgit2 stops at a file system boundary: let it say so
            if candidate == path:
                if os.path.lexists(os.path.join(path, "HEAD")):
                    return None  # maybe a git dir itself (bare, or the start is inside .git)
            elif stat.S_ISDIR(st.st_mode):
                return (dot_git, path) if _is_git_dir(dot_git) else None
            elif stat.S_ISREG(st.st_mode):
                target = _gitfile_target(dot_git)
                return (target, path) if target is not None else None
            else:
                return None
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _gitfile_target(path: str) -> Optional[str]:
    """The git dir a `.git` file names (`gitdir: PATH`, relative to the file's directory)."""
    with open(path, "rb") as f:
        data = f.read(_MAX_LOOSE + 1)
    text = data.decode("utf-8")
    if len(data) > _MAX_LOOSE or not text.startswith("gitdir: ") or text.count("\n") > 1:
        return None
    target = text[len("gitdir: ") :].rstrip("\n")
    if not target or target != target.strip():
        return None
    return os.path.realpath(os.path.join(os.path.dirname(path), target))


def _worktree_of(git_dir: str) -> Optional[str]:
    """The work tree a linked worktree's git dir names in its `gitdir` file."""
    with open(os.path.join(git_dir, "gitdir"), encoding="utf-8") as f:
        return os.path.dirname(os.path.realpath(f.read().strip()))


def _is_git_dir(path: str) -> bool:
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and os.path.isfile(os.path.join(path, "HEAD"))


def _plain_store(common: str) -> bool:
    """objects/ and refs/ as directories, no reftable, no alternates."""
    join = os.path.join
    return (
        os.path.isdir(join(common, "objects"))
        and os.path.isdir(join(common, "refs"))
        and not os.path.lexists(join(common, "reftable"))
        and not os.path.lexists(join(common, "objects", "info", "alternates"))
    )


def _mine(*paths: str) -> bool:
    """libgit2 refuses a repository owned by someone else (safe.directory): so do we."""
    uid = os.geteuid()
    return all(os.stat(p).st_uid == uid for p in paths)


# ---- one ref ------------------------------------------------------------------------------
def read_ref(common_dir: str, name: str) -> Optional[str]:
    """The commit id `name` (e.g. refs/lifeline/main) holds, from its loose file, else from
    packed-refs; None when the ref is absent or anything about it is unusual."""
    parts = name.split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
        return None
    try:
        directory = common_dir
        for part in parts[:-1]:
            directory = os.path.join(directory, part)
            try:
                st = os.lstat(directory)
            except FileNotFoundError:
                return _packed(common_dir, name)
            if not stat.S_ISDIR(st.st_mode):
                return None  # a symlinked or odd refs/ directory
        data = _read_plain(os.path.join(directory, parts[-1]), _MAX_LOOSE)
        if data is None:
            return _packed(common_dir, name)
    except OSError:
        return None
    return data[:40].decode("ascii") if _LOOSE.fullmatch(data) else None


def read_head(git_dir: str, common_dir: str) -> Optional[str]:
    """The commit this worktree's HEAD is at: a branch (`ref: refs/heads/...`) read as
    read_ref reads it, or a detached id; None for anything else (an unborn branch, a ref
    outside refs/heads/, garbage)."""
    try:
        data = _read_plain(os.path.join(git_dir, "HEAD"), _MAX_LOOSE)
    except OSError:
        return None
    if data is None:
        return None
    if _LOOSE.fullmatch(data):
        return data[:40].decode("ascii")
    if not (data.startswith(b"ref: refs/heads/") and data.endswith(b"\n")):
        return None
    try:
        return read_ref(common_dir, data[5:-1].decode("ascii"))
    except UnicodeDecodeError:
        return None


UNBORN = "unborn"  # what head_view says of a branch with no commit yet


def head_view(git_dir: str, common_dir: str) -> Optional[str]:
    """read_head's commit, or UNBORN when HEAD names a branch that surely has no commit yet
    (a new repository: no loose ref file, no line for it in packed-refs); None for anything
    else. Unborn is said only where every file that could hold the branch was read and
    none does: a ref store these files do not describe (reftable) is the caller's to rule
    out (git/history.py asks libgit2 the same question before anything is kept for it)."""
    head = read_head(git_dir, common_dir)
    if head is not None:
        return head
    try:
        data = _read_plain(os.path.join(git_dir, "HEAD"), _MAX_LOOSE)
        if data is None or not (data.startswith(b"ref: refs/heads/") and data.endswith(b"\n")):
            return None
        name = data[5:-1].decode("ascii")
        # git and libgit2 trim whitespace after the name (`main \n` is main): only a name
        # git could hold, read exactly, is looked for (a reftable's stub `.invalid` is not)
        return UNBORN if _BRANCH.fullmatch(name) and _absent(common_dir, name) else None
    except (OSError, UnicodeDecodeError):
        return None


def _absent(common_dir: str, name: str) -> bool:
    """Whether ref `name` is surely absent: no loose file (nor anything odd on its path) and
    a packed-refs file, if any, that this reader fully knows and that does not name it."""
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return False
    directory = common_dir
    for part in parts[:-1]:
        directory = os.path.join(directory, part)
        if not os.path.lexists(directory):
            break
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return False
    else:
        if os.path.lexists(os.path.join(directory, parts[-1])):
            return False
    data = _read_plain(os.path.join(common_dir, "packed-refs"), None)
    return data is None or _packed_ids(data, name) == []


def tracking_commits(common_dir: str, line: str) -> Optional[list[str]]:
    """The commits `line` holds in every remote's tracking refs
    (refs/remotes/<remote>/lifeline/<line>, loose or packed), or None when anything about
    them is unusual: what a plain `git fetch` brought that the line may not have yet."""
    remotes_dir = os.path.join(common_dir, "refs", "remotes")
    names: set[str] = set()
    try:
        if os.path.lexists(remotes_dir):
            if not stat.S_ISDIR(os.lstat(remotes_dir).st_mode):
                return None
            names.update(n for n in os.listdir(remotes_dir))
        packed = _read_plain(os.path.join(common_dir, "packed-refs"), None)
    except OSError:
        return None
    if packed is not None:
        suffix = f"/lifeline/{line}"
        for text in packed.decode("ascii", "replace").split("\n"):
            m = _PACKED.fullmatch(text)
            if m is not None and m.group(2).startswith("refs/remotes/") and m.group(2).endswith(suffix):
                names.add(m.group(2)[len("refs/remotes/") : -len(suffix)])
    out = []
    for remote in sorted(names):
        ref = f"refs/remotes/{remote}/lifeline/{line}"
        commit = read_ref(common_dir, ref)
        if commit is None:
            if os.path.lexists(os.path.join(common_dir, ref)):
                return None  # there, but not a plain ref file this reader is sure of
            continue
        out.append(commit)
    return out


def _read_plain(path: str, limit: Optional[int]) -> Optional[bytes]:
    """A regular file's bytes (never through a symlink, never blocking on a FIFO); None
    when it does not exist; OSError for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        if limit is not None and st.st_size > limit:
            raise OSError(f"{path}: too large for a ref")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _packed(common_dir: str, name: str) -> Optional[str]:
    data = _read_plain(os.path.join(common_dir, "packed-refs"), None)
    if data is None:
        return None
    found = _packed_ids(data, name)
    return found[0] if found is not None and len(found) == 1 else None


def _packed_ids(data: bytes, name: str) -> Optional[list[str]]:
    """The ids packed-refs holds for `name`; None when it holds a line this reader does not know."""
    found = []
    lines = data.decode("ascii").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines):
        if i == 0 and line.startswith("# pack-refs with:"):
            continue
        m = _PACKED.fullmatch(line)
        if m is not None:
            if m.group(2) == name:
                found.append(m.group(1))
        elif not _PEELED.fullmatch(line):
            return None  # a line this reader does not know
    return found
