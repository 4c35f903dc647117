"""git-lifeline: a project's reasoning ledger kept as git objects."""

__version__ = "0.1.0"
