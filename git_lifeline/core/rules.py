"""Shims: the write-time rules now live in core/entry.py, next to the one Entry.

Every name below is re-exported so existing callers keep working; import from
`core.entry` instead (these lines go once no caller uses them).
"""

from .entry import BODY_OPTIONAL_KINDS as BODY_OPTIONAL_KINDS
from .entry import KINDS as KINDS
from .entry import MAX_BODY_BYTES as MAX_BODY_BYTES
from .entry import MAX_FIELD_CHARS as MAX_FIELD_CHARS
from .entry import MAX_PARENTS as MAX_PARENTS
from .entry import MAX_SUMMARY_CHARS as MAX_SUMMARY_CHARS
from .entry import MIN_TS as MIN_TS
from .entry import content_problems as content_problems
from .entry import new_entry as new_record  # noqa: F401
from .entry import parse_entry as parse_blob  # noqa: F401
from .entry import parse_ts as parse_ts
from .entry import utcnow as utcnow
