"""A question's words as recall reads them: folded, split, stopwords dropped, lightly
stemmed (views/recall.py makes them concepts). The entries' words are
folded, split and stemmed by the same functions, so a question's word and an entry's meet.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

PREFIX_FROM = 4  # a stem from this many letters matches as a prefix ("notif" finds "notifications")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Generic English function words, and the words a question is framed with ("what happens
# when", "how does it work", "did we always", "what do I need to"): they say nothing about
# which entry is meant. Words of the synonym table ("down" in "went down") are not here.
# Nor do the words that ask what changed ("did we switch", "what replaced", "before"): the
# fold answers that (a hit that was replaced brings its replacement), the words would only
# dilute the question's weight.
STOPWORDS = frozenset(
    """
a about above across after again against all almost along already also although always am among an and
another any anybody anyone anything anyway anywhere are around as at away be became because become
becomes been before being below between beyond both but by can cannot could did do does doing done
during each either else enough even ever every everybody everyone everything everywhere few for from
further get gets getting give given go goes going gone went got gotten had has have having he her here hers
herself him himself his how however i if in instead into is it its itself just least less let like
likely lot lots many may maybe me might mine more most much must my myself neither never next no nobody
none nor not nothing now of off often on once one ones only onto or other others otherwise our ours
ourselves out over own per perhaps please quite rather really same several shall she should since so
some somebody someone something sometime sometimes somewhere still such than that the their theirs them
themselves then there therefore these they thing things this those though through thus to together too
toward towards under until up upon us very was way ways we well were what whatever when whenever where
wherever whether which while who whoever whole whom whose why will with within without would yes yet you
your yours yourself yourselves
isn aren wasn weren don doesn didn hasn haven hadn won wouldn shouldn couldn cannot can't ll ve re
actually basically currently exactly generally usually today anymore later earlier
happen happens happened happening work works worked working find found look looks looked looking
want wants wanted need needs needed tell told know knew known mean means meant think thought say says
said see seen seem seems kind sort sorts people person decide decided idea ideas thing part
use used using uses make made makes making way ways
right different stuff big latest recent recently soon tomorrow plain similar suppose supposed remember
behind actual mind approach overview etc middle fit apply setup multiple folk folks guy guys hear heard
kick pop ask asking asked wonder curious reason reasons new
change changed changes changing switch switched swap swapped move moved replace replaced reverse
reversed revert reverted evolve evolved before previous previously original originally current back forth
world sure useful deal based involve involved involves relate related relates interact interacts precise
precisely propose proposed aim aiming bunch letting truth strategy technology
technologies framework frameworks scheme decision decisions stand standing reconsider reconsidering
supersede superseded supersedes valid hold holds vs versus vice versa accident accidental accidentally
programmatically teammate teammates colleague colleagues coworker coworkers sitting scared scary homegrown
toolkit toolkits piece pieces giant rely relies relied afterward afterwards tighten tightened loosen loosened
relax relaxed strict stricter little ish practice practical impact settle settled prove began begin grab
supplies supplier suppliers
o os as e de do da dos das em no na nos nas um uma para por com que se
""".split()
)

_SUFFIXES = (
    "ational",
    "ations",
    "ation",
    "ments",
    "ment",
    "ings",
    "ing",
    "ions",
    "ion",
    "ures",
    "ure",
    "ness",
    "ers",
    "er",
    "ies",
    "ied",
    "es",
    "ed",
    "ly",
    "s",
)
_UNDOUBLE = frozenset({"ing", "ings", "ed", "er", "ers"})


def fold(text: str) -> str:
    """Lowercase and strip accents (as FTS5's remove_diacritics does for the index)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix strip, so that a prefix match finds the word's relatives. Kept per word:
    a first question stems every word of its 200 candidates, a few hundred distinct words
    thousands of times (6,248 calls at 10,000 entries)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= PREFIX_FROM:
            base = word[: -len(suffix)]
            if suffix in _UNDOUBLE and base[-1] == base[-2] and base[-1] not in "lsz" and len(base) > PREFIX_FROM:
                base = base[:-1]  # swapped -> swap, planning -> plan (but not "installed")
            return base
    if word.endswith("s") and not word.endswith("ss") and len(word) >= 4:
        return word[:-1]  # short plurals: gaps -> gap
    return word
