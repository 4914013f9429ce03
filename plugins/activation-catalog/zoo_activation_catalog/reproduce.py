"""``zoo reproduce activation-catalog``: rank every catalogued activation in the reference MLP.

The survey makes no single claim, so the claim checked is that each catalogued activation trains:
every one goes into ``zoo_nn.backbones.DigitsMLP`` (LayerNorm, 2 x 128) as its ``act_layer``
and is trained by ``zoo.evaluate`` on ``digits_classify`` with the task's optimiser and the same
seed, so for a given seed every row starts from the same linear weights and sees the same batches.
The task's own baseline (``mlp-ln-relu``) is trained beside them; GELU is a catalogue row.
"""
from __future__ import annotations

import logging
import time

import torch

import zoo
from zoo_task_digits import task

from .catalog import ENTRIES
from .plugin import CLAIM, model_name
from zoo.task import torch_threads

log = logging.getLogger(__name__)

TASK = task.NAME
BASELINE = "mlp-ln-relu"
STEPS, SEED = 600, 0  # the task's default step count
QUICK_STEPS, QUICK_NAMES = 3, ("relu", "gelu", "mish", "rational")
CHANCE_THRESHOLD = 0.15  # 0.10 + 3 binomial standard errors (sqrt(0.09 / 450) = 0.014) on the 450 test images
THREADS = 1


def run_one(model: torch.nn.Module, steps: int, seed: int) -> dict[str, float]:
    """Train and test one model with ``zoo.evaluate``; accuracy, train loss, time per step, params."""
    m = zoo.evaluate(model, task=TASK, steps=steps, seed=seed, baselines=[]).metrics
    return {"test_acc": m["accuracy"], "final_train_loss": m["final_train_loss"],
            "ms_per_step": 1e3 * m["seconds_per_step"], "params": m["params"]}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train every activation (one seed, fixed steps), rank them, and check each is above chance.

    ``passed`` is True when every catalogued activation reaches test accuracy > 0.15.

    Args:
        quick: four activations and a few steps (seconds; for tests). The numbers then mean nothing.
    """
    names = list(QUICK_NAMES if quick else ENTRIES)
    steps = QUICK_STEPS if quick else STEPS
    t0, c0 = time.perf_counter(), time.process_time()
    results: dict[str, dict[str, float]] = {}
    with torch_threads(THREADS):
        results[f"task baseline ({BASELINE})"] = run_one(task.build_baseline(BASELINE, seed=SEED), steps, SEED)
        for name in names:
            torch.manual_seed(SEED)
            results[name] = run_one(zoo.create(model_name(name)), steps, SEED)
            log.info("activation-catalog reproduce: %s: %s", name, results[name])

    ranked = sorted(results, key=lambda k: -results[k]["test_acc"])
    table = {f"{i + 1:>2}. {k}": {**results[k], "year": float(ENTRIES[k].year) if k in ENTRIES else None}
             for i, k in enumerate(ranked)}
    below = [n for n in names if results[n]["test_acc"] <= CHANCE_THRESHOLD]
    passed = not below
    rank = {k: i + 1 for i, k in enumerate(ranked)}
    relu, gelu = results[f"task baseline ({BASELINE})"]["test_acc"], results.get("gelu", {}).get("test_acc")
    beat_relu = [n for n in names if results[n]["test_acc"] > relu]
    summary = (f"{len(names) - len(below)} of {len(names)} activations reach test accuracy > {CHANCE_THRESHOLD} "
               f"({steps} steps, seed {SEED})" + (f"; below: {', '.join(below)}" if below else "") +
               f". ReLU baseline {relu:.4f} (rank {rank[f'task baseline ({BASELINE})']} of {len(ranked)})" +
               (f", GELU {gelu:.4f} (rank {rank['gelu']})" if gelu is not None else "") +
               f"; {len(beat_relu)} activations score above the ReLU baseline (one seed: differences of ~0.01 are "
               f"within seed noise). Best: {ranked[0]} {results[ranked[0]]['test_acc']:.4f}; worst: {ranked[-1]} "
               f"{results[ranked[-1]]['test_acc']:.4f}.")
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    summary += f" Wall {seconds:.0f} s, process CPU {cpu:.0f} s, {THREADS} torch thread."
    if quick:
        summary = "QUICK RUN (4 activations, a few steps; not a measurement of the claim). " + summary
    return zoo.ClaimResult(
        plugin="activation-catalog", claim=CLAIM, passed=passed, table=table, summary=summary, seconds=seconds,
        settings={"quick": quick, "task": TASK, "steps": steps, "seed": SEED, "batch_size": 64,
                  "optimizer": "AdamW lr=2e-3 wd=0.05, one-cycle (zoo_task_digits.task.train defaults)",
                  "backbone": "zoo_nn.backbones.DigitsMLP(hidden=128, depth=2, LayerNorm)",
                  "chance_threshold": CHANCE_THRESHOLD, "activations": len(names), "below_threshold": below,
                  "process_time_s": cpu, "torch_threads": THREADS})
