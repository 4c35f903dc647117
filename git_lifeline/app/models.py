"""The semantic model on a user's machine: where it lives, and the one command that downloads it.

Recall never downloads. `git lifeline model fetch` does, explicitly: all-MiniLM-L6-v2 (384
dimensions, 22 M parameters, 90 MB; small enough for a laptop CPU, and the most used small
English sentence model) from the model hub into the user's cache directory, each file
checked against a pinned sha256 before it is moved into place, so a changed or truncated
download is refused and nothing half-written is left. Then `git config lifeline.semantic.model`
names the directory.
"""

from __future__ import annotations

import os
import tempfile
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Optional

from ..errors import InputError, LifelineError
from ..views.minilm_files import PINNED_SHA256, PINNED_SIZE, file_sha256

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from ..git.repo import GitRepo
    from ..views.semantic import Index

NAME = "all-MiniLM-L6-v2"
SOURCE = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"
# Every file of the published model directory, checked against its pinned sha256.
FILES = dict(PINNED_SHA256)
_CHUNK = 1 << 16
UNPINNED_MAX_BYTES = 1 << 30  # a file given without a pinned size (a test's own set) stops here
Progress = Callable[[str, int, int], None]


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "git-lifeline" / "models" / NAME


def missing_or_changed(dest: Path, files: Optional[dict[str, str]] = None) -> list[str]:
    """The files of `dest` that are absent or differ from their pinned sha256."""
    files = files or FILES
    return [name for name, digest in files.items() if not (dest / name).is_file() or file_sha256(dest / name) != digest]


def fetch(
    dest: Optional[Path] = None,
    source: str = SOURCE,
    files: Optional[dict[str, str]] = None,
    progress: Optional[Progress] = None,
    timeout: float = 60.0,
) -> Path:
    """Download the model's files into `dest` (default: the user's cache), each checked
    against its pinned sha256; files already there and intact are kept."""
    dest = Path(dest or default_dir())
    files = files or FILES
    if not source.endswith("/"):
        source += "/"
    dest.mkdir(parents=True, exist_ok=True)
    for name in missing_or_changed(dest, files):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                _download(source + name, out, name, progress, timeout, PINNED_SIZE.get(name, UNPINNED_MAX_BYTES))
            got = file_sha256(Path(tmp))
            if got != files[name]:
                raise LifelineError(
                    f"{name}: sha256 {got} is not the pinned {files[name]}; "
                    "the download was refused and nothing was kept"
                )
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return dest


def _download(url: str, out: BinaryIO, name: str, progress: Optional[Progress], timeout: float, limit: int) -> None:
    """`url` into `out`, refused once it passes `limit` bytes: the hash is checked at the
    end, and a server that never stops would otherwise fill the disk first."""
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost", "file:")):
        raise InputError(f"refusing to download from {url!r}: only https (or a local test server)")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - scheme checked above
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            while True:
                chunk = resp.read(min(_CHUNK, limit + 1 - done))
                if not chunk:
                    break
                if done + len(chunk) > limit:
                    raise LifelineError(
                        f"{name}: the server sent more than its pinned {limit} bytes; "
                        "the download was refused and nothing was kept"
                    )
                out.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(name, done, total)
    except OSError as exc:
        raise LifelineError(f"cannot download {name} from {url}: {exc}; nothing was kept") from None


def configure(where: Path) -> str:
    """Name the model in this repository's git config (when run inside one)."""
    from ..git.repo import open_repo

    try:
        gr = open_repo(None)
    except LifelineError:
        return f"not in a git repository: run `git config lifeline.semantic.model {where}` where you want it"
    gr.config_set("lifeline.semantic.model", str(where))
    return f"git config lifeline.semantic.model {where}"


def describe(dest: Optional[Path] = None) -> str:
    dest = Path(dest or default_dir())
    if not dest.exists():
        return f"{NAME}: not downloaded (git lifeline model fetch)"
    bad = missing_or_changed(dest)
    if bad:
        return f"{NAME} in {dest}: incomplete or changed ({', '.join(bad)}); run git lifeline model fetch"
    return f"{NAME} in {dest}: complete, every file matches its pinned sha256"


def configured_index(gr: GitRepo, warnings: list[str]) -> tuple[Optional[Index], Optional[tuple[str, str]]]:
    """(the semantic index or None, the recall mode: ("semantic", model dir) or ("lexical",
    why), or None when no model is configured) for `lifeline.semantic.model`. A model that
    cannot be used is a warning, and recall is lexical."""
    from ..views import semantic

    configured = gr.config_get("lifeline.semantic.model")
    if not configured:
        return None, None
    try:
        index = semantic.index_for(Path(configured).expanduser())
    except semantic.ModelUnavailable as exc:
        warnings.append(f"recall is lexical: {exc}")
        return None, ("lexical", str(exc))
    return index, ("semantic", configured)
