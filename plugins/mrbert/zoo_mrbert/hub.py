"""Load the released MrBERT checkpoints (Hugging Face ``BSC-LT/MrBERT``, ``-es``, ``-ca``, ``-legal``, ``-science``).

They are ``ModernBertForMaskedLM`` folders: ``config.json`` (a ModernBERT config), ``model.safetensors`` and
``tokenizer.json``. Nothing is downloaded here; fetch a folder first, e.g.
``huggingface-cli download BSC-LT/MrBERT --local-dir mrbert-hf``, then

    >>> model = from_official("mrbert-hf/model.safetensors")     # doctest: +SKIP
    >>> model.embed(["El gat dorm.", "The cat sleeps."], dim=256)  # doctest: +SKIP

or ``zoo convert mrbert.official mrbert-hf/model.safetensors --to DIR``. The names map one to one
(``NAME_MAP``; the ``model.`` prefix of the masked-LM class is stripped, its MLM head ``head.*`` /
``decoder.*`` dropped: MrBERT's embeddings are the encoder's pooled states):

    embeddings.tok_embeddings.weight   -> encoder.tok_emb.weight
    embeddings.norm.weight             -> encoder.emb_norm.weight
    layers.{i}.attn_norm.weight        -> encoder.blocks.{i}.attn_norm.weight   (absent for layer 0)
    layers.{i}.attn.Wqkv.weight        -> encoder.blocks.{i}.attn.qkv.weight    (q, k, v stacked, heads inside)
    layers.{i}.attn.Wo.weight          -> encoder.blocks.{i}.attn.out.weight
    layers.{i}.mlp_norm.weight         -> encoder.blocks.{i}.mlp_norm.weight
    layers.{i}.mlp.Wi.weight           -> encoder.blocks.{i}.mlp.wi.weight      (GeGLU input half, then gate half)
    layers.{i}.mlp.Wo.weight           -> encoder.blocks.{i}.mlp.wo.weight
    final_norm.weight                  -> encoder.final_norm.weight

The tokenizer (SentencePiece-derived ``tokenizer.json``) is attached when the ``tokenizers`` package is
installed; it is not part of a zoo save (``attach_tokenizer`` again after loading a converted folder).
"""
from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import torch

__all__ = ["NAME_MAP", "config_from_hf", "from_hf_names", "to_hf_names", "load_official", "from_official",
           "attach_tokenizer"]

log = logging.getLogger(__name__)

NAME_MAP = {
    r"embeddings\.tok_embeddings\.weight": "encoder.tok_emb.weight",
    r"embeddings\.norm\.weight": "encoder.emb_norm.weight",
    r"layers\.(\d+)\.attn_norm\.weight": r"encoder.blocks.\1.attn_norm.weight",
    r"layers\.(\d+)\.attn\.Wqkv\.weight": r"encoder.blocks.\1.attn.qkv.weight",
    r"layers\.(\d+)\.attn\.Wo\.weight": r"encoder.blocks.\1.attn.out.weight",
    r"layers\.(\d+)\.mlp_norm\.weight": r"encoder.blocks.\1.mlp_norm.weight",
    r"layers\.(\d+)\.mlp\.Wi\.weight": r"encoder.blocks.\1.mlp.wi.weight",
    r"layers\.(\d+)\.mlp\.Wo\.weight": r"encoder.blocks.\1.mlp.wo.weight",
    r"final_norm\.weight": "encoder.final_norm.weight",
}
_MLM_HEAD = re.compile(r"(head|decoder)\.")


def _theta(cfg: dict[str, Any], kind: str, old: str, default: float) -> float:
    rope = cfg.get("rope_parameters") or {}
    return float((rope.get(kind) or {}).get("rope_theta", cfg.get(old, default)))


def config_from_hf(cfg: dict[str, Any]) -> dict[str, Any]:
    """``mrbert`` builder arguments from a ModernBERT ``config.json`` (old and new transformers spellings).

    >>> config_from_hf({"hidden_size": 768, "num_hidden_layers": 22, "num_attention_heads": 12,
    ...                 "intermediate_size": 1152, "vocab_size": 256000})["local_window"]
    128
    """
    for key, ok in (("norm_bias", False), ("attention_bias", False), ("mlp_bias", False)):
        if cfg.get(key, ok) != ok:
            raise ValueError(f"config.json has {key}={cfg[key]}: MrBERT/ModernBERT checkpoints have no biases here")
    if cfg.get("hidden_activation", "gelu") not in ("gelu", "gelu_python"):
        raise ValueError(f"config.json hidden_activation={cfg['hidden_activation']!r}: only GeGLU with GELU is built")
    every = int(cfg.get("global_attn_every_n_layers", 3))
    layers = int(cfg.get("num_hidden_layers", 22))
    types = cfg.get("layer_types")
    if types is not None and list(types) != ["full_attention" if i % every == 0 else "sliding_attention"
                                             for i in range(layers)]:
        raise ValueError(f"config.json layer_types {types} is not 'global every {every} layers from the first'")
    dim = int(cfg.get("hidden_size", 768))
    return {"vocab_size": int(cfg.get("vocab_size", 50368)), "dim": dim, "layers": layers,
            "heads": int(cfg.get("num_attention_heads", 12)), "intermediate": int(cfg.get("intermediate_size", 1152)),
            "local_window": int(cfg.get("local_attention", 128)), "global_every": every,
            "global_theta": _theta(cfg, "full_attention", "global_rope_theta", 160_000.0),
            "local_theta": _theta(cfg, "sliding_attention", "local_rope_theta", 10_000.0),
            "eps": float(cfg.get("norm_eps", 1e-5)), "pad_id": int(cfg.get("pad_token_id", 0)),
            "max_len": int(cfg.get("max_position_embeddings", 8192)), "dropout": 0.0}


