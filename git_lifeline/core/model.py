"""Shims: the entry is now core/entry.py (a stdlib dataclass), the pydantic boundary
core/entry_fields.py.

Every name below is re-exported so existing callers keep working; import from
`core.entry` / `core.canonical` / `core.entry_fields` instead (these lines go once no
caller uses them). The pydantic names are served lazily, so importing a shim from
here does not load pydantic.
"""

from typing import Any

from .entry import BODY_OPTIONAL_KINDS as BODY_OPTIONAL_KINDS
from .entry import HEX64 as HEX64
from .entry import KINDS as KINDS
from .entry import MAX_BODY_BYTES as MAX_BODY_BYTES
from .entry import MAX_FIELD_CHARS as MAX_FIELD_CHARS
from .entry import MAX_PARENTS as MAX_PARENTS
from .entry import MAX_SUMMARY_CHARS as MAX_SUMMARY_CHARS
from .entry import MIN_PREFIX as MIN_PREFIX
from .entry import MIN_TS as MIN_TS
from .entry import TS_FORMAT as TS_FORMAT
from .entry import Entry as Entry
from .entry import canonical_form as canonical_form
from .entry import compute_id as compute_id
from .entry import content_problems as content_problems
from .entry import encode_blob as encode_blob
from .entry import format_ts as format_ts
from .entry import new_entry as build_entry  # noqa: F401
from .entry import parse_ts as parse_ts
from .entry import utcnow as utcnow

_LAZY = ("describe_validation_error", "EntryFields", "entry_from_dict")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import entry_fields
        return getattr(entry_fields, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
