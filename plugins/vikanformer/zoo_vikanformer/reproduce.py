"""``zoo reproduce vikanformer``: the five KAN expansions vs the MLP ViT and a small CNN on digits.

Accuracy: every network is trained with digits_classify's trainer (AdamW 2e-3, one-cycle, batch 64)
for ``STEPS`` steps from ``torch.manual_seed(seed)``, and scored on the task's test split (accuracy
and macro F1). The ViTs are the reference ``TinyViT`` (the MLP ViT is ``vikanformer("mlp")``) with 2
blocks of D=64 (half the default depth, to fit the 3-minute budget with five KAN variants); the KAN
hidden widths are ``MATCHED_HIDDEN``, so every ViT has about the MLP ViT's parameter count. The CNN
is the task's ``cnn-ln-relu`` baseline.

Cost: time per training step, measured after training in interleaved rounds (each round times
``TIMING_STEPS`` steps of every model in turn; the median round counts), reported as a ratio to the
MLP ViT. All ViTs compute attention the same explicit way (``softmax(q k^T / sqrt(d)) v``), so only the
feed-forward layer differs; the fused-attention ("flash", SDPA) SineKAN ViT is timed too (accuracy
is unaffected: same math).
"""
from __future__ import annotations

import logging
import statistics
import time

import torch

import zoo
from zoo_task_digits import task as digits
from zoo_task_formula_regress.task import torch_threads
from zoo.task import count_params

from .model import VARIANTS, vikanformer

log = logging.getLogger(__name__)

DEPTH = 2
STEPS, QUICK_STEPS = 400, 5
SEEDS, QUICK_SEEDS = (0,), (0,)
TIMING_ROUNDS, TIMING_STEPS = 5, 4
THRESHOLD = 0.97  # the paper's "over 97% accuracy"
CLAIMED = ("sine", "fast", "vanilla")
QUICK_VIT = {"dim": 16, "heads": 2, "hidden": 3}


def build(label: str, seed: int, **config: int) -> torch.nn.Module:
    """The seeded, untrained network for one row (``config``: ``vikanformer`` arguments)."""
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


def time_per_step(models: dict[str, torch.nn.Module], rounds: int = TIMING_ROUNDS, steps: int = TIMING_STEPS
                  ) -> dict[str, float]:
    """Median seconds per training step of each model, measured in interleaved rounds."""
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


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train and time every row; ``passed`` when the sine, fast and vanilla ViKANformers each reach
    accuracy >= 0.97 and each is slower per step than the MLP ViT.

    Args:
        quick: narrow ViTs, a few steps, one timing round (seconds; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    steps, seeds = (QUICK_STEPS, QUICK_SEEDS) if quick else (STEPS, SEEDS)
    config = QUICK_VIT if quick else {}
    labels = ["MLP ViT", "CNN", *VARIANTS]
    t0 = time.perf_counter()
    table: dict[str, dict[str, float]] = {}
    with torch_threads(1):
        for label in labels:
            runs = []
            for seed in seeds:
                model = build(label, seed, **config)
                fit = digits.train(model, steps=steps, seed=seed)
                runs.append({**_scores(model), "final_train_loss": fit["final_train_loss"]})
            table[label] = {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}
            table[label]["params"] = float(count_params(model))
            log.info("vikanformer reproduce: %s %s", label, table[label])
        timed = {label: build(label, 0, **config) for label in [*labels, "sine+flash"]}
        per_step = time_per_step(timed, rounds=1 if quick else TIMING_ROUNDS, steps=1 if quick else TIMING_STEPS)
    base = per_step["MLP ViT"]
    for label, s in per_step.items():
        row = table.setdefault(label, {"params": float(count_params(timed[label]))})
        row["s_per_step"] = s
        row["time_vs_mlp_vit"] = s / base
        row["s_per_epoch"] = s * len(digits.load_split()[1]) / 64

    reached = {v: table[v]["accuracy"] >= THRESHOLD for v in CLAIMED}
    slower = {v: table[v]["time_vs_mlp_vit"] > 1.0 for v in CLAIMED}
    passed = all(reached.values()) and all(slower.values())
    acc = ", ".join(f"{v} {table[v]['accuracy']:.4f}" for v in VARIANTS)
    cost = ", ".join(f"{v} x{table[v]['time_vs_mlp_vit']:.2f}" for v in VARIANTS)
    summary = (f"accuracy >= {THRESHOLD} for {[v for v, ok in reached.items() if ok]} of {list(CLAIMED)}; slower per "
               f"step than the MLP ViT: {[v for v, ok in slower.items() if ok]}. Accuracy: {acc} (MLP ViT "
               f"{table['MLP ViT']['accuracy']:.4f}, CNN {table['CNN']['accuracy']:.4f}). Time per step vs MLP ViT: "
               f"{cost}; fused attention (SineKAN): x{table['sine+flash']['time_vs_mlp_vit']:.2f} vs "
               f"x{table['sine']['time_vs_mlp_vit']:.2f} without.")
    if quick:
        summary = "QUICK RUN (few steps; not a measurement of the claim). " + summary
    settings = {"quick": quick, "steps": steps, "seeds": list(seeds), "depth": DEPTH, "dim": 64, "heads": 4,
                "threshold": THRESHOLD, "intra_op_threads": 1,
                "trainer": "zoo_task_digits.task.train defaults (AdamW 2e-3, wd 0.05, one-cycle, batch 64)",
                "timing": f"{TIMING_ROUNDS} interleaved rounds x {TIMING_STEPS} steps, median, batch 64"}
    return zoo.ClaimResult(plugin="vikanformer", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
