"""``zoo reproduce vikanformer``: the five KAN expansions vs the MLP ViT and a small CNN on digits.

Accuracy: every network is trained with digits_classify's protocol (``zoo_task_digits.task.train``)
from ``torch.manual_seed(seed)`` and scored on the task's test split (accuracy and macro F1). The
ViTs are the reference ``TinyViT`` (the MLP ViT is ``vikanformer("mlp")``) with ``DEPTH`` blocks of
D=64 (half the default depth, to keep five KAN variants within the budget); the KAN hidden widths
are ``MATCHED_HIDDEN``, so every ViT has about the MLP ViT's parameter count. The CNN is the task's
``cnn-ln-relu`` baseline.

Cost: time per training step against a fresh MLP ViT, in interleaved rounds (each round times
``timing_steps`` steps of the row's network, then of the MLP ViT; the median round counts), as a
ratio. All ViTs compute attention the same explicit way (``softmax(q k^T / sqrt(d)) v``), so only the
feed-forward layer differs; the fused-attention ("flash", SDPA) SineKAN ViT is timed too.
"""
from __future__ import annotations

import statistics
import time
from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_digits import task as digits

from .model import VARIANTS, vikanformer
from .plugin import CLAIM, TASK

DEPTH = 2
THRESHOLD = 0.97  # the paper's "over 97% accuracy"
CLAIMED = ("sine", "fast", "vanilla")
TIMING_ROUNDS, TIMING_STEPS = 5, 4
QUICK = {"config": {"dim": 16, "heads": 2, "hidden": 3}, "rounds": 1, "timing_steps": 1}


def build(label: str, seed: int, **config: Any) -> torch.nn.Module:
    """The seeded, untrained network of one row (``config``: ``vikanformer`` arguments)."""
    torch.manual_seed(seed)
    if label == "CNN":
        return digits.build_baseline("cnn-ln-relu", seed=seed)
    variant, _, flash = label.partition("+")
    return vikanformer("mlp" if label == "MLP ViT" else variant, depth=DEPTH, flash=bool(flash), **config)


@torch.no_grad()
def _scores(model: torch.nn.Module) -> dict[str, float]:
    from sklearn.metrics import f1_score

    _, _, x, y = digits.load_split()
    model.eval()
    pred = model(x).argmax(-1)
    return {"accuracy": float((pred == y).float().mean()), "macro_f1": float(f1_score(y, pred, average="macro"))}


def time_per_step(models: dict[str, torch.nn.Module], rounds: int, steps: int) -> dict[str, float]:
    """Median seconds per training step (batch 64) of each model, measured in interleaved rounds."""
    x, y, _, _ = digits.load_split()
    g = torch.Generator().manual_seed(0)
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-4) for k, m in models.items()}
    times: dict[str, list[float]] = {k: [] for k in models}
    for _ in range(rounds):
        for k, m in models.items():
            m.train()
            t0 = time.perf_counter()
            for _ in range(steps):
                idx = torch.randint(len(y), (64,), generator=g)
                loss = torch.nn.functional.cross_entropy(m(x[idx]), y[idx])
                opts[k].zero_grad(set_to_none=True)
                loss.backward()
                opts[k].step()
            times[k].append((time.perf_counter() - t0) / steps)
    return {k: statistics.median(v) for k, v in times.items()}


def network_row(*, seed: int, steps: int, label: str, train: bool = True, config: dict | None = None,
                rounds: int = TIMING_ROUNDS, timing_steps: int = TIMING_STEPS) -> dict[str, float]:
    """One network: trained and scored (unless ``train`` is False), then timed against a fresh MLP ViT."""
    config = config or {}
    out: dict[str, float] = {}
    if train:
        model = build(label, seed, **config)
        fit = digits.train(model, steps=steps, seed=seed)
        out.update({**_scores(model), "final_train_loss": fit["final_train_loss"]})
    timed = {label: build(label, seed, **config), "base": build("MLP ViT", seed, **config)}
    per_step = time_per_step(timed, rounds, timing_steps)
    out["params"] = float(count_params(timed[label]))
    out["s_per_step"] = per_step[label]
    out["time_vs_mlp_vit"] = per_step[label] / per_step["base"]
    return out


REPRODUCTION = Claim(
    plugin="vikanformer", claim=CLAIM, task=TASK, steps=400, quick_steps=5, seeds=(0, 1, 2),
    rows=[*(Row(label, network_row, {"label": label}, quick_args=QUICK) for label in ("MLP ViT", "CNN", *VARIANTS)),
          Row("sine+flash", network_row, {"label": "sine+flash", "train": False}, quick_args=QUICK)],
    checks=[*(Check(v, "accuracy", margin=THRESHOLD) for v in CLAIMED),
            *(Check(v, "time_vs_mlp_vit", margin=1.0) for v in CLAIMED)],
    settings={"depth": DEPTH, "timing_rounds": TIMING_ROUNDS, "timing_steps": TIMING_STEPS},
    notes="accuracy >= 0.97: the paper's 'over 97%'; extra cost: time per step >= the MLP ViT's (ratio >= 1, "
          "margin 0). Efficient and Fourier KAN, the CNN and fused attention are reported only",
)
