"""``zoo reproduce nns-to-nos``: error at the training resolution and at 2x for the FNO, the converted U-Net and the
original U-Net on operator_learn Burgers (64 -> 128) and Darcy (32 -> 64).

Per problem and seed, three models are trained by the task's own protocol (``task.evaluate``: Adam, relative-L2
loss, cosine decay, the same data, the same minibatch order, the same steps) and scored on the same test functions
at both resolutions. The FNO has the plugin's CPU size (Darcy: width 12, see ``SIZES``); the U-Net is the task's
``build_baseline("unet")`` matched to the FNO's parameter count; the converted U-Net is that same U-Net (same seed,
same initial weights) converted by the recipe (``model.convert_unet``), so its parameter count is the U-Net's
exactly.
"""
from __future__ import annotations

import math

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_operator_learn import task

from .model import convert_unet
from .plugin import CLAIM, TASK

PROBLEMS = {"burgers": "fno_1d", "darcy": "fno_2d"}
SIZES = {"burgers": {}, "darcy": {"width": 12}}  # the FNO's overrides (Darcy: width 12 keeps 3 seeds in budget)
STEPS = {"burgers": 500, "darcy": 400}  # Burgers: the task's default; Darcy: fewer, to fit the budget
QUICK_STEPS = {"burgers": 10, "darcy": 5}
BATCH = {"burgers": 20, "darcy": 10}
QUICK_DATA = {"n_train": 40, "n_test": 8}
MODELS = ("fno", "converted", "unet")
GAP = 0.10  # |rel_l2_2x / rel_l2 - 1| of a consistent operator, and the growth the original U-Net must exceed
TRAIN_RES_RATIO = 1.25  # the converted U-Net's rel_l2 at the training grid may be at most 1.25x the original's


def build(problem: str, model: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained network of one row."""
    torch.manual_seed(seed)
    fno = zoo.create(PROBLEMS[problem], **SIZES[problem])
    if model == "fno":
        return fno
    unet = task.build_baseline("unet", params=count_params(fno), problem=problem, seed=seed)
    return unet if model == "unet" else convert_unet(unet, task.SETTINGS[problem]["train_res"])


def row(*, seed: int, quick: bool, problem: str, model: str) -> dict[str, float]:
    """One model trained on ``problem``: rel_l2 at the training grid and at 2x, and the relative change between them."""
    net = build(problem, model, seed)
    extra = QUICK_DATA if quick else {}
    steps = (QUICK_STEPS if quick else STEPS)[problem]
    r = task.evaluate(net, problem=problem, steps=steps, seed=seed, baselines=[], batch_size=BATCH[problem], **extra)
    m = r.metrics
    gap = m["rel_l2_2x"] / m["rel_l2"] - 1
    return {"rel_l2": m["rel_l2"], "rel_l2_2x": m["rel_l2_2x"], "rel_gap": gap, "abs_rel_gap": abs(gap),
            "log_rel_l2": math.log(m["rel_l2"]), "params": float(count_params(net)),
            "seconds_per_step": m.get("seconds_per_step", float("nan"))}


def _label(problem: str, model: str) -> str:
    return f"{problem} {dict(fno=PROBLEMS[problem], converted='converted U-Net', unet='U-Net')[model]}"


ROWS = [Row(_label(p, m), row, {"problem": p, "model": m}) for p in PROBLEMS for m in MODELS]
CHECKS = [c for p in PROBLEMS for c in (
    Check(_label(p, "fno"), "abs_rel_gap", margin=GAP, higher=False),
    Check(_label(p, "converted"), "abs_rel_gap", margin=GAP, higher=False),
    Check(_label(p, "unet"), "rel_gap", margin=GAP, higher=True),
    Check(_label(p, "converted"), "log_rel_l2", baseline=_label(p, "unet"), margin=-math.log(TRAIN_RES_RATIO), higher=False),
)]

REPRODUCTION = Claim(
    plugin="nns-to-nos", claim=CLAIM, task=TASK, seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings={"fno_sizes": SIZES, "steps": STEPS, "batch_size": BATCH, "gap_margin": GAP,
              "train_res_ratio": TRAIN_RES_RATIO, "resample": {"burgers": "fourier", "darcy": "linear"}},
    notes="Margins fixed before the first recorded run (from one-seed pilots on the task's earlier data and "
          "learning rate), not changed after it. rel_gap = rel_l2_2x / rel_l2 - 1: the relative change of the error "
          f"from the training grid to 2x on the same test functions. Consistent: |rel_gap| <= {GAP:g} for the FNO and "
          f"the converted U-Net; inconsistent: the original U-Net's rel_gap >= {GAP:g}. {GAP:.0%} because the 2x "
          "inputs hold detail the training grid cannot (Darcy's permeability jumps, Burgers' steep fronts), so even a "
          "discretisation-agnostic operator's error moves a few percent (pilots: FNO +3% Burgers, +1% / +8% Darcy "
          "at 200 / 500 steps; original U-Net +174% Burgers, +47% Darcy; the converted U-Net -4% Burgers but +213% "
          "Darcy, so its Darcy check was expected to fail). Training grid: the converted U-Net's rel_l2 <= "
          f"{TRAIN_RES_RATIO:g}x the original's (log_rel_l2, paired over seeds): the recipe also replaces pooling and "
          "upsampling, so the two are different networks at 1x too (pilots: +8% Burgers, +7% Darcy). 5 seeds: every "
          "row trains in under ~25 s. Rows at matched parameters: the U-Net is build_baseline('unet', params=the "
          "FNO's), the converted U-Net has exactly its parameters (and, per seed, its initial weights).",
)
