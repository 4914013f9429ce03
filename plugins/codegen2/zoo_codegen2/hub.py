"""Convert the released CodeGen2 checkpoints (Hugging Face ``Salesforce/codegen2-1B`` ...) into this plugin's module.

Nothing is downloaded here. Fetch the release first (its ``config.json`` beside the weights), then
``zoo convert codegen2.official DIR/model.safetensors --to OUT`` or ``from_official("DIR/model.safetensors")``.
The release's ``pytorch_model.bin`` is a pickle: ``from_official(path, allow_pickle=True)`` reads it with
``torch.load(weights_only=True)``; ``zoo convert`` takes safetensors only.

Names (``CodeGenForCausalLM``, transformers 4.25) onto ``CodeGen2``:

    transformer.wte.weight               -> tok.weight
    transformer.h.{i}.ln_1.{weight,bias} -> blocks.{i}.ln.{weight,bias}
    transformer.h.{i}.attn.qkv_proj.weight -> blocks.{i}.attn.qkv.weight   (re-laid out, see below)
    transformer.h.{i}.attn.out_proj.weight -> blocks.{i}.attn.out.weight
    transformer.h.{i}.mlp.fc_in.{weight,bias}  -> blocks.{i}.mlp.up.{weight,bias}
    transformer.h.{i}.mlp.fc_out.{weight,bias} -> blocks.{i}.mlp.down.{weight,bias}
    transformer.ln_f.{weight,bias}       -> norm.{weight,bias}
    lm_head.{weight,bias}                -> head.{weight,bias}
    transformer.h.{i}.attn.{causal_mask,bias,masked_bias}: buffers, dropped

The released fused projection was written for 4-way model parallelism (``MP_NUM = 4``): its ``3 * dim`` output rows
are 4 blocks, each holding (query, value, key) for a quarter of the heads, in that order. ``qkv_from_codegen``
reorders them into (all queries, all keys, all values), heads in order, which is what ``CodeGenAttention`` reads.
Checked offline only: ``tests/test_codegen2.py`` writes a scaled-down state dict with these names and shapes and
compares this module with a direct re-implementation of the released attention layout; no real checkpoint was
converted here.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch

from .model import CodeGen2

__all__ = ["NAME_MAP", "MP_NUM", "config_from_hf", "qkv_from_codegen", "qkv_to_codegen", "from_hf_names",
           "from_official"]

MP_NUM = 4
NAME_MAP = {
    r"transformer\.wte\.weight": "tok.weight",
    r"transformer\.h\.(\d+)\.ln_1\.(weight|bias)": r"blocks.\1.ln.\2",
    r"transformer\.h\.(\d+)\.attn\.qkv_proj\.weight": r"blocks.\1.attn.qkv.weight",
    r"transformer\.h\.(\d+)\.attn\.out_proj\.weight": r"blocks.\1.attn.out.weight",
    r"transformer\.h\.(\d+)\.mlp\.fc_in\.(weight|bias)": r"blocks.\1.mlp.up.\2",
    r"transformer\.h\.(\d+)\.mlp\.fc_out\.(weight|bias)": r"blocks.\1.mlp.down.\2",
    r"transformer\.ln_f\.(weight|bias)": r"norm.\1",
    r"lm_head\.(weight|bias)": r"head.\1",
}
_BUFFERS = re.compile(r"transformer\.h\.\d+\.attn\.(causal_mask|bias|masked_bias)")


def config_from_hf(cfg: dict[str, Any]) -> dict[str, Any]:
    """``CodeGen2`` arguments from a CodeGen ``config.json``.

    >>> config_from_hf({"n_embd": 2048, "n_layer": 16, "n_head": 16, "rotary_dim": 64, "n_positions": 2048,
    ...                 "vocab_size": 51200})["mlp_ratio"]
    4.0
    """
    if cfg.get("activation_function", "gelu_new") != "gelu_new":
        raise ValueError(f"config.json activation_function={cfg['activation_function']!r}: only gelu_new is built")
    if cfg.get("tie_word_embeddings", False):
        raise ValueError("config.json ties the embeddings: CodeGen2 releases an untied lm_head")
    dim = int(cfg["n_embd"])
    inner = cfg.get("n_inner") or 4 * dim
    return {"vocab_size": int(cfg["vocab_size"]), "dim": dim, "depth": int(cfg["n_layer"]), "heads": int(cfg["n_head"]),
            "rotary_dim": int(cfg.get("rotary_dim") or dim // int(cfg["n_head"])),
            "block_size": int(cfg.get("n_positions", 2048)), "mlp_ratio": inner / dim,
            "eps": float(cfg.get("layer_norm_epsilon", 1e-5))}


def qkv_from_codegen(w: torch.Tensor, heads: int, mp_num: int = MP_NUM) -> torch.Tensor:
    """The released ``qkv_proj.weight`` (3 dim, dim), laid out [mp][q|v|k][head in block][head dim], as
    [q|k|v][head][head dim]."""
    three_d, dim = w.shape
    if three_d != 3 * dim or heads % mp_num:
        raise ValueError(f"qkv_proj.weight {tuple(w.shape)} with {heads} heads does not fit {mp_num}-way blocks")
    per = heads // mp_num
    blocks = w.view(mp_num, 3, per, dim // heads, dim)  # mp, (q, v, k), head in block, head dim, in
    q, v, k = blocks[:, 0], blocks[:, 1], blocks[:, 2]
    return torch.cat([t.reshape(dim, dim) for t in (q, k, v)])  # (mp, per) flattens to heads in order


def qkv_to_codegen(w: torch.Tensor, heads: int, mp_num: int = MP_NUM) -> torch.Tensor:
    """The inverse of ``qkv_from_codegen``."""
    dim = w.shape[1]
    per = heads // mp_num
    q, k, v = (t.reshape(mp_num, per, dim // heads, dim) for t in w.split(dim))
    return torch.stack([q, v, k], dim=1).reshape(3 * dim, dim)


def from_hf_names(state: dict[str, torch.Tensor], heads: int) -> dict[str, torch.Tensor]:
    """A ``CodeGenForCausalLM`` state dict renamed (and its qkv re-laid out) onto ``CodeGen2``.

    Raises KeyError naming every tensor that is neither a weight of the map nor a known buffer.
    """
    out, unknown = {}, []
    for name, t in state.items():
        if _BUFFERS.fullmatch(name):
            continue
        for pat, new in NAME_MAP.items():
            if re.fullmatch(pat, name):
                key = re.sub(pat, new, name)
                out[key] = qkv_from_codegen(t, heads) if key.endswith("attn.qkv.weight") else t
                break
        else:
            unknown.append(name)
    if unknown:
        raise KeyError(f"not CodeGen weights: {unknown[:8]}{' ...' if len(unknown) > 8 else ''}")
    return out


def _load_state(path: Path, allow_pickle: bool) -> dict[str, torch.Tensor]:
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    if not allow_pickle:
        raise ValueError(f"{path}: a pickle checkpoint; pass allow_pickle=True to read it with "
                         "torch.load(weights_only=True), or give the safetensors file")
    return torch.load(path, map_location="cpu", weights_only=True)


def from_official(path: str | Path, *, allow_pickle: bool = False) -> CodeGen2:
    """``CodeGen2`` with the released weights of ``path`` (``config.json`` must sit beside it), in float32.

    >>> from_official("codegen2-1B/model.safetensors")  # doctest: +SKIP
    """
    path = Path(path)
    cfg_path = path.with_name("config.json")
    if not cfg_path.is_file():
        raise FileNotFoundError(f"{cfg_path}: put the release's config.json beside {path.name} (it fixes the heads)")
    args = config_from_hf(json.loads(cfg_path.read_text()))
    state = from_hf_names(_load_state(path, allow_pickle), args["heads"])
    import zoo  # the factory records the builder arguments, so save_pretrained / zoo convert can write config.json

    model = zoo.create("codegen2", preset="paper", **args)
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    return model.eval()
