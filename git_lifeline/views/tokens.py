"""A deterministic, language-aware token estimate (no model download, no dependency).

Latin-script words cost about one token per four characters; each CJK, kana or
hangul character costs one; every other visible symbol costs one. When the optional
`tiktoken` extra is installed and its encoding is available locally, it is used
instead (`measure_for("tiktoken")`).
"""

from __future__ import annotations

import re
from typing import Callable

_PIECE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # one token per ideograph/kana/hangul
    r"|[^\W_]+"  # words and numbers
    r"|[^\s\w]|_",
    re.UNICODE,
)


def estimate(text: str) -> int:
    total = 0
    for m in _PIECE.finditer(text):
        piece = m.group(0)
        if len(piece) == 1:
            total += 1
        else:
            total += (len(piece) + 3) // 4
    return total + text.count("\n")


def measure_for(name: str) -> Callable[[str], int]:
    if name == "chars":
        return len
    if name == "tiktoken":
        try:
            import tiktoken  # optional: installed by hand (no extra names it)

            enc = tiktoken.get_encoding("cl100k_base")
            return lambda text: len(enc.encode(text))
        except Exception:
            return estimate
    return estimate
