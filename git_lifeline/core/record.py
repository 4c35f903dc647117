"""Shim: the cache's Record is the one Entry (core/entry.py); import Entry from there."""

from .entry import Entry as Record  # noqa: F401
