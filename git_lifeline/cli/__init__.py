"""The click face: `git lifeline <command>` (the group and its commands: main.py)."""

from .main import main, run

__all__ = ["main", "run"]
