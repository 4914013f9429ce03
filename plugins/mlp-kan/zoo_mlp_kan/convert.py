"""Convert the authors' MLP-KAN checkpoint into a zoo ``mlp_kan_deit`` model (``zoo convert``).

The official training script (github.com/DLYuanGod/MLP-KAN, ``main.py``, DeiT's) saves
``checkpoint.pth`` / ``best_checkpoint.pth`` with ``torch.save`` of a dict: ``"model"`` (the
``VisionKAN`` state dict), ``"optimizer"``, ``"lr_scheduler"``, ``"epoch"``, ``"model_ema"``,
``"scaler"`` and ``"args"`` (an ``argparse.Namespace``). ``VisionKAN`` is timm's
``VisionTransformer`` whose blocks (``kanBlock``) hold the mixture as ``kan``: ``kan.gate`` (bias-free
linear), ``kan.experts.0..E/2-1`` (timm ``Mlp``: ``fc1``, ``fc2``) and ``kan.experts.E/2..E-1``
(``FasterKAN``: ``layers.L.layernorm``, ``layers.L.rbf.grid``, ``layers.L.rbf.inv_denominator``,
``layers.L.spline_linear``). ``kanBlock`` also inherits timm's ``Block.mlp`` (``blocks.N.mlp.fc1/fc2``),
which its forward never calls: those keys are dropped.

The file is read with ``torch.load(weights_only=True)``; only ``argparse.Namespace`` is allowed in
addition to tensors and containers (for ``"args"``). The architecture (width, depth, classes, patch
and image size, experts, ``hdim_kan``, FasterKAN grid size) is read from the tensors' shapes; the head
count, which no tensor holds, from ``args.model`` (DeiT tiny/small/base: 3/6/12) or ``dim // 64``.
"""
from __future__ import annotations

import argparse
import logging
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

log = logging.getLogger(__name__)

MODEL_NAME = "mlp_kan_deit"
_HEADS = {"tiny": 3, "small": 6, "base": 12}

# official key pattern -> zoo key (applied in order; a key matching none is kept as is)
_RENAMES: list[tuple[str, str]] = [
    (r"^patch_embed\.proj\.", "patch."),
    (r"^cls_token$", "cls"),
    (r"^pos_embed$", "pos"),
    (r"^(blocks\.\d+)\.kan\.(experts\.\d+\.layers\.\d+)\.layernorm\.", r"\1.ffn.\2.norm."),
    (r"^(blocks\.\d+)\.kan\.(experts\.\d+\.layers\.\d+)\.rbf\.", r"\1.ffn.\2."),
    (r"^(blocks\.\d+)\.kan\.", r"\1.ffn."),
]
_UNUSED = re.compile(r"^blocks\.\d+\.mlp\.")  # timm Block.mlp, built but never called by kanBlock


def load_official(path: str | Path) -> tuple[dict[str, torch.Tensor], str]:
    """The ``VisionKAN`` state dict inside an official checkpoint file (or a bare state dict file), and
    the checkpoint's ``args.model`` name ("" when absent)."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    args = ckpt.get("args") if isinstance(ckpt, dict) else None
    state = ckpt
    if isinstance(ckpt, dict):
        for key in ("model", "state_dict"):
            if key in ckpt and isinstance(ckpt[key], Mapping):
                state = ckpt[key]
                break
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path}: no state dict found (expected the official checkpoint dict with a 'model' entry)")
    state = {k.removeprefix("module."): v for k, v in state.items()}
    return state, str(getattr(args, "model", "") or "")


def map_keys(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Official key names -> zoo ``MLPKANViT`` key names (unused ``blocks.N.mlp.*`` dropped)."""
    out: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if _UNUSED.match(key):
            continue
        for pattern, repl in _RENAMES:
            new = re.sub(pattern, repl, key)
            if new != key:
                key = new
                break
        out[key] = value
    return out


def infer_config(state: Mapping[str, torch.Tensor], name: str = "") -> dict[str, Any]:
    """Builder arguments of ``mlp_kan_deit`` from the official tensors' shapes."""
    proj = state["patch_embed.proj.weight"]  # (dim, in_chans, p, p)
    dim, in_chans, patch = proj.shape[0], proj.shape[1], proj.shape[2]
    n_patches = state["pos_embed"].shape[1] - 1
    depth = 1 + max(int(m.group(1)) for k in state if (m := re.match(r"blocks\.(\d+)\.", k)))
    num_experts = state["blocks.0.kan.gate.weight"].shape[0]
    ffn_dim = state["blocks.0.kan.experts.0.fc1.weight"].shape[0]
    num_grids = state[f"blocks.0.kan.experts.{num_experts // 2}.layers.0.spline_linear.weight"].shape[1] // dim
    heads = next((h for size, h in _HEADS.items() if f"_{size}_" in name), max(1, dim // 64))
    return {"num_classes": state["head.weight"].shape[0], "in_chans": in_chans,
            "img_size": int(round(math.sqrt(n_patches))) * patch, "patch_size": patch, "dim": dim, "depth": depth,
            "heads": heads, "ffn_dim": ffn_dim, "num_experts": num_experts,
            "qkv_bias": "blocks.0.attn.qkv.bias" in state, "num_grids": num_grids}


def from_official(path: str | Path, **overrides: Any) -> torch.nn.Module:
    """Read an official MLP-KAN checkpoint and return the zoo model holding its weights.

    ``overrides`` replace inferred builder arguments (e.g. ``heads=`` for a non-DeiT name). Raises
    ``WeightsMismatch``-style errors (missing/unexpected keys listed) through ``load_state_dict(strict=True)``.

    >>> model = from_official("best_checkpoint.pth")  # doctest: +SKIP
    """
    import zoo

    state, name = load_official(path)
    config = {**infer_config(state, name), **overrides}
    log.info("mlp-kan convert: %s -> %s(%s)", path, MODEL_NAME, config)
    model = zoo.create(MODEL_NAME, **config)
    mapped = map_keys(state)
    result = model.load_state_dict(mapped, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise KeyError(f"{path}: the checkpoint does not match {MODEL_NAME}({config}): "
                       f"missing {sorted(result.missing_keys)}, unexpected {sorted(result.unexpected_keys)}")
    return model.eval()
