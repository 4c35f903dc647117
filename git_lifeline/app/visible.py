"""Text made safe for a terminal, for both faces: what a human's terminal shows of text
that is not ours (an entry, a ref or file name, a remote's message) is what an AI reads.

* `visible(text)`: every character a terminal would act on or hide instead of showing —
  control characters (a carriage return that rewrites the line, escape sequences, C1
  controls), bidi overrides, zero-width and other invisible format characters, line
  separators, lone surrogates — is written visibly (`\\r`, `<U+202E>`), as git quotes an
  odd path. JSON output is never passed through it: it stays exact.
* `shown_lines(lines)`: our own message of several lines, each made visible on its own and
  joined by real line breaks, so a line break inside one (a hostile name's) stays escaped
  and can never forge a line of ours. The CLI prints with it (cli/terminal.py), and so
  does `python -m git_lifeline.mcp` on its stderr.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable, Optional

# Invisible or ambiguous characters that are not Cc/Cf/Zl/Zp/Cs: fillers that draw as
# blanks, the combining grapheme joiner, Mongolian and Khmer invisibles, the
# supplementary variation selectors (used to smuggle text). U+FE00-FE0F are left alone:
# they pick an emoji's presentation.
_INVISIBLE = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0])
_NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}


def _shown(ch: str, multiline: bool) -> Optional[str]:
    code = ord(ch)
    if 0x20 <= code < 0x7F:
        return None
    if multiline and ch in "\n\t":
        return None
    if ch in _NAMED:
        return _NAMED[ch]
    if code < 0xA0 and (code < 0x20 or code >= 0x7F):
        return f"<U+{code:04X}>"
    if code in _INVISIBLE or 0xE0100 <= code <= 0xE01EF:
        return f"<U+{code:04X}>"
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") and not 0xFE00 <= code <= 0xFE0F:
        if unicodedata.category(ch) in ("Co", "Cn"):
            return None  # private use and unassigned: drawn as boxes, not hidden
        return f"<U+{code:04X}>"
    return None


def visible(text: str, multiline: bool = False) -> str:
    """`text` with every hidden or terminal-controlling character written visibly. With
    `multiline`, line breaks (LF, and CRLF as one) and tabs stay as they are."""
    if not isinstance(text, str):
        text = str(text)
    if text.isascii() and text.isprintable():
        return text
    out = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if multiline and ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            out.append("\n")
            i += 2
            continue
        shown = _shown(ch, multiline)
        out.append(ch if shown is None else shown)
        i += 1
    return "".join(out)


def shown_lines(lines: Iterable[str]) -> str:
    """Lines of ours as a terminal must get them: each made visible on its own, joined by
    real line breaks ("" for none)."""
    return "\n".join(visible(line) for line in lines)
