"""The click face: `git lifeline <command>`."""

from .main import main, run
from .view import view

main.add_command(view)

__all__ = ["main", "run"]
