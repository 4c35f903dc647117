"""The click face: `git lifeline <command>`."""

from .main import main, run

__all__ = ["main", "run"]
