"""`python -m git_lifeline`: the same entry point as the `git-lifeline` executable."""

from .cli import run

if __name__ == "__main__":
    run()