def from_hf_names(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A ModernBERT state dict (``ModernBertModel`` or ``ModernBertForMaskedLM`` names) renamed onto ``MrBERT``.

    Raises KeyError naming any tensor that is neither an encoder weight nor the MLM head.
    """
    out, unknown = {}, []
    for name, t in state.items():
        key = name.removeprefix("model.")
        if _MLM_HEAD.match(name):
            continue
        for pat, new in NAME_MAP.items():
            if re.fullmatch(pat, key):
                out[re.sub(pat, new, key)] = t
                break
        else:
            unknown.append(name)
    if unknown:
        raise KeyError(f"not ModernBERT encoder weights: {unknown[:8]}{' ...' if len(unknown) > 8 else ''}")
    return out


def to_hf_names(state: dict[str, torch.Tensor], prefix: str = "model.") -> dict[str, torch.Tensor]:
    """The inverse of ``from_hf_names``: a ``MrBERT`` state dict under ModernBERT's names (``prefix`` added)."""
    inverse = {
        r"encoder\.tok_emb\.weight": "embeddings.tok_embeddings.weight",
        r"encoder\.emb_norm\.weight": "embeddings.norm.weight",
        r"encoder\.blocks\.(\d+)\.attn_norm\.weight": r"layers.\1.attn_norm.weight",
        r"encoder\.blocks\.(\d+)\.attn\.qkv\.weight": r"layers.\1.attn.Wqkv.weight",
        r"encoder\.blocks\.(\d+)\.attn\.out\.weight": r"layers.\1.attn.Wo.weight",
        r"encoder\.blocks\.(\d+)\.mlp_norm\.weight": r"layers.\1.mlp_norm.weight",
        r"encoder\.blocks\.(\d+)\.mlp\.wi\.weight": r"layers.\1.mlp.Wi.weight",
        r"encoder\.blocks\.(\d+)\.mlp\.wo\.weight": r"layers.\1.mlp.Wo.weight",
        r"encoder\.final_norm\.weight": "final_norm.weight",
    }
    out = {}
    for name, t in state.items():
        for pat, new in inverse.items():
            if re.fullmatch(pat, name):
                out[prefix + re.sub(pat, new, name)] = t
                break
        else:
            raise KeyError(f"{name}: not a weight of the ModernBERT encoder")
    return out


def load_official(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(state dict, config.json) of a released checkpoint: ``path`` is its ``model.safetensors`` or its folder."""
    from safetensors.torch import load_file

    path = Path(path)
    weights = path / "model.safetensors" if path.is_dir() else path
    cfg_file = weights.parent / "config.json"
    if not weights.is_file() or not cfg_file.is_file():
        raise FileNotFoundError(f"{path}: expected model.safetensors with config.json beside it (download the folder "
                                f"with `huggingface-cli download BSC-LT/MrBERT --local-dir DIR`)")
    return load_file(str(weights)), json.loads(cfg_file.read_text(encoding="utf-8"))


def attach_tokenizer(model: Any, path: str | Path) -> Any:
    """Make ``model.embed`` tokenize with the checkpoint's ``tokenizer.json`` (needs the ``tokenizers`` package)."""
    from tokenizers import Tokenizer

    model.hf_tokenizer = Tokenizer.from_file(str(path))
    return model


def from_official(path: str | Path, **overrides: Any) -> torch.nn.Module:
    """The ``mrbert`` model holding a released checkpoint's encoder (strict: every encoder weight must be there).

    ``overrides`` go to the builder (``nesting=``, ``pooling=``, ``max_len=``).
    """
    import zoo

    state, cfg = load_official(path)
    from .mrl import doubling

    args = config_from_hf(cfg)
    args = {"nesting": list(doubling(args["dim"], 64 if args["dim"] >= 128 else 8)), **args, **overrides}
    model = zoo.create("mrbert", **args)
    mapped = from_hf_names(state)
    result = model.load_state_dict(mapped, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise KeyError(f"{path}: the checkpoint does not match mrbert({args}): missing {sorted(result.missing_keys)}, "
                       f"unexpected {sorted(result.unexpected_keys)}")
    tok = Path(path) if Path(path).is_dir() else Path(path).parent
    if (tok / "tokenizer.json").is_file():
        try:
            attach_tokenizer(model, tok / "tokenizer.json")
        except ImportError:
            log.warning("tokenizers is not installed: embed() needs it for %s; pass ids to forward()", tok)
    return model.eval()
