"""pygit2's import handed libgit2 the system CA bundle, which OpenSSL parsed whole in every
`git lifeline` process (a seventh of pygit2's import). git/libgit2.py imports pygit2 with
the bundle's directory only; these tests fail if a command's process gets the file again,
or if a module of git/ imports pygit2 itself (then whichever module came first decided)."""

from __future__ import annotations

import re
import ssl
import subprocess
import sys

import pytest
from kit.run import ROOT, subprocess_env

# Runs the real CLI in this process and writes, on exit, the CA locations libgit2 was given.
PROBE = """
import atexit, sys
def report():
    import pygit2
    sys.stderr.write("\\ncerts: %r %r\\n" % (pygit2.settings.ssl_cert_file, pygit2.settings.ssl_cert_dir))
atexit.register(report)
sys.argv = ["git-lifeline", *sys.argv[1:]]
from git_lifeline.cli import run
run()
"""


def test_a_command_gives_libgit2_the_certificate_directory_not_the_bundle_file(repo):
    paths = ssl.get_default_verify_paths()
    if not paths.capath:
        pytest.skip("this system has no CA certificate directory: the bundle file is kept")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "log", "--kind", "note", "--summary", "Certs", "--body", "None read."],
        cwd=str(repo),
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"certs: None {paths.capath!r}", proc.stderr
    assert ssl.get_default_verify_paths() == paths  # what everyone else asks is left alone


def test_no_module_but_git_libgit2_imports_pygit2_itself():
    direct = re.compile(r"^\s*(import pygit2|from pygit2\b)", re.M)
    found = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "git_lifeline").rglob("*.py"))
        if p.name != "libgit2.py" and direct.search(p.read_text(encoding="utf-8"))
    ]
    assert found == [], found
