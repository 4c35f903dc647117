"""Torch-free sentence embeddings for sentence-transformers/all-MiniLM-L6-v2.

The point of this module is to give the exact vectors of the
sentence-transformers pipeline (BERT encoder -> mean pooling over the
attention mask -> L2 normalisation) while depending only on numpy,
``tokenizers`` (Rust WordPiece, so tokenisation is bit-identical to the
reference) and ``safetensors`` (reads the weights straight into numpy, no
pickle, no torch). Together those stay around 85-120 MB installed instead of the
GBs that torch pulls in, which matters for a git extension.

Nothing here touches the network: the caller hands over a local model
directory (the sentence-transformers layout). A downloader pins it with
``minilm_files``' :data:`PINNED_SHA256` (app/models.py checks each file against it).

Typical use::

    emb = load("/path/to/all-MiniLM-L6-v2")
    vecs = emb.embed(["fix typo", "Refactor the parser"])   # (2, 384) float32
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..core.json_input import read_json
from .minilm_files import REQUIRED_FILES, BertConfig, ModelDirError, check_sentence_transformers_files, read_model_json

FloatArray = npt.NDArray[np.float32]

# Tuning knobs for the forward pass (they change speed and memory, never the
# result): rows per block for the row-wise part of a layer, and the largest
# attention score tensor (elements) computed in one call.
_ROW_BLOCK: Final[int] = 512
_ATTN_SCORE_BUDGET: Final[int] = 1 << 21


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


# safetensors' element types this encoder reads (anything else is refused by name)
_DTYPES: Final[Mapping[str, type[np.floating[Any]]]] = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
_HEADER_MAX: Final[int] = 1 << 24  # a safetensors header of 16 MiB is not a MiniLM


def _mapped_tensors(path: Path) -> dict[str, npt.NDArray[np.floating[Any]] | str]:
    """The tensors of a safetensors file as read-only views of one memory map of it: the
    format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape,
    [begin, end) in the data after it) and the raw data. Nothing is read until used, so a
    question touches the layers and the few rows of the word table it needs, not 90 MB
    (get_tensor copied each tensor: 0.17 s of a first question's CPU)."""
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    if len(mapped) < 8:
        raise ValueError("shorter than a safetensors header")
    size = int.from_bytes(bytes(mapped[:8]), "little")
    if not 2 <= size <= min(_HEADER_MAX, len(mapped) - 8):
        raise ValueError(f"header length {size} does not fit the file")
    header = read_json(bytes(mapped[8 : 8 + size]), _HEADER_MAX)
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    data = mapped[8 + size :]
    out: dict[str, npt.NDArray[np.floating[Any]] | str] = {}  # a str: the dtype of a tensor not read
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(spec, dict):
            raise ValueError(f"tensor {name}: not described by an object")
        dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
        if not (
            isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
        ):
            raise ValueError(f"tensor {name}: bad shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(n, int) for n in offsets)):
            raise ValueError(f"tensor {name}: bad data_offsets {offsets!r}")
        begin, end = offsets
        if not 0 <= begin <= end <= len(data):
            raise ValueError(f"tensor {name}: data_offsets {offsets} do not fit the file")
        if dtype not in _DTYPES:  # position ids (I64) and the like: named, never read
            out[name] = str(dtype)
            continue
        kind = np.dtype(_DTYPES[str(dtype)])
        if end - begin != math.prod(shape) * kind.itemsize:
            raise ValueError(f"tensor {name}: data_offsets {offsets} do not fit its shape")
        out[name] = data[begin:end].view(kind).reshape(shape)
    return out


def _load_tensors(path: Path, cfg: BertConfig) -> dict[str, FloatArray]:
    """Map exactly the tensors the encoder needs, checking names, shapes and dtypes.

    Float16 and float64 weights are converted to float32 (copies); float32 ones stay views
    of the file's memory map. Checkpoints saved from ``BertModel`` inside another model
    carry a ``bert.`` prefix; both spellings are accepted.
    """
    expected = _expected_shapes(cfg)
    out: dict[str, FloatArray] = {}
    try:
        mapped = _mapped_tensors(path)
        prefix = "" if "embeddings.word_embeddings.weight" in mapped else "bert."
        missing = [k for k in expected if prefix + k not in mapped]
        if missing:
            shown = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
            raise ModelDirError(f"{path}: missing tensors: {shown}")
        for name, shape in expected.items():
            arr = mapped[prefix + name]
            if isinstance(arr, str):
                raise ModelDirError(f"{path}: tensor {name} has unsupported dtype {arr}")
            if tuple(arr.shape) != shape:
                raise ModelDirError(
                    f"{path}: tensor {name} has shape {tuple(arr.shape)}, expected {shape} from config.json"
                )
            out[name] = arr if arr.dtype == np.float32 else arr.astype(np.float32)
    except ModelDirError:
        raise
    except Exception as exc:  # a truncated or malformed file: whatever numpy or the header says
        raise ModelDirError(f"cannot read weights {path}: {exc}") from None
    for name, arr in out.items():
        if not np.isfinite(arr).all():
            raise ModelDirError(f"{path}: tensor {name} contains NaN or Inf")
    return out


def _build_layers(t: dict[str, FloatArray], cfg: BertConfig) -> list[_Layer]:
    """Re-lay the encoder weights for the forward pass, consuming them from ``t``.

    The weights stay views of the file's memory map, transposed where the matmul needs
    it; only Q, K and V are copied, fused into one matrix.
    """
    scale = np.float32(1.0 / math.sqrt(cfg.head_dim))
    layers: list[_Layer] = []
    for n in range(cfg.num_hidden_layers):
        p = f"encoder.layer.{n}."
        # torch Linear stores (out, in); every matmul at run time is x @ W with W its
        # transpose: a view (BLAS reads it transposed, no copy of the mapped file), and for
        # Q, K and V one (in, 3 out) copy, the only one made of the encoder's weights.
        w_qkv = np.concatenate(
            [
                t.pop(f"{p}attention.self.query.weight").T * scale,
                t.pop(f"{p}attention.self.key.weight").T,
                t.pop(f"{p}attention.self.value.weight").T,
            ],
            axis=1,
        )
        b_qkv = np.concatenate(
            [
                t.pop(f"{p}attention.self.query.bias") * scale,
                t.pop(f"{p}attention.self.key.bias"),
                t.pop(f"{p}attention.self.value.bias"),
            ]
        )
        layers.append(
            _Layer(
                w_qkv=w_qkv,
                b_qkv=b_qkv,
                w_attn_out=t.pop(f"{p}attention.output.dense.weight").T,
                b_attn_out=t.pop(f"{p}attention.output.dense.bias"),
                ln1_g=t.pop(f"{p}attention.output.LayerNorm.weight"),
                ln1_b=t.pop(f"{p}attention.output.LayerNorm.bias"),
                w_in=t.pop(f"{p}intermediate.dense.weight").T,
                b_in=t.pop(f"{p}intermediate.dense.bias"),
                w_out=t.pop(f"{p}output.dense.weight").T,
                b_out=t.pop(f"{p}output.dense.bias"),
                ln2_g=t.pop(f"{p}output.LayerNorm.weight"),
                ln2_b=t.pop(f"{p}output.LayerNorm.bias"),
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
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)
_INV_SQRT2: Final = np.float32(1.0 / math.sqrt(2.0))


def _gelu_(x: FloatArray, scratch: Sequence[FloatArray] | None = None) -> FloatArray:
    """Exact (erf) GELU in place, as relu(x) - |x| * Phi(-|x|).

    That form never subtracts nearly equal numbers, so the negative tail keeps
    its relative accuracy (torch's float32 ``1 + erf`` does not), and it needs
    no select between the two signs: ``where=``/``np.where`` are several
    times slower than plain arithmetic passes in numpy. ``scratch`` (three
    arrays of x's shape) lets the hot loop reuse memory instead of paying
    page faults for fresh multi-MB temporaries on every call.
    """
    if scratch is None:
        b, t, e = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    else:
        b, t, e = scratch
    np.abs(x, out=b)
    b *= _INV_SQRT2  # b = |x| / sqrt2, so Phi(-|x|) = erfc(b) / 2
    np.add(b, np.float32(2.0), out=t)
    np.divide(np.float32(2.0), t, out=t)  # t = 1 / (1 + b/2)
    np.multiply(t, np.float32(_ERFC_COEFFS[0]), out=e)
    for c in _ERFC_COEFFS[1:-1]:
        e += np.float32(c)
        e *= t
    # The last constant also absorbs 1/sqrt2 (|x| = sqrt2 * b) and the 1/2 of
    # Phi = erfc / 2, so that exp(P - b^2 + k) * t * b = |x| * Phi(-|x|).
    e += np.float32(_ERFC_COEFFS[-1] - 0.5 * math.log(2.0))
    t *= b  # t is needed once more, as t * b; b is then free for b^2
    b *= b
    e -= b
    np.exp(e, out=e)
    e *= t
    np.maximum(x, np.float32(0.0), out=x)
    x -= e
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
        model_dir: Path,
    ) -> None:
        self.config: Final = config
        self.max_length: Final = max_length
        self.model_dir: Final = model_dir
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
        checked = _check_texts(texts)
        # encode() one by one rather than encode_batch(): measured equally
        # fast here (~0.05 ms per commit subject, <1% of the model's time),
        # and it never starts the Rust thread pool, which some tokenizers
        # releases warn about (on stderr) when the host process later forks.
        enc = self._tokenizer.encode
        return [enc(t).ids for t in checked]

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
        # split so one run's score tensor stays within _ATTN_SCORE_BUDGET.
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
        positions = np.concatenate([np.tile(np.arange(length), count) for _, count, length in runs])

        # All working memory is allocated once per batch and reused by every
        # layer: fresh multi-MB temporaries cost page faults on each use,
        # which showed up as a large share of the run time.
        f32 = np.float32
        block = min(_ROW_BLOCK, n_tokens)
        qkv = np.empty((n_tokens, 3 * h), dtype=f32)
        ctx = np.empty((n_tokens, h), dtype=f32)
        x_next = np.empty((n_tokens, h), dtype=f32)
        score_buf = np.empty(max(count * nh * length * length for _, count, length in runs), dtype=f32)
        a_buf = np.empty((block, h), dtype=f32)
        inter_buf = np.empty((block, cfg.intermediate_size), dtype=f32)
        gelu_bufs = [np.empty((block, cfg.intermediate_size), dtype=f32) for _ in range(3)]

        x = self._word_emb[flat_ids]  # fancy indexing copies: safe to modify
        x += self._pos_type_emb[positions]
        _layer_norm_(x, self._emb_ln_g, self._emb_ln_b, eps)

        for layer in self._layers:
            np.matmul(x, layer.w_qkv, out=qkv)
            qkv += layer.b_qkv
            for start, count, length in runs:
                stop = start + count * length
                blk = qkv[start:stop].reshape(count, length, 3, nh, hd)
                # Strided views, no copies: every inner (length x head_dim)
                # matrix has unit column stride, so matmul still hands them to BLAS.
                q = blk[:, :, 0].transpose(0, 2, 1, 3)  # (count, heads, L, hd), pre-scaled
                k_t = blk[:, :, 1].transpose(0, 2, 3, 1)  # (count, heads, hd, L)
                v = blk[:, :, 2].transpose(0, 2, 1, 3)
                scores = score_buf[: count * nh * length * length].reshape(count, nh, length, length)
                np.matmul(q, k_t, out=scores)
                # No mask: the batch is packed, every key is a real token.
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                np.matmul(scores, v, out=ctx[start:stop].reshape(count, length, nh, hd).transpose(0, 2, 1, 3))

            # Everything after attention is row-wise, so it runs in row blocks
            # that keep the 4x-wide FFN activations in cache.
            for r in range(0, n_tokens, block):
                m = min(block, n_tokens - r)
                a, inter = a_buf[:m], inter_buf[:m]
                np.matmul(ctx[r : r + m], layer.w_attn_out, out=a)
                a += layer.b_attn_out
                a += x[r : r + m]
                _layer_norm_(a, layer.ln1_g, layer.ln1_b, eps)
                np.matmul(a, layer.w_in, out=inter)
                inter += layer.b_in
                _gelu_(inter, [g[:m] for g in gelu_bufs])
                out = x_next[r : r + m]
                np.matmul(inter, layer.w_out, out=out)
                out += layer.b_out
                out += a
                _layer_norm_(out, layer.ln2_g, layer.ln2_b, eps)
            x, x_next = x_next, x

        # Mean over each text's own tokens (sentence-transformers Pooling with
        # its attention mask), then L2 with torch's F.normalize eps.
        pooled = np.empty((len(seqs), h), dtype=f32)
        first = 0
        for start, count, length in runs:
            pooled[first : first + count] = x[start : start + count * length].reshape(count, length, h).mean(axis=1)
            first += count
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled /= np.maximum(norms, f32(1e-12))
        return pooled


def _check_texts(texts: Sequence[str]) -> list[str]:
    # A bare string is a Sequence[str] too; embedding it character by
    # character is never what the caller meant. list() also makes a
    # generator safe to pass (it is consumed once, here).
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a list of strings, not a single string")
    texts = list(texts)
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

    raw_cfg = read_model_json(root / "config.json")
    if not isinstance(raw_cfg, dict):
        raise ModelDirError(f"{root / 'config.json'}: expected a JSON object")
    cfg = BertConfig.from_dict(raw_cfg, source=str(root / "config.json"))
    st_max = check_sentence_transformers_files(root)

    if max_length is None:
        if st_max is not None and not 2 <= st_max <= cfg.max_position_embeddings:
            raise ModelDirError(
                f"sentence_bert_config.json: max_seq_length {st_max} does not fit the model's "
                f"{cfg.max_position_embeddings} positions"
            )
        max_length = st_max if st_max is not None else cfg.max_position_embeddings
    if isinstance(max_length, bool) or not isinstance(max_length, int):
        raise TypeError(f"max_length must be an int, got {max_length!r}")
    if not 2 <= max_length <= cfg.max_position_embeddings:
        raise ValueError(
            f"max_length must be between 2 and max_position_embeddings={cfg.max_position_embeddings}, got {max_length}"
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
    return Embedder(cfg, tokenizer, tensors, max_length, root)
