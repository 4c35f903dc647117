"""The semantic model on a user's machine: where it lives, and the one command that downloads it.

Recall never downloads. `git lifeline model fetch` does, explicitly: all-MiniLM-L6-v2 (384
dimensions, 22 M parameters, 90 MB; small enough for a laptop CPU, and the most used small
English sentence model) from the model hub into the user's cache directory, each file
checked against a pinned sha256 before it is moved into place, so a changed or truncated
download is refused and nothing half-written is left. Then `git config lifeline.semantic.model`
names the directory.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path
from typing import Callable, Optional

from ..errors import InputError, LifelineError

NAME = "all-MiniLM-L6-v2"
SOURCE = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"
# The files the numpy encoder reads, with the sha256 of the published revision.
FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
}
_CHUNK = 1 << 16
Progress = Callable[[str, int, int], None]


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "git-lifeline" / "models" / NAME


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def missing_or_changed(dest: Path, files: Optional[dict] = None) -> list:
    """The files of `dest` that are absent or differ from their pinned sha256."""
    files = files or FILES
    return [name for name, digest in files.items()
            if not (dest / name).is_file() or _sha256(dest / name) != digest]


def fetch(dest: Optional[Path] = None, source: str = SOURCE, files: Optional[dict] = None,
          progress: Optional[Progress] = None, timeout: float = 60.0) -> Path:
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
                _download(source + name, out, name, progress, timeout)
            got = _sha256(Path(tmp))
            if got != files[name]:
                raise LifelineError(f"{name}: sha256 {got} is not the pinned {files[name]}; "
                                    "the download was refused and nothing was kept")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return dest


def _download(url: str, out, name: str, progress: Optional[Progress], timeout: float) -> None:
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost", "file:")):
        raise InputError(f"refusing to download from {url!r}: only https (or a local test server)")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - scheme checked above
            total = int(resp.headers.get("Content-Length") or 0)
            done = 0
            while True:
                chunk = resp.read(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(name, done, total)
    except OSError as exc:
        raise LifelineError(f"cannot download {name} from {url}: {exc}; nothing was kept") from None


def remove(dest: Optional[Path] = None) -> bool:
    dest = Path(dest or default_dir())
    if not dest.exists():
        return False
    shutil.rmtree(dest)
    return True
