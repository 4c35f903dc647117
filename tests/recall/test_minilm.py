"""The torch-free encoder of semantic recall (git_lifeline/views/minilm.py).

The real model comes from ``tests/fetch_test_model.py`` (tests/.model/, or the
LIFELINE_TEST_MODEL env var). Without it the model-dependent tests skip, except
under CI=true, where they fail: a missing model never turns the suite green.

Three independent checks of the numbers:
  * reference_vectors.json, made by sentence-transformers + torch
    (computed once, outside this repository): cosine >= 0.9999 required, ~1e-6 observed;
  * a plain float64 textbook BERT written here (padded batch + additive mask,
    math.erf GELU), run on the real weights and on a tiny random model with
    a different shape, so the fast packed path is checked beyond one config;
  * GELU against math.erf on a dense grid.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kit.model import MODEL_DIR, model_dir, need_model  # noqa: F401  (model_dir: the fixture)
from kit.run import DATA, ROOT, git

from git_lifeline.app import models
from git_lifeline.app.draft import Draft
from git_lifeline.views import minilm, minilm_files

REFERENCE = DATA / "minilm" / "reference_vectors.json"


@pytest.fixture(scope="module")
def emb(model_dir: Path) -> minilm.Embedder:
    return minilm.load(model_dir)


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def _ref_arrays(reference: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    sentences = [it["sentence"] for it in reference["items"]]
    vectors = np.array([it["vector"] for it in reference["items"]], dtype=np.float64)
    return sentences, vectors


# --------------------------------------------------------------------------
# independent float64 reference implementation


def _naive_bert(tensors: dict[str, np.ndarray], cfg: minilm_files.BertConfig, batch: list[list[int]]) -> np.ndarray:
    """Textbook BERT + mean pooling + L2, float64, padded batch with additive mask."""
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    erfc = np.vectorize(math.erfc)
    bsz, seq = len(batch), max(len(b) for b in batch)
    ids = np.zeros((bsz, seq), dtype=np.int64)
    mask = np.zeros((bsz, seq))
    for i, b in enumerate(batch):
        ids[i, : len(b)] = b
        mask[i, : len(b)] = 1

    def ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + cfg.layer_norm_eps) * g + b

    def lin(x: np.ndarray, name: str) -> np.ndarray:
        return x @ t[name + ".weight"].T + t[name + ".bias"]

    x = (
        t["embeddings.word_embeddings.weight"][ids]
        + t["embeddings.position_embeddings.weight"][np.arange(seq)][None]
        + t["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    nh, hd = cfg.num_attention_heads, cfg.head_dim
    for n in range(cfg.num_hidden_layers):
        p = f"encoder.layer.{n}."

        def heads(y: np.ndarray) -> np.ndarray:
            return y.reshape(bsz, seq, nh, hd).transpose(0, 2, 1, 3)

        q = heads(lin(x, p + "attention.self.query"))
        k = heads(lin(x, p + "attention.self.key"))
        v = heads(lin(x, p + "attention.self.value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + (1 - mask)[:, None, None, :] * -1e30
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, nh * hd)
        x = ln(
            lin(ctx, p + "attention.output.dense") + x,
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
        )
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * erfc(-h / math.sqrt(2))
        x = ln(lin(h, p + "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def _tensors_of(e: minilm.Embedder) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(e.model_dir / "model.safetensors"))


# --------------------------------------------------------------------------
# correctness against sentence-transformers


@pytest.mark.parametrize("batch_size", [1, 3, 32])
def test_matches_sentence_transformers_reference(
    emb: minilm.Embedder, reference: dict[str, Any], batch_size: int
) -> None:
    sentences, ref = _ref_arrays(reference)
    got = emb.embed(sentences, batch_size=batch_size).astype(np.float64)
    cos = (got * ref).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)
    worst = int(cos.argmin())
    assert cos.min() >= 0.9999, f"cosine {cos[worst]:.7f} for {sentences[worst]!r}"
    # Far tighter than required: the reference is rounded to 6 decimals and
    # float32 rounding differs between BLAS libraries; 1e-5 still catches any
    # real deviation (a wrong eps or GELU variant moves vectors by >1e-4).
    assert np.abs(got - ref).max() < 1e-5


def test_reference_file_covers_the_hard_cases(reference: dict[str, Any]) -> None:
    counts = [it["num_tokens"] for it in reference["items"]]
    assert len(counts) >= 20
    assert any(128 < c < 256 for c in counts), "needs a text past tokenizer.json's 128 cut"
    assert max(counts) == 256, "needs a text past max_seq_length"
    assert reference["generated_with"]["max_seq_length"] == 256
    assert all(len(it["vector"]) == 384 for it in reference["items"])


def test_token_ids_match_reference(emb: minilm.Embedder, reference: dict[str, Any]) -> None:
    """Same ids as sentence-transformers' tokenizer call (truncation at 256, no padding)."""
    sentences = [it["sentence"] for it in reference["items"]]
    got = emb.tokenize(sentences)
    assert [len(ids) for ids in got] == [it["num_tokens"] for it in reference["items"]]
    assert got == [it["input_ids"] for it in reference["items"]]


