"""Each log has its own writers' lock. The review trail of line `main` locked
`review-main.lock`, which is also the lock of a line named `review-main`: a writer of one
waited for the other's writers. A '.' cannot be in a name, so `review.main.lock` is the
trail's alone."""

from __future__ import annotations

import subprocess
import sys

from kit.repos import init_repo
from kit.run import subprocess_env

from git_lifeline.git.namespaces import LEDGER, REVIEW
from git_lifeline.git.repo import open_repo
from git_lifeline.git.sync import open_log

TAKE_TRAIL_LOCK = """
import sys
from git_lifeline.git.namespaces import REVIEW
from git_lifeline.git.repo import open_repo
from git_lifeline.git.sync import open_log
with open_log(open_repo(sys.argv[1]), REVIEW, "main").write_lock():
    print("taken")
"""


def test_the_trail_of_main_is_not_held_up_by_a_writer_of_line_review_main(tmp_path):
    repo = init_repo(tmp_path / "r")
    gr = open_repo(str(repo))
    with open_log(gr, LEDGER, "review-main").write_lock():
        done = subprocess.run(
            [sys.executable, "-c", TAKE_TRAIL_LOCK, str(repo)],
            capture_output=True,
            text=True,
            timeout=60,
            env=subprocess_env(),
        )
    assert done.returncode == 0 and done.stdout == "taken\n", done.stderr


def test_every_lock_file_name_is_one_no_line_name_can_take():
    for ns in (LEDGER, REVIEW):
        name = ns.lock_file.format(name="main")
        assert name.endswith(".lock")
    assert "." in REVIEW.lock_file.format(name="main").removesuffix(".lock"), "a '.' no name can hold sets it apart"
