"""``zoo reproduce fresh``: FreSh's pick vs a small sweep, on camera, coins, moon and text (64x64).

Backbones: the task's two baselines at the same size (SIREN 3 x 64; ReLU MLP on 256 Fourier features).
FreSh rows: the model's own ``fit`` scores the 7 grid values (SIREN first-layer omega_0 / Fourier
sigma) on the untrained model (10 initialisations each), keeps the one of smallest spectrum distance
and trains it with ``image_fit``'s loop. Sweep rows: every grid value trained the same way from the
same seed; its best, its default (the task's baselines: omega_0 30 / sigma 5) and Spearman(distance,
PSNR) over the grid. ``select_runs``: the selection's wall time over the training run's (worst image).
"""
from __future__ import annotations

import torch
from scipy.stats import spearmanr

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_image_fit import image_fit as task

from .plugin import CLAIM, TASK

IMAGES, SIZE = ("camera", "coins", "moon", "text"), 64
GRIDS = {"siren": ("fresh_siren", "w0_first", (10.0, 20.0, 30.0, 50.0, 70.0, 100.0, 150.0), 30.0),
         "relu-ff": ("fresh_relu_ff", "sigma", (1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0), 5.0)}
MAX_GAP_DB, MAX_OVERHEAD_RUNS, N_INITS = 1.0, 1.0, 10
# (images, size, initialisations per value); quick: a smoke run where the pick is not the sweep's best
SETUP = {False: (IMAGES, SIZE, N_INITS), True: (("text",), 32, 2)}


def fresh_row(*, seed: int, quick: bool, steps: int, backbone: str) -> dict[str, float]:
    """FreSh's pick on every image, trained by the model's own ``fit``: training PSNR, pick, selection cost."""
    name, _, grid, _ = GRIDS[backbone]
    images, size, n_inits = SETUP[quick]
    out: dict[str, float] = {}
    for img in images:
        fig = task.fit(zoo.create(name, candidates=grid, n_inits=n_inits), task.make_signal(img, size), steps=steps,
                       seed=seed)
        out |= {f"psnr_{img}": fig["psnr_train"], f"pick_{img}": fig["fresh_pick"]}
        out["select_runs"] = max(out.get("select_runs", 0.0), fig["fresh_seconds"] / fig["train_seconds"])
    return {"psnr": sum(out[f"psnr_{i}"] for i in images) / len(images), **out}


def sweep_row(*, seed: int, quick: bool, steps: int, backbone: str) -> dict[str, float]:
    """Every grid value trained on every image: the best, the default, and Spearman(distance, PSNR)."""
    name, knob, grid, default = GRIDS[backbone]
    images, size, n_inits = SETUP[quick]
    out: dict[str, float] = {}
    for img in images:
        signal, psnr = task.make_signal(img, size), {}
        for v in grid:
            torch.manual_seed(seed)
            model = zoo.create(name, **{knob: v})
            task.mse_loop(model, signal, torch.optim.Adam(model.parameters(), lr=model.default_lr), steps=steps)
            psnr[v] = task.psnr(task.predict(model, signal.coords).clamp(0, 1), signal.values)
        dist = zoo.create(name, candidates=grid, n_inits=n_inits).fresh_select(signal, seed)[1]
        best = max(grid, key=psnr.get)
        out |= {f"psnr_{img}": psnr[best], f"best_{img}": best, f"default_{img}": psnr[default],
                f"spearman_{img}": float(spearmanr([dist[v] for v in grid], [psnr[v] for v in grid]).statistic)}
    mean = lambda key: sum(out[f"{key}_{i}"] for i in images) / len(images)  # noqa: E731
    return {"psnr": mean("psnr"), "psnr_default": mean("default"), "spearman": mean("spearman"),
            **{k: v for k, v in out.items() if not k.startswith(("default_", "spearman_"))}}


REPRODUCTION = Claim(
    plugin="fresh", claim=CLAIM, task=TASK, steps=250, quick_steps=5, seeds=(0, 1, 2),
    rows=[Row(m, fresh_row, {"backbone": b}) for b, (m, *_) in GRIDS.items()]
    + [Row(f"{b} sweep", sweep_row, {"backbone": b}) for b in GRIDS],
    checks=[Check(m, "psnr", baseline=f"{b} sweep", margin=-MAX_GAP_DB) for b, (m, *_) in GRIDS.items()]
    + [Check(m, "select_runs", margin=MAX_OVERHEAD_RUNS, higher=False) for m, *_ in GRIDS.values()],
    settings={"image": list(IMAGES), "size": SIZE, "n_inits": N_INITS, "grids": {b: list(g[2]) for b, g in GRIDS.items()},
              "data": f"each of {', '.join(IMAGES)} as image_fit loads it",
              "defaults": {b: g[3] for b, g in GRIDS.items()}},
    notes=f"for both backbones: FreSh's pick at most {MAX_GAP_DB:g} dB below the sweep's best (training PSNR averaged "
          f"over the four images; margin -{MAX_GAP_DB:g}), and the selection costs at most {MAX_OVERHEAD_RUNS:g} training "
          "run (its wall time over the run's, worst image); the default and Spearman(distance, PSNR) are reported only",
)