def test_tokenizer_json_really_pads_to_128(model_dir: Path, emb: minilm.Embedder) -> None:
    """Guards the reason load() resets padding/truncation: the shipped file pads and cuts at 128."""
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    assert len(raw.encode("hello").ids) == 128
    assert emb.tokenize(["hello"]) == [[101, 7592, 102]]


# --------------------------------------------------------------------------
# correctness against an independent float64 implementation


def test_matches_naive_float64_bert_on_real_weights(emb: minilm.Embedder) -> None:
    texts = ["fix typo", "Café naïve 🎉", "def f(x):\n    return x * 2  # double", "a " * 70]
    ids = emb.tokenize(texts)
    want = _naive_bert(_tensors_of(emb), emb.config, ids)
    got = emb.embed(texts, batch_size=4)
    assert np.abs(got - want).max() < 2e-6


def _write_tiny_model(
    dest: Path, tokenizer_json: Path, *, prefix: str = "", dtype: Any = np.float32, seed: int = 0, **overrides: Any
) -> tuple[dict[str, np.ndarray], minilm_files.BertConfig]:
    from safetensors.numpy import save_file

    raw = {
        "model_type": "bert",
        "hidden_act": "gelu",
        "vocab_size": 30522,
        "hidden_size": 24,
        "num_hidden_layers": 2,
        "num_attention_heads": 3,
        "intermediate_size": 40,
        "max_position_embeddings": 40,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-5,
    }
    raw.update(overrides)
    cfg = minilm_files.BertConfig.from_dict(raw)
    rng = np.random.default_rng(seed)
    tensors = {
        name: (
            rng.standard_normal(shape) * (0.5 if len(shape) == 2 else 0.1)
            + (1.0 if name.endswith("LayerNorm.weight") else 0.0)
        ).astype(dtype)
        for name, shape in minilm._expected_shapes(cfg).items()
    }
    dest.mkdir(parents=True, exist_ok=True)
    save_file({prefix + k: v for k, v in tensors.items()}, str(dest / "model.safetensors"))
    (dest / "config.json").write_text(json.dumps(raw))
    shutil.copy(tokenizer_json, dest / "tokenizer.json")
    return tensors, cfg


TINY_TEXTS = ["x", "hello there general kenobi", "Ünïcödé ✨ text", "one two three four five six seven " * 8]


def test_tiny_random_model_matches_naive_bert(model_dir: Path, tmp_path: Path) -> None:
    tensors, cfg = _write_tiny_model(tmp_path, model_dir / "tokenizer.json")
    e = minilm.load(tmp_path)
    # No sentence_bert_config.json: the whole position table is usable.
    assert e.max_length == 40
    ids = e.tokenize(TINY_TEXTS)
    assert max(len(i) for i in ids) == 40
    want = _naive_bert(tensors, cfg, ids)
    for bs in (1, 2, 10):
        assert np.abs(e.embed(TINY_TEXTS, batch_size=bs) - want).max() < 2e-6


def test_bert_prefix_and_float16_weights_load(model_dir: Path, tmp_path: Path) -> None:
    plain, cfg = _write_tiny_model(tmp_path / "a", model_dir / "tokenizer.json", dtype=np.float16)
    _write_tiny_model(tmp_path / "b", model_dir / "tokenizer.json", prefix="bert.", dtype=np.float16)
    va = minilm.load(tmp_path / "a").embed(TINY_TEXTS)
    vb = minilm.load(tmp_path / "b").embed(TINY_TEXTS)
    np.testing.assert_array_equal(va, vb)
    want = _naive_bert(
        {k: v.astype(np.float32) for k, v in plain.items()}, cfg, minilm.load(tmp_path / "a").tokenize(TINY_TEXTS)
    )
    assert np.abs(va - want).max() < 2e-6


