"""``zoo reproduce stl-kernel-embed``: the distilled encoder vs bag-of-tokens and the same Transformer untrained.

Every row scores one embedding with ``stl_logic.evaluate(mode="embed", baselines=[])`` on the same seed's data
(``task.dataset``: 2,000 training and 300 test formulae of the kernel papers' generator, 500 kernel trajectories,
200 held-out readout trajectories): the distilled encoder trained for the task's 600 steps; the exact kernel
embedding against 128 anchors on an independent trajectory sample (the upper reference, reported only);
bag-of-tokens; the encoder's architecture untrained (PyTorch's default initialisation, seeded).
"""
from __future__ import annotations

from typing import Any

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_stl_logic import task
from zoo_task_stl_logic.baselines import build_baseline

from .model import CPU
from .plugin import CLAIM

METRICS = ("spearman", "robustness_r2", "satisfaction_acc", "encode_ms", "kernel_ms", "speedup", "train_loss",
           "fit_seconds", "params")
QUICK = {"n_train": 300, "n_test": 60, "n_traj": 100, "n_readout": 50}
QUICK_STEPS = 30
SPEARMAN_MARGIN, R2_MARGIN, SAT_MARGIN, SPEEDUP_MIN = 0.15, 0.05, 0.02, 2.0


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(metrics[k]) for k in METRICS if k in metrics}


def _run(model: Any, *, seed: int, quick: bool, steps: int | None = None) -> dict[str, float]:
    opts = QUICK if quick else {}
    res = task.evaluate(model, mode="embed", seed=seed, baselines=[], steps=QUICK_STEPS if quick else steps, **opts)
    return _keep(res.metrics)


def distilled_row(*, seed: int, quick: bool) -> dict[str, float]:
    """``stl_kernel_embed`` (CPU defaults), distilled on the seed's training formulae, then scored."""
    return _run(zoo.create("stl_kernel_embed"), seed=seed, quick=quick)


def baseline_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """The task's baseline ``name`` on the same data; ``random_encoder`` has the distilled encoder's shape."""
    if name == "kernel":
        d = task.dataset(seed, **(QUICK if quick else {}))
        model = build_baseline("kernel", anchors=d.anchors, trajectories=d.traj_independent)
    else:
        model = build_baseline(name, seed=seed, arch=zoo.create("stl_kernel_embed").arch)
    return _run(model, seed=seed, quick=quick)


REPRODUCTION = Claim(
    plugin="stl-kernel-embed", claim=CLAIM, task="stl_logic", seeds=(0, 1, 2),
    rows=[Row("stl_kernel_embed", distilled_row),
          Row("bag_of_tokens", baseline_row, {"name": "bag_of_tokens"}),
          Row("random_encoder", baseline_row, {"name": "random_encoder"}),
          Row("kernel", baseline_row, {"name": "kernel"})],
    checks=[Check("stl_kernel_embed", "spearman", baseline="bag_of_tokens", margin=SPEARMAN_MARGIN),
            Check("stl_kernel_embed", "spearman", baseline="random_encoder", margin=SPEARMAN_MARGIN),
            Check("stl_kernel_embed", "robustness_r2", baseline="bag_of_tokens", margin=R2_MARGIN),
            Check("stl_kernel_embed", "robustness_r2", baseline="random_encoder", margin=R2_MARGIN),
            Check("stl_kernel_embed", "satisfaction_acc", baseline="bag_of_tokens", margin=SAT_MARGIN),
            Check("stl_kernel_embed", "satisfaction_acc", baseline="random_encoder", margin=SAT_MARGIN),
            Check("stl_kernel_embed", "speedup", margin=SPEEDUP_MIN)],
    settings={"model": dict(CPU), "quick_data": QUICK, "quick_steps": QUICK_STEPS},
    task_options={"mode": "embed"},
    notes=f"margins fixed before the recorded run: Spearman (embedding cosine vs kernel, all 44,850 test pairs) "
          f"distilled - baseline >= {SPEARMAN_MARGIN} against both syntax-only baselines (a seed-0 trial put both "
          f"near 0.1: a semantic embedding must do clearly better than chance-level ranking, and 0.15 is several "
          f"times the seed-to-seed spread of a Spearman over that many pairs); robustness R^2 of the ridge readout "
          f"(mean over 200 held-out trajectories) >= +{R2_MARGIN} and satisfaction accuracy (60,000 formula x "
          f"trajectory labels) >= +{SAT_MARGIN} over both baselines (the paper claims the embedding predicts "
          f"both; smaller gains would be readout noise); speedup = kernel_ms / encode_ms >= {SPEEDUP_MIN} ('a "
          f"fraction of the kernel's cost': encoding at most half the time of the symbolic kernel embedding, "
          f"robustness on the run's 500 trajectories plus 128 anchors, one thread; the papers' kernels use more "
          f"trajectories, which only raises the kernel's cost). The exact kernel row (its own independent 500 "
          f"trajectories) is the upper reference, reported only.",
)
