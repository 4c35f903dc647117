"""Shims: the canonical form, the id and the blob encoding are now in core/entry.py,
next to the one Entry. Import from `core.entry` instead (these lines go once no
caller uses them)."""

from .entry import HEX64 as HEX64
from .entry import MIN_PREFIX as MIN_PREFIX
from .entry import TS_FORMAT as TS_FORMAT
from .entry import canonical_form as canonical_form
from .entry import compute_id as compute_id
from .entry import encode_blob as encode_blob
from .entry import format_ts as format_ts
