"""Shims: the write-time rules now live in core/entry.py, next to the one Entry.

Every name below is re-exported so existing callers keep working; import from
`core.entry` instead (these lines go once no caller uses them).
"""

from .entry import BODY_OPTIONAL_KINDS  # noqa: F401
from .entry import KINDS  # noqa: F401
from .entry import MAX_BODY_BYTES  # noqa: F401
from .entry import MAX_FIELD_CHARS  # noqa: F401
from .entry import MAX_PARENTS  # noqa: F401
from .entry import MAX_SUMMARY_CHARS  # noqa: F401
from .entry import MIN_TS  # noqa: F401
from .entry import content_problems  # noqa: F401
from .entry import new_entry as new_record  # noqa: F401
from .entry import parse_entry as parse_blob  # noqa: F401
from .entry import parse_ts  # noqa: F401
from .entry import utcnow  # noqa: F401
