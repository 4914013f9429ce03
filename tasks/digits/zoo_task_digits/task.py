"""``digits_classify``: scikit-learn's bundled 8x8 digits (1797 images, no download).

Contract: ``model(x)`` with ``x`` of shape (B, 1, 8, 8), values in [0, 1], returns logits (B, 10),
or a dict whose ``"logits"`` is a tensor or ``{granularity: (B, 10)}`` (then every granularity is
scored and ``accuracy`` is the largest one's). A model may define ``loss(output, target)``; the
default is cross-entropy. Split: a fixed stratified 75/25 split (``random_state=0``).
Training: AdamW with a one-cycle schedule under a step and/or time budget. Baselines: the reference
backbones of ``zoo_nn.backbones`` with LayerNorm and ReLU (GELU in the ViT), trained under the same
budget. ``describe()`` reports these settings from the constants below.
"""
from __future__ import annotations

import functools
import time
from typing import Any

import torch
from torch import nn

from zoo.task import Result, all_reduce_sum, count_params, distributed, run_budget, shard

NAME = "digits_classify"
DEFAULT_STEPS = 600
BATCH_SIZE, LR, WEIGHT_DECAY = 64, 2e-3, 0.05  # AdamW's defaults in ``train``
WARMUP = 0.1  # one-cycle: fraction of the steps spent warming up
TEST_SIZE, SPLIT_SEED = 0.25, 0  # the stratified split
BASELINES = {"mlp-ln-relu": "mlp", "cnn-ln-relu": "cnn", "vit-ln-gelu": "vit"}


@functools.lru_cache(maxsize=1)
def _split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    idx = torch.arange(len(y)).numpy()
    tr, te = train_test_split(idx, test_size=TEST_SIZE, random_state=SPLIT_SEED, stratify=d.target)
    return x[tr], y[tr], x[te], y[te]


def load_split() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x_train, y_train, x_test, y_test)``: 1347 training and 450 test images."""
    return tuple(t.clone() for t in _split())  # type: ignore[return-value]


def example_input(batch: int = 4) -> torch.Tensor:
    return _split()[0][:batch].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract: logits (B, 10) for every head."""
    for key, logits in logits_of(output).items():
        if logits.ndim != 2 or logits.shape[1] != 10:
            raise AssertionError(f"{NAME}: head {key or 'logits'} has shape {tuple(logits.shape)}, expected (B, 10)")


def logits_of(output: Any) -> dict[str, torch.Tensor]:
    """Every head's logits, keyed ``""`` for a plain model or by granularity for a dict of heads."""
    if isinstance(output, torch.Tensor):
        return {"": output}
    if isinstance(output, dict) and "logits" in output:
        logits = output["logits"]
        if isinstance(logits, torch.Tensor):
            return {"": logits}
        if isinstance(logits, dict):
            return {str(k): v for k, v in sorted(logits.items(), key=lambda kv: int(kv[0]))}
    raise TypeError(f"{NAME}: model output must be logits or a dict with 'logits', got {type(output).__name__}")


def default_loss(output: Any, target: torch.Tensor) -> torch.Tensor:
    return sum(nn.functional.cross_entropy(v, target) for v in logits_of(output).values())


def train(model: nn.Module, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None, seed: int = 0,
          batch_size: int = BATCH_SIZE, lr: float = LR, weight_decay: float = WEIGHT_DECAY, progress: str | None = None,
          data: tuple | None = None) -> dict[str, float]:
    """Train ``model`` in place on the training split; return loss and timing figures."""
    x, y = (data or _split())[:2]
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    total = steps or 10_000
    # one-cycle schedule; below 20 steps its warm-up would be under 2 steps (a division by zero): constant lr
    sched = (torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, pct_start=WARMUP) if total >= 20
             else torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0))
    loss_fn = getattr(model, "loss", default_loss)
    model.train()

    def step(i: int) -> float:
        idx = torch.randint(len(y), (batch_size,), generator=g)
        loss = loss_fn(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i + 1 < total:
            sched.step()
        return loss.item()

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor | None = None, y: torch.Tensor | None = None) -> dict[str, float]:
    """Test accuracy of every head: ``accuracy`` (the largest head) and ``accuracy@m`` per head.

    Under ``torchrun`` each rank scores its shard of the test set and the counts are summed.
    """
    if x is None:
        _, _, x, y = _split()
    rank, world = distributed()
    part = shard(len(y), rank, world)
    model.eval()
    heads = logits_of(model(x[part]))
    keys = list(heads)
    correct = all_reduce_sum([float((heads[k].argmax(-1) == y[part]).sum()) for k in keys])
    out = {}
    for key, c in zip(keys, correct, strict=True):
        out[f"accuracy@{key}" if key else "accuracy"] = c / len(y)
    if "accuracy" not in out:
        out["accuracy"] = out[f"accuracy@{list(heads)[-1]}"]
    return out


