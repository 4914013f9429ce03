"""The self-supervised training loop of ``ssl_probe``, reusable by any mode (the Pong mode, other tasks).

``pretrain(model, sample_views, steps=, seed=)`` minimises ``model.ssl_loss(*sample_views(generator, batch))``.
The optimiser comes from ``DEFAULTS``, overridden by the model's ``ssl_defaults`` dict, overridden by the caller's
options. A model may split its parameters with ``ssl_param_groups() -> [{"params": [...], "fixed_lr": bool}, ...]``:
groups with ``fixed_lr`` keep the base learning rate while the others follow the schedule (SimSiam's predictor).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from zoo.task import run_budget

DEFAULTS: dict[str, Any] = {"optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-2, "momentum": 0.9, "batch": 128,
                            "schedule": "cosine"}
OPTIMIZERS = ("adamw", "sgd")
SCHEDULES = ("cosine", "constant")


def settings(model: nn.Module | None = None, **options: Any) -> dict[str, Any]:
    """The optimiser settings ``pretrain`` uses: ``DEFAULTS``, then the model's ``ssl_defaults``, then ``options``
    (``None`` values ignored). Unknown keys or values raise ``ValueError`` naming the valid ones."""
    out = dict(DEFAULTS)
    for source in (getattr(model, "ssl_defaults", None) or {}, options):
        for key, value in source.items():
            if key not in DEFAULTS:
                raise ValueError(f"ssl_probe: unknown training option {key!r}; choose from {sorted(DEFAULTS)}")
            if value is not None:
                out[key] = value
    if out["optimizer"] not in OPTIMIZERS:
        raise ValueError(f"ssl_probe: optimizer={out['optimizer']!r}; choose from {list(OPTIMIZERS)}")
    if out["schedule"] not in SCHEDULES:
        raise ValueError(f"ssl_probe: schedule={out['schedule']!r}; choose from {list(SCHEDULES)}")
    return out


def _groups(model: nn.Module) -> list[dict[str, Any]]:
    fn = getattr(model, "ssl_param_groups", None)
    groups = fn() if callable(fn) else [{"params": list(model.parameters())}]
    out = []
    for g in groups:
        params = [p for p in g["params"] if p.requires_grad]
        if params:
            out.append({**g, "params": params, "fixed_lr": bool(g.get("fixed_lr", False))})
    return out


def pretrain(model: nn.Module, sample_views: Callable[[torch.Generator, int], tuple[torch.Tensor, ...]], *,
             steps: int | None, seed: int = 0, budget_s: float | None = None, progress: str | None = None,
             **options: Any) -> dict[str, float]:
    """Train ``model`` in place: each step draws ``views = sample_views(generator, batch)`` (a tuple of tensors; the
    generator seeded by ``seed``) and takes one optimiser step on ``model.ssl_loss(*views)``.

    Options (see ``settings``): ``optimizer`` ("adamw" or "sgd" with ``momentum``), ``lr``, ``weight_decay``,
    ``batch``, ``schedule`` ("cosine": lr * 0.5 (1 + cos(pi step / steps)) per step, or "constant"). Stops after
    ``steps`` steps or ``budget_s`` seconds, whichever first (the cosine needs ``steps``; with only a time budget the
    lr is constant). Returns ``run_budget``'s figures: ``steps``, ``train_seconds``, ``seconds_per_step``,
    ``final_train_loss`` (mean loss over the last tenth of the steps), and leaves the model in eval mode.
    """
    cfg = settings(model, **options)
    if not callable(getattr(model, "ssl_loss", None)):
        raise TypeError(f"ssl_probe: {type(model).__name__} has no ssl_loss(*views); the task's contract needs one")
    groups = _groups(model)
    if not groups:
        raise TypeError(f"ssl_probe: {type(model).__name__} has no trainable parameters to pretrain")
    torch.manual_seed(seed)  # the model's own randomness (masking, dropout)
    g = torch.Generator().manual_seed(seed)
    if cfg["optimizer"] == "sgd":
        opt = torch.optim.SGD(groups, lr=cfg["lr"], momentum=cfg["momentum"], weight_decay=cfg["weight_decay"])
    else:
        opt = torch.optim.AdamW(groups, lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    total = steps

    def factor(fixed: bool) -> Callable[[int], float]:
        if fixed or cfg["schedule"] == "constant" or not total:
            return lambda i: 1.0
        return lambda i: 0.5 * (1 + math.cos(math.pi * min(i, total) / total))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, [factor(gr["fixed_lr"]) for gr in opt.param_groups])
    model.train()

    def step(i: int) -> float:
        views = sample_views(g, int(cfg["batch"]))
        loss = model.ssl_loss(*views)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out
