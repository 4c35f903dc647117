"""The review trail, as the layers above use it: records (records.py), their storage
(trails.ReviewTrail, a FanoutLog of the REVIEW namespace) and their verification (the
one engine of verify.py). Layout and rules: docs/FORMAT.md, "Review trail".
"""

from __future__ import annotations

from .checks import Problem as TrailProblem
from .checks import Report as TrailReport
from .fanout import Loaded as TrailLoad
from .namespaces import REVIEW
from .records import (
    CONTENT_KEYS,
    DECISIONS,
    FORMAT_VERSION,
    KEYS,
    MAX_WHY_CHARS,
    MIN_PID_PREFIX,
    RECORDS_DIR,
    TYPES,
    VIAS,
    Content,
    Proposal,
    Record,
    ReviewError,
    already_decided,
    build_proposals,
    canonical_bytes,
    check_record_blob,
    content_entry,
    doc_problems,
    entry_content,
    make_decision,
    make_direct,
    make_proposed,
    order_key,
    parse_since,
)
from .repo import GitRepo
from .trails import ReviewTrail
from .verify import verify_trail

REF_PREFIX = REVIEW.ref_prefix

__all__ = [
    "CONTENT_KEYS",
    "Content",
    "DECISIONS",
    "FORMAT_VERSION",
    "KEYS",
    "MAX_WHY_CHARS",
    "MIN_PID_PREFIX",
    "RECORDS_DIR",
    "REF_PREFIX",
    "TYPES",
    "VIAS",
    "Proposal",
    "Record",
    "ReviewError",
    "ReviewTrail",
    "TrailLoad",
    "TrailProblem",
    "TrailReport",
    "already_decided",
    "build_proposals",
    "canonical_bytes",
    "check_record_blob",
    "content_entry",
    "doc_problems",
    "entry_content",
    "list_trails",
    "make_decision",
    "make_direct",
    "make_proposed",
    "order_key",
    "parse_since",
    "verify_trail",
]


def list_trails(gr: GitRepo) -> list:
    """Names of the lines that have a review trail (valid line names only), sorted."""
    return REVIEW.names(gr)