def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, **options: Any) -> nn.Module:
    """Baseline ``name`` (``BASELINES``), seeded; the task fixes its size, so ``params``/``data`` are unused and
    ``options`` go to the backbone (e.g. ``norm_layer``)."""
    from zoo_nn.backbones import BACKBONES

    if name not in BASELINES:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {sorted(BASELINES)}")
    torch.manual_seed(seed)
    return BACKBONES[BASELINES[name]](**options)


def fit(model: nn.Module, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None, seed: int = 0,
        train_model: bool = True, progress: str | None = None, **train_kw: Any) -> dict[str, float]:
    """One model's row of ``evaluate``: ``params`` (``count_params``), the training figures of ``train``
    (seeded as ``evaluate`` seeds it) unless ``train_model`` is False, and ``accuracy``.

    >>> from zoo_nn.backbones import DigitsMLP
    >>> sorted(fit(DigitsMLP(hidden=8, depth=1), steps=2))  # doctest: +NORMALIZE_WHITESPACE
    ['accuracy', 'final_train_loss', 'params', 'seconds_per_step', 'steps', 'train_seconds']
    """
    metrics: dict[str, float] = {"params": float(count_params(model))}
    if train_model:
        torch.manual_seed(seed)  # the model's own randomness (dropout, sampling) in training
        metrics.update(train(model, steps=steps, budget_s=budget_s, seed=seed, progress=progress, **train_kw))
    metrics.update(accuracy(model))
    return metrics


def describe(*, steps: int | None = None, budget_s: float | None = None, batch_size: int = BATCH_SIZE,
             lr: float = LR, weight_decay: float = WEIGHT_DECAY, data: tuple | None = None) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (its defaults without any): data, split, optimiser.

    >>> describe()["optimizer"], describe(lr=1e-3)["lr"]
    ('AdamW', 0.001)
    """
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    n_test = len(_split()[3])
    source = ("scikit-learn load_digits, 8x8 grey images scaled to [0, 1], 10 classes; split stratified, "
              f"test_size={TEST_SIZE}, random_state={SPLIT_SEED}")
    if data is not None:
        source = "the caller's training tensors (data=); the test split as above"
    return {"data": source, "n_train": len((data or _split())[1]), "n_test": n_test,
            "steps": steps, "budget_s": budget_s, "batch_size": batch_size, "optimizer": "AdamW", "lr": lr,
            "weight_decay": weight_decay, "schedule": f"one-cycle, warm-up {WARMUP} of the steps (constant lr below 20 steps)",
            "loss": "cross-entropy summed over heads, or the model's own loss()",
            "metrics": ["accuracy", "accuracy@<head>"], "baselines": list(BASELINES)}


def evaluate(model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
             baselines: list[str] | None = None, train_model: bool | None = None, progress: bool = False,
             **train_kw: Any) -> Result:
    """Train (unless the model has pretrained weights) and test ``model`` next to the baselines.

    ``baselines`` defaults to the reference backbone the model declares (``reference_backbone``),
    or the CNN. ``progress=True`` shows training progress bars (the CLI does). ``train_kw``
    (``batch_size``, ``lr``, ``weight_decay``) go to ``train``; ``describe`` lists them.
    """
    t0 = time.perf_counter()
    prov = getattr(model, "zoo", None)
    if train_model is None:
        train_model = not getattr(prov, "pretrained", False)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    if baselines is None:
        kind = getattr(model, "reference_backbone", "cnn")
        baselines = [n for n, k in BASELINES.items() if k == kind]
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"unknown {NAME} baseline(s) {unknown}; choose from {sorted(BASELINES)}")
    budget = {"steps": steps, "budget_s": budget_s, "seed": seed, **train_kw}
    metrics = fit(model, train_model=train_model, progress=f"train {NAME}" if progress else None, **budget)
    results = {name: fit(build_baseline(name, seed=seed), progress=f"train {name}" if progress else None, **budget)
               for name in baselines}
    return Result(task=NAME, metrics=metrics, baselines=results, n=len(_split()[3]),
                  seconds=time.perf_counter() - t0,
                  config={**describe(steps=steps, budget_s=budget_s, **train_kw), "seed": seed, "trained": train_model})
