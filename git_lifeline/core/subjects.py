"""What a decision is about, compared the way a reader sees it.

A decision declares its subject with a `subject:` body header. Two declarations
name the same subject when a reader cannot tell them apart, so the comparison key
ignores what a reader cannot see or distinguish (docs/FORMAT.md §9):

* Unicode default-ignorable code points (zero-width spaces and joiners, soft
  hyphen, bidirectional controls, variation selectors, ...) are removed;
* compatibility forms are folded (NFKC: fullwidth, mathematical and ligature
  letters become plain ones) and case is folded;
* Cyrillic and Greek letters whose glyph is a Latin letter's are read as that
  Latin letter (`_LOOK_ALIKES`), also under accents (matched on the decomposed form);
* runs of whitespace become one space.

A summary prefix ("Backend: ...") is never a subject: a shared word before a colon
says nothing about whether two decisions disagree.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Optional

# Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt): characters
# a renderer shows as nothing.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)

# Cyrillic and Greek letters drawn like a Latin letter in common fonts. Applied to both
# cases before case folding, since e.g. Cyrillic "В" folds to "в", which looks like no
# Latin letter, while it is drawn exactly like "B".
_LOOK_ALIKES = str.maketrans(
    {
        # Cyrillic capitals
        "А": "A",
        "В": "B",
        "Е": "E",
        "К": "K",
        "М": "M",
        "Н": "H",
        "О": "O",
        "Р": "P",
        "С": "C",
        "Т": "T",
        "Х": "X",
        "Ѕ": "S",
        "І": "I",
        "Ј": "J",
        "Ү": "Y",
        "Ԛ": "Q",
        "Ԝ": "W",
        "Ӏ": "I",
        # Cyrillic small letters
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ј": "j",
        "ԁ": "d",
        "һ": "h",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        # Greek capitals
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        # Greek small letters
        "ο": "o",
        "ϲ": "c",
        "ϳ": "j",
    }
)


def display_subject(raw: Optional[str]) -> Optional[str]:
    """A declared subject as shown: invisible characters removed, compatibility forms
    and case folded, whitespace collapsed. None when nothing visible is left."""
    if not raw:
        return None
    text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", raw))
    text = unicodedata.normalize("NFKC", text.casefold())
    return " ".join(text.split()) or None


@lru_cache(maxsize=4096)
def subject_key(raw: str) -> str:
    """The comparison key: two subjects a reader cannot tell apart have the same key."""
    text = unicodedata.normalize("NFKD", _IGNORABLE.sub("", raw)).translate(_LOOK_ALIKES)
    text = unicodedata.normalize("NFKC", text)
    text = unicodedata.normalize("NFKC", text.casefold())
    return " ".join(text.split())
