"""``zoo reproduce smartmixed-act``: per-layer activation preferences and the frozen network's cost.

For MLP depths 2, 3 and 4 (``DigitsMLP``, 128 units, LayerNorm) and 3 seeds, SmartMixed trains
with its two phases in one ``zoo.evaluate`` run (``training.freeze_after``: selection for the
first half of the steps, then frozen), and a ReLU-only MLP of the same depth with the same initial
linear weights and batches trains beside it (at depth 2 that is the task's ``mlp-ln-relu``).

(a) Layers prefer different functions: for each depth, a chi-square test of homogeneity of the
    frozen choices across layers (counts summed over seeds) rejects at p < 0.01.
(b) The frozen network stays efficient: its inference time on the 450 test images is below the
    selection-phase network's (rounds interleaved, median of repeats); the ratio to ReLU is reported.
Accuracy against ReLU-only is reported beside them (not part of pass/fail).
"""
from __future__ import annotations

import logging
import statistics
import time

import torch
from scipy.stats import chi2_contingency

import zoo
from zoo_nn.backbones import DigitsMLP
from zoo_task_digits import task
from zoo.task import mean_std

from .model import POOL, smartmixed_layers
from zoo.task import torch_threads

log = logging.getLogger(__name__)

TASK = task.NAME
DEPTHS, SEEDS, STEPS = (2, 3, 4), (0, 1, 2), 1200
QUICK_DEPTHS, QUICK_SEEDS, QUICK_STEPS = (2,), (0,), 4
TIMING_REPEATS, QUICK_TIMING_REPEATS = 30, 2
P_VALUE = 0.01
THREADS = 1


def build(kind: str, depth: int, seed: int) -> torch.nn.Module:
    """A seeded SmartMixed or ReLU-only MLP; both draw the same linear weights for a seed."""
    torch.manual_seed(seed)
    if kind == "smartmixed":
        return zoo.create("smartmixed_mlp", depth=depth)
    return DigitsMLP(depth=depth)


