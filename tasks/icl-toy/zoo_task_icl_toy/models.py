"""The two GPTs of ``icl_toy``, trained in code once per configuration and cached as safetensors.

* ``token``: ``HookedGPT`` (dim 64, 4 layers, 4 heads) on prompts of the eight token tasks with 8 demonstrations,
  cross-entropy on every output token (the demonstrations' and the query's: every prefix is a k-shot prompt);
* ``regression``: ``RegressionGPT`` (dim 64, 4 layers, 4 heads) on Garg et al. 2022's in-context linear regression,
  d = 4, up to 20 shots (drawn uniformly per batch), a fresh ``w ~ N(0, I)`` per prompt, squared error of the query.

AdamW (lr 1e-3, weight decay 0.01 on matrices, linear warm-up over 100 steps, cosine decay), batches of 64, seeded
(``TRAIN_SEED``); about 1-3 minutes each on one CPU thread. The file lives under ``zoo.weights.cache_dir()/icl_toy``,
named by a hash of the configuration, and is written atomically (``zoo.fileio.atomic_path``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from zoo.fileio import atomic_path
from zoo.task import run_budget, status, torch_threads
from zoo.weights import cache_dir

from . import data as D
from .gpt import HookedGPT, RegressionGPT

log = logging.getLogger(__name__)

KINDS = ("token", "regression")
TRAIN_SEED = 0
VERSION = 1
CONFIGS: dict[str, dict[str, Any]] = {
    "token": {"arch": {"vocab_size": D.VOCAB.size, "dim": 64, "depth": 4, "heads": 4, "block_size": 3 * 8 + 3},
              "shots": 8, "steps": 2000, "batch": 64, "lr": 1e-3, "weight_decay": 0.01, "warmup": 100},
    "regression": {"arch": {"d": D.REG_DIM, "dim": 64, "depth": 4, "heads": 4, "block_size": D.REG_SHOTS + 1},
                   "shots": D.REG_SHOTS, "steps": 2000, "batch": 128, "lr": 1e-3, "weight_decay": 0.01, "warmup": 100},
}


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"icl_toy: unknown GPT kind {kind!r}; choose from {', '.join(KINDS)}")


def build_gpt(kind: str, **arch: Any) -> HookedGPT:
    """An untrained GPT of ``kind`` ("token" or "regression"), ``arch`` overriding the configuration's."""
    _check_kind(kind)
    args = {**CONFIGS[kind]["arch"], **arch}
    return HookedGPT(**args) if kind == "token" else RegressionGPT(**args)


def _lr(step: int, cfg: dict[str, Any]) -> float:
    if step < cfg["warmup"]:
        return cfg["lr"] * (step + 1) / cfg["warmup"]
    frac = (step - cfg["warmup"]) / max(1, cfg["steps"] - cfg["warmup"])
    return cfg["lr"] * 0.5 * (1 + math.cos(math.pi * frac))


def train_gpt(kind: str, *, steps: int | None = None, seed: int = TRAIN_SEED, progress: bool = False,
              **arch: Any) -> tuple[HookedGPT, dict[str, float]]:
    """Train a fresh GPT of ``kind`` on its pretraining stream; returns it (eval mode) and ``run_budget``'s figures."""
    cfg = {**CONFIGS[kind], "steps": steps or CONFIGS[kind]["steps"]}
    torch.manual_seed(seed)
    gpt = build_gpt(kind, **arch)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(gpt.optim_groups(cfg["weight_decay"]), lr=cfg["lr"], betas=(0.9, 0.95))
    gpt.train()

    def step(i: int) -> float:
        for g in opt.param_groups:
            g["lr"] = _lr(i, cfg)
        if kind == "token":
            ids, tg = D.token_training_batch(cfg["batch"], cfg["shots"], rng=rng)
            logits = gpt(torch.from_numpy(ids))
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(tg).reshape(-1),
                                   ignore_index=-100)
        else:
            x, y = D.regression_training_batch(cfg["batch"], int(rng.integers(0, cfg["shots"] + 1)), rng=rng)
            loss = F.mse_loss(gpt(torch.from_numpy(x))[:, -1, 0], torch.from_numpy(y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
        opt.step()
        return loss.item()

    with torch_threads(1):
        fit = run_budget(step, steps=cfg["steps"], budget_s=None, progress=f"icl_toy {kind} GPT" if progress else None)
    gpt.eval()
    for p in gpt.parameters():
        p.requires_grad_(False)
    return gpt, fit


def cache_path(kind: str) -> Path:
    """Where the trained GPT of ``kind`` is cached (named by a hash of its configuration and the data version)."""
    _check_kind(kind)
    key = json.dumps({"kind": kind, "cfg": CONFIGS[kind], "seed": TRAIN_SEED, "version": VERSION,
                      "tasks": {k: t.tolist() for k, (_, t) in D.TOKEN_TASKS.items()}}, sort_keys=True)
    return cache_dir() / "icl_toy" / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.safetensors"


_LOADED: dict[str, HookedGPT] = {}


def trained_gpt(kind: str = "token", *, progress: bool = False) -> HookedGPT:
    """The trained, frozen GPT of ``kind``: from this process's memory, the cache file, or trained now and cached.

    >>> gpt = trained_gpt("token")  # doctest: +SKIP
    """
    _check_kind(kind)
    if kind in _LOADED:
        return _LOADED[kind]
    from safetensors.torch import load_file, save_file

    path = cache_path(kind)
    gpt = build_gpt(kind)
    try:
        gpt.load_state_dict(load_file(str(path)))
        gpt.eval()
        for p in gpt.parameters():
            p.requires_grad_(False)
    except (OSError, RuntimeError, ValueError) as exc:  # missing or unreadable: train and replace
        if path.exists():
            log.warning("icl_toy: cached GPT %s unreadable (%s); retraining", path, exc)
        status(f"icl_toy: training the {kind} GPT once (about 1-3 minutes), cached at {path}", force=progress)
        gpt, fit = train_gpt(kind, progress=progress)
        log.info("icl_toy: trained the %s GPT: %s", kind, fit)
        try:
            with atomic_path(path) as tmp:
                save_file({k: v.contiguous() for k, v in gpt.state_dict().items()}, str(tmp))
        except OSError as err:
            log.warning("icl_toy: could not cache the GPT at %s (%s)", path, err)
    _LOADED[kind] = gpt
    return gpt