def test_gelu_matches_math_erf() -> None:
    x = np.linspace(-12, 12, 240_001, dtype=np.float32)
    # erfc form: 1 + erf(x) would cancel even in float64 on the far negative tail.
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    got = minilm._gelu_(x.copy()).astype(np.float64)
    assert np.abs(got - want).max() < 5e-7 * 12  # a few float32 ulps of |x|
    # The negative tail is where 1 + erf(x) cancels in float32 (torch's own
    # GELU is off by up to ~1e-3 relative there); erfc keeps it relative-accurate.
    tail = (x < -1) & (x >= -6)
    assert (np.abs(got - want)[tail] / np.abs(want[tail])).max() < 1e-5


# --------------------------------------------------------------------------
# behaviour


def test_output_shape_dtype_norm_and_order(emb: minilm.Embedder) -> None:
    texts = ["short", "a somewhat longer sentence about git history", "mid length text here", ""]
    v = emb.embed(texts, batch_size=2)
    assert v.shape == (4, 384) and v.dtype == np.float32 and v.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    rev = emb.embed(texts[::-1], batch_size=3)
    np.testing.assert_allclose(rev[::-1], v, atol=1e-6)
    single = np.stack([emb.embed([t])[0] for t in texts])
    np.testing.assert_allclose(single, v, atol=1e-6)


def test_empty_list(emb: minilm.Embedder) -> None:
    v = emb.embed([])
    assert v.shape == (0, 384) and v.dtype == np.float32


def test_batching_does_not_change_vectors(emb: minilm.Embedder) -> None:
    rng = np.random.default_rng(1)
    words = "git commit merge rebase branch fix bug test docs refactor ✨ café".split()
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(0, 40, size=40)]
    texts += texts[:5]  # duplicates must give identical rows
    base = emb.embed(texts, batch_size=1)
    for bs in (7, 32, 1000):
        np.testing.assert_allclose(emb.embed(texts, batch_size=bs), base, atol=2e-6)
    np.testing.assert_allclose(base[-5:], base[:5], atol=1e-7)


def test_semantics_sanity(emb: minilm.Embedder) -> None:
    v = emb.embed(
        [
            "Fix crash when the config file is missing",
            "Handle absent configuration file without crashing",
            "Bump version to 2.0 and update changelog",
        ]
    )
    assert v[0] @ v[1] > 0.6 > v[0] @ v[2]


def test_truncation_default_and_configurable(model_dir: Path, emb: minilm.Embedder) -> None:
    long_text = "word " * 600
    assert emb.max_length == 256
    assert len(emb.tokenize([long_text])[0]) == 256
    # Everything past max_length is ignored: text + extra tail embeds the same.
    a, b = emb.embed([long_text, long_text + " completely different ending"])
    np.testing.assert_allclose(a, b, atol=1e-6)

    e64 = minilm.load(model_dir, max_length=64)
    assert len(e64.tokenize([long_text])[0]) == 64
    e512 = minilm.load(model_dir, max_length=512)
    ids = e512.tokenize([long_text])[0]
    assert len(ids) == 512 and ids[0] == 101 and ids[-1] == 102
    assert np.isfinite(e512.embed([long_text])).all()


@pytest.mark.parametrize("bad", [1, 513, 0])
def test_max_length_out_of_range(model_dir: Path, bad: int) -> None:
    with pytest.raises(ValueError, match="max_length"):
        minilm.load(model_dir, max_length=bad)