def run_one(kind: str, depth: int, seed: int, steps: int) -> tuple[torch.nn.Module, dict[str, object]]:
    """Train one model with ``zoo.evaluate`` (SmartMixed frozen after half the steps) and test it."""
    from .training import freeze_after

    model = build(kind, depth, seed)
    if kind == "smartmixed":
        with freeze_after(model, steps // 2) as counts:
            m = zoo.evaluate(model, task=TASK, steps=steps, seed=seed, baselines=[]).metrics
    else:
        counts = []
        m = zoo.evaluate(model, task=TASK, steps=steps, seed=seed, baselines=[]).metrics
    inference_params = sum(p.numel() for n, p in model.named_parameters() if not n.endswith("logits"))
    return model, {"test_acc": m["accuracy"], "final_train_loss": m["final_train_loss"],
                   "ms_per_step": 1e3 * m["seconds_per_step"], "params": m["params"],
                   "params_at_inference": inference_params, "counts": counts}


@torch.no_grad()
def inference_ms(models: dict[str, torch.nn.Module], repeats: int) -> dict[str, float]:
    """Median forward time (ms) on the test set per model, rounds interleaved so load hits all alike."""
    x = task.load_split()[2]
    times: dict[str, list[float]] = {k: [] for k in models}
    for m in models.values():
        m.eval()(x)  # warm-up
    for _ in range(repeats):
        for name, m in models.items():
            t = time.perf_counter()
            m(x)
            times[name].append(1e3 * (time.perf_counter() - t))
    return {k: statistics.median(v) for k, v in times.items()}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Run the depth x seed grid and the timing; ``passed`` = (a) and (b) (see the module docstring).

    Args:
        quick: depth 2, one seed, a few steps (seconds; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    depths, seeds, steps = (QUICK_DEPTHS, QUICK_SEEDS, QUICK_STEPS) if quick else (DEPTHS, SEEDS, STEPS)
    repeats = QUICK_TIMING_REPEATS if quick else TIMING_REPEATS
    t0, c0 = time.perf_counter(), time.process_time()
    table: dict[str, dict[str, float | None]] = {}
    pvalues, counts_by_depth, timing = {}, {}, {}
    with torch_threads(THREADS):
        for depth in depths:
            runs: dict[str, list[dict[str, object]]] = {"smartmixed": [], "relu": []}
            models = {}
            for seed in seeds:
                for kind in runs:
                    models[kind], r = run_one(kind, depth, seed, steps)
                    runs[kind].append(r)
                    log.info("smartmixed reproduce: depth %d seed %d %s: acc %.4f", depth, seed, kind, r["test_acc"])
            for kind, label in (("smartmixed", "SmartMixed (smartmixed_mlp)"),
                                ("relu", "ReLU-only" + (" (task baseline mlp-ln-relu)" if depth == 2 else ""))):
                acc = mean_std(float(r["test_acc"]) for r in runs[kind])
                table[f"depth {depth}: {label}"] = {
                    "test_acc_mean": acc[0], "test_acc_std": acc[1],
                    "final_train_loss": mean_std(float(r["final_train_loss"]) for r in runs[kind])[0],
                    "ms_per_step": mean_std(float(r["ms_per_step"]) for r in runs[kind])[0],
                    "params": float(runs[kind][0]["params"]), "params_at_inference":
                    float(runs[kind][0]["params_at_inference"])}
            # per-layer histograms of the frozen choices, summed over seeds
            layers = [{name: sum(r["counts"][i][name] for r in runs["smartmixed"]) for name in POOL}
                      for i in range(depth)]
            counts_by_depth[depth] = layers
            for i, c in enumerate(layers):
                table[f"depth {depth}: layer {i + 1} choices (sum over seeds)"] = {k: float(v) for k, v in c.items()}
            observed = [[c[name] for name in POOL if any(lc[name] for lc in layers)] for c in layers]
            pvalues[depth] = float(chi2_contingency(observed)[1]) if len(observed[0]) > 1 else 1.0
            if depth == depths[-1]:  # timing on the deepest network of the last seed
                selecting = build("smartmixed", depth, seeds[-1])  # the trained weights, choices unfrozen
                selecting.load_state_dict(models["smartmixed"].state_dict())
                for layer in smartmixed_layers(selecting):
                    layer.choice.fill_(-1)
                torch.manual_seed(0)
                elu_only = DigitsMLP(depth=depth, act_layer=torch.nn.ELU)  # context: the most chosen function
                timing = inference_ms({"selection phase (6 activations + mixture)": selecting,
                                       "frozen (grouped per function)": models["smartmixed"],
                                       "ReLU-only": models["relu"], "ELU-only (torch.nn.ELU, context)": elu_only},
                                      repeats)
    for name, ms in timing.items():
        table[f"inference on 450 test images, depth {depths[-1]}: {name}"] = {"ms_median": ms}

    ok_a = all(p < P_VALUE for p in pvalues.values())
    frozen_ms, select_ms = timing["frozen (grouped per function)"], timing["selection phase (6 activations + mixture)"]
    ok_b = frozen_ms < select_ms
    top = {d: [max(c, key=c.get) for c in layers] for d, layers in counts_by_depth.items()}
    acc_line = "; ".join(
        f"depth {d}: {table[f'depth {d}: SmartMixed (smartmixed_mlp)']['test_acc_mean']:.4f} vs ReLU "
        f"{next(v['test_acc_mean'] for k, v in table.items() if k.startswith(f'depth {d}: ReLU')):.4f}"
        for d in depths)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    summary = (f"(a) layer preferences differ: chi-square p per depth {', '.join(f'{d}: {p:.2g}' for d, p in pvalues.items())}"
               f" ({'all' if ok_a else 'not all'} < {P_VALUE}); most chosen per layer {top}. (b) frozen inference "
               f"{frozen_ms:.2f} ms vs selection phase {select_ms:.2f} ms ({frozen_ms / select_ms:.2f}x) and ReLU-only "
               f"{timing['ReLU-only']:.2f} ms ({frozen_ms / timing['ReLU-only']:.2f}x; torch.nn.ELU-only "
               f"{timing['ELU-only (torch.nn.ELU, context)']:.2f} ms): "
               f"{'holds' if ok_b else 'does not hold'}. Accuracy (mean over {len(seeds)} seeds, {steps} steps, "
               f"frozen at {steps // 2}): {acc_line}. Wall {seconds:.0f} s, process CPU {cpu:.0f} s, {THREADS} torch "
               f"thread.")
    if quick:
        summary = "QUICK RUN (depth 2, 1 seed, a few steps; not a measurement of the claim). " + summary
    return zoo.ClaimResult(
        plugin="smartmixed-act", claim=CLAIM, passed=ok_a and ok_b, table=table, summary=summary, seconds=seconds,
        settings={"quick": quick, "task": TASK, "depths": list(depths), "seeds": list(seeds), "steps": steps,
                  "freeze_at": steps // 2, "batch_size": 64, "hidden": 128, "temperature": 0.5, "hard": True,
                  "optimizer": "AdamW lr=2e-3 wd=0.05, one-cycle over both phases (zoo_task_digits.task.train)",
                  "checks": {"a_layer_preferences_differ": ok_a, "b_frozen_faster_than_selection": ok_b},
                  "chi2_p": {str(d): p for d, p in pvalues.items()},
                  "counts": {str(d): c for d, c in counts_by_depth.items()},
                  "process_time_s": cpu, "torch_threads": THREADS})
