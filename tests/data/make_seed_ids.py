"""Regenerate seed_ids.json: the ids that lifeline-context 0.6.1 gives a varied set of entries.

Run it with the interpreter of a venv that has lifeline-context 0.6.1 installed:

    <seed-venv>/bin/python tests/data/make_seed_ids.py            # rewrites seed_ids.json
    <seed-venv>/bin/python tests/data/make_seed_ids.py --stdout   # prints it (the live test)

It imports only the seed's Entry, never git_lifeline: the committed file is the
seed's word, and tests/core/test_ids.py checks our ids against it.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from lifeline.entry import Entry

KINDS = (
    "bootstrap",
    "decision",
    "feature",
    "fix",
    "incident",
    "milestone",
    "release",
    "note",
    "open",
    "correction",
    "service",
    "api",
    "test",
    "requirement",
    "debt",
    "relation",
    "checkpoint",
)
A = "a" * 64
B = "0123456789abcdef" * 4
C = "f" * 63 + "0"


def base(**kw):
    fields = dict(
        kind="decision",
        author="Ana <ana@example.com>",
        agent="human",
        provider="none",
        model="human",
        summary="Use PostgreSQL",
        body="Because we need transactions.",
        parents=[],
    )
    fields.update(kw)
    return fields


def cases() -> list:
    out = [(f"kind-{k}", base(kind=k, summary=f"A {k} entry", body=f"Why this {k} matters.")) for k in KINDS]
    out += [
        ("checkpoint-empty-body", base(kind="checkpoint", summary="Where we stopped", body="")),
        ("unicode", base(summary="Banco: PostgreSQL — não MongoDB 🚀", body="漢字 ünïcødé العربية\nzero\u200bwidth")),
        ("unicode-nfc", base(summary="café", body="é composed")),
        ("unicode-nfd", base(summary="cafe\u0301", body="e\u0301 decomposed")),
        ("multi-line-body", base(body="line one\nline two\n\n## heading\n---\n```py\nx = 1\n```")),
        ("crlf-body", base(body="windows\r\nline endings\r\n")),
        ("body-surrounding-whitespace", base(body="  \n\t padded why \n\n ")),
        ("body-stripped-twin", base(body="padded why")),
        ("body-whitespace-only", base(kind="checkpoint", body=" \n\t ")),
        ("one-parent", base(parents=[A])),
        ("three-parents-unsorted", base(parents=[C, A, B])),
        ("three-parents-sorted", base(parents=[A, B, C])),
        ("agent-fields", base(agent="coder", provider="anthropic", model="claude-opus")),
        ("digits", base(summary="12", body="34")),
        ("length-prefix-in-summary", base(summary="3:abc", body="4:x\n")),
        ("newline-in-summary", base(summary="a\nb", body="c")),
        ("newline-shifted", base(summary="a", body="b\nc")),
        ("empty-parent-string", base(parents=[""])),
        ("no-parents", base(parents=[])),
        ("long-body", base(body="why " * 4000)),
        ("empty-summary", base(summary="", body="x")),
    ]
    return out


def build() -> dict:
    rows = []
    for name, fields in cases():
        rows.append({"name": name, "fields": fields, "id": Entry(**fields).id})
    return {"generator": f"lifeline-context {version('lifeline-context')}", "cases": rows}


def main() -> None:
    text = json.dumps(build(), ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if "--stdout" in sys.argv[1:]:
        sys.stdout.buffer.write(text.encode("utf-8"))
    else:
        (Path(__file__).resolve().parent / "seed_ids.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