def test_bad_texts_and_batch_size(emb: minilm.Embedder) -> None:
    with pytest.raises(TypeError, match="single string"):
        emb.embed("not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="NoneType"):
        emb.embed(["ok", None])  # type: ignore[list-item]
    for bs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            emb.embed(["x"], batch_size=bs)  # type: ignore[arg-type]


def test_generator_and_tuple_inputs(emb: minilm.Embedder) -> None:
    want = emb.embed(["alpha", "beta"])
    np.testing.assert_array_equal(emb.embed(t for t in ["alpha", "beta"]), want)  # type: ignore[arg-type]
    np.testing.assert_array_equal(emb.embed(("alpha", "beta")), want)


def test_concurrent_use_from_threads(emb: minilm.Embedder) -> None:
    texts = [f"commit number {i} touches module {i % 7}" for i in range(40)]
    want = emb.embed(texts)
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(emb.embed(texts, batch_size=5))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for r in results:
        np.testing.assert_allclose(r, want, atol=2e-6)


def test_runtime_is_torch_free_and_silent(model_dir: Path) -> None:
    """In a fresh interpreter: no torch/transformers imported, nothing on stdout/stderr."""
    code = (
        "import sys\nfrom git_lifeline.views import minilm\n"
        f"e = minilm.load({str(model_dir)!r})\n"
        "v = e.embed(['hello', 'world ' * 300])\n"
        "import os\n"
        "pid = os.fork()\n"  # tokenizers warns on fork after using its thread pool
        "if pid == 0: os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'sentence_transformers', 'onnxruntime', 'huggingface_hub', 'requests'))\n"
        "assert not bad, bad\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""


# --------------------------------------------------------------------------
# integrity helpers


def test_the_test_model_is_every_pinned_file_intact(model_dir: Path) -> None:
    for rel, want in minilm_files.PINNED_SHA256.items():
        assert minilm_files.file_sha256(model_dir / rel) == want, rel
    assert models.missing_or_changed(model_dir) == []


def _linked_copy(src: Path, dst: Path) -> Path:
    """Copy the small files, symlink the 90 MB weights: cheap, and edits stay local."""
    dst.mkdir()
    for p in src.rglob("*"):
        target = dst / p.relative_to(src)
        if p.is_dir():
            target.mkdir(exist_ok=True)
        elif p.name == "model.safetensors":
            target.symlink_to(p.resolve())
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, target)
    return dst


def test_a_changed_or_missing_model_file_is_named_and_an_extra_one_ignored(model_dir: Path, tmp_path: Path) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    (d / "README.md").write_text("extra files are fine")
    assert models.missing_or_changed(d) == []
    (d / "config.json").write_text((d / "config.json").read_text() + " ")
    (d / "modules.json").unlink()
    assert sorted(models.missing_or_changed(d)) == ["config.json", "modules.json"]
    assert sorted(models.missing_or_changed(tmp_path / "nope")) == sorted(minilm_files.PINNED_SHA256)


# --------------------------------------------------------------------------
# validation of the model directory


def _edit_json(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_missing_directory_and_files(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(minilm_files.ModelDirError, match="does not exist"):
        minilm.load(tmp_path / "nope")
    d = _linked_copy(model_dir, tmp_path / "m")
    (d / "tokenizer.json").unlink()
    (d / "model.safetensors").unlink()
    with pytest.raises(minilm_files.ModelDirError, match=re.escape("missing tokenizer.json, model.safetensors")):
        minilm.load(d)
    (d / "pytorch_model.bin").write_bytes(b"pickle")
    with pytest.raises(minilm_files.ModelDirError, match=re.escape("pytorch_model.bin")):
        minilm.load(d)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"hidden_act": "gelu_new"}, "hidden_act"),
        ({"model_type": "roberta"}, "model_type"),
        ({"position_embedding_type": "relative_key"}, "position_embedding_type"),
        ({"num_attention_heads": 5}, "not divisible"),
        ({"hidden_size": 768}, r"has shape \(30522, 384\), expected \(30522, 768\)"),
        ({"num_hidden_layers": 7}, "missing tensors: encoder.layer.6"),
        ({"vocab_size": 1000}, "tokenizer vocabulary"),
        ({"intermediate_size": "big"}, "bad value"),
        ({"layer_norm_eps": 0}, "layer_norm_eps"),
    ],
)
def test_bad_config_is_rejected(model_dir: Path, tmp_path: Path, changes: dict[str, Any], match: str) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    _edit_json(d / "config.json", **changes)
    with pytest.raises(minilm_files.ModelDirError, match=match):
        minilm.load(d)


def test_max_seq_length_beyond_positions_is_rejected(model_dir: Path, tmp_path: Path) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    _edit_json(d / "sentence_bert_config.json", max_seq_length=1024)
    with pytest.raises(minilm_files.ModelDirError, match="max_seq_length 1024"):
        minilm.load(d)
    assert minilm.load(d, max_length=128).max_length == 128  # an explicit value wins


def test_config_missing_key_and_broken_json(model_dir: Path, tmp_path: Path) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    data = json.loads((d / "config.json").read_text())
    del data["hidden_size"]
    (d / "config.json").write_text(json.dumps(data))
    with pytest.raises(minilm_files.ModelDirError, match="missing key 'hidden_size'"):
        minilm.load(d)
    (d / "config.json").write_text("{not json")
    with pytest.raises(minilm_files.ModelDirError, match="cannot read"):
        minilm.load(d)


def test_wrong_pooling_or_extra_modules_are_rejected(model_dir: Path, tmp_path: Path) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    _edit_json(d / "1_Pooling" / "config.json", pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    with pytest.raises(minilm_files.ModelDirError, match="mean pooling"):
        minilm.load(d)
    d2 = _linked_copy(model_dir, tmp_path / "m2")
    modules = json.loads((d2 / "modules.json").read_text())
    modules.append({"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"})
    (d2 / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(minilm_files.ModelDirError, match="Dense"):
        minilm.load(d2)


def test_corrupt_weights_and_tokenizer(model_dir: Path, tmp_path: Path) -> None:
    d = _linked_copy(model_dir, tmp_path / "m")
    (d / "model.safetensors").unlink()
    (d / "model.safetensors").write_bytes((model_dir / "model.safetensors").read_bytes()[:100_000])
    with pytest.raises(minilm_files.ModelDirError, match="cannot read weights"):
        minilm.load(d)
    d2 = _linked_copy(model_dir, tmp_path / "m2")
    (d2 / "tokenizer.json").write_text('{"version": "1.0"}')
    with pytest.raises(minilm_files.ModelDirError, match=re.escape("tokenizer.json")):
        minilm.load(d2)


def test_missing_or_misshaped_tensor(model_dir: Path, tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    tensors, _ = _write_tiny_model(tmp_path / "a", model_dir / "tokenizer.json")
    del tensors["encoder.layer.1.output.dense.bias"]
    save_file(tensors, str(tmp_path / "a" / "model.safetensors"))
    with pytest.raises(
        minilm_files.ModelDirError, match=re.escape("missing tensors: encoder.layer.1.output.dense.bias")
    ):
        minilm.load(tmp_path / "a")

    tensors, _ = _write_tiny_model(tmp_path / "b", model_dir / "tokenizer.json")
    name = "encoder.layer.0.intermediate.dense.weight"
    tensors[name] = tensors[name].T.copy()
    save_file(tensors, str(tmp_path / "b" / "model.safetensors"))
    with pytest.raises(minilm_files.ModelDirError, match=re.escape(f"{name} has shape (24, 40), expected (40, 24)")):
        minilm.load(tmp_path / "b")

    tensors, _ = _write_tiny_model(tmp_path / "c", model_dir / "tokenizer.json")
    tensors["embeddings.LayerNorm.bias"][3] = np.nan
    save_file(tensors, str(tmp_path / "c" / "model.safetensors"))
    with pytest.raises(minilm_files.ModelDirError, match="NaN"):
        minilm.load(tmp_path / "c")


def test_vectors_recall_stores_are_not_taken_for_cache_damage(model_dir: Path, repo) -> None:
    """Semantic recall stores vectors in the cache file; the stamp must follow, or every
    later open pays the full check (about a second at 100k entries) as if the file had
    been changed behind the tool's back."""

    from kit.repos import open_ledger

    from git_lifeline.views import cache_check

    git(repo, "config", "lifeline.semantic.model", str(model_dir))
    led = open_ledger(repo)
    for i, summary in enumerate(
        ["Couriers sign in with a one-time code", "Orders live in PostgreSQL", "Parcels are tracked by QR labels"]
    ):
        led.log(Draft(kind="decision", summary=summary, body=f"why {i}"))
    assert led.recall("how do drivers log in")
    cache = led.cache()
    assert cache.mode == "file"
    assert cache_check.stamp_matches(cache.path, cache._sealed.seal)
    again = open_ledger(repo)
    again.recall("how do drivers log in")
    assert again.warnings == []


@pytest.mark.parametrize(
    "damage",
    [
        "header longer than the file",
        "offsets past the data",
        "offsets that do not fit the shape",
        "header not an object",
    ],
)
def test_weights_whose_header_lies_are_refused_before_a_byte_is_read_as_a_tensor(
    model_dir: Path, tmp_path: Path, damage: str
) -> None:
    """views/minilm.py reads the safetensors format itself (a memory map, no copies): a header
    that claims more than the file holds must be refused by name, never mapped past the end
    or read as a tensor of another shape."""
    import json
    import struct

    _write_tiny_model(tmp_path, model_dir / "tokenizer.json")
    path = tmp_path / "model.safetensors"
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8 : 8 + size]), raw[8 + size :]
    name = "encoder.layer.0.output.dense.bias"
    begin, end = header[name]["data_offsets"]
    if damage == "header longer than the file":
        path.write_bytes(struct.pack("<Q", len(raw)) + raw[8:])
    else:
        if damage == "offsets past the data":
            header[name]["data_offsets"] = [begin, len(data) + 4]
        elif damage == "offsets that do not fit the shape":
            header[name]["data_offsets"] = [begin, end - 4]
        else:
            header = [header]
        text = json.dumps(header).encode()
        path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    with pytest.raises(minilm_files.ModelDirError, match="cannot read weights"):
        minilm.load(tmp_path)
