"""``zoo reproduce mlp-kan``: MLP-KAN vs pure MLP and pure KAN, on representation and function learning.

Each row runs both tasks for its kind of feed-forward layer:

1. digits_classify (representation learning): ``mlp_kan_vit`` against the same ViT with a single MLP
   (``ffn="mlp"``) or a single FasterKAN (``ffn="kan"``) as feed-forward layer, its ``ffn_dim`` matched
   to MLP-KAN's parameter count; the task's trainer (``zoo_task_digits.task.train``).
2. formula_regress (function learning): ``mlp_kan_formula`` on ``FORMULAS``, against the task's ``mlp``
   and ``kan`` baselines at its parameter count (``zoo_task_formula_regress.task.fit_formulas``).

The MLP-KAN row also reports ``mlp_slot_share``: the fraction of top-2 slots its routers send to MLP
experts on the digits test set and, averaged over the formulas, on their test points (0.5 = even).
"""
from __future__ import annotations

import inspect
import math
from typing import Any

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params, match_width
from zoo_task_digits import task as digits
from zoo_task_formula_regress import task as formula

from .model import mlp_kan_vit, mlp_slot_share
from .plugin import CLAIM

FORMULAS = ("exp_sin_sq", "bessel_j0", "ellipkinc", "feynman_I_6_2")  # toy, 1-d, special function, Feynman
DIGITS_STEPS, FORMULA_STEPS = 400, 500
ACC_TOLERANCE = 0.02  # "close to the better", fixed before measuring: digits accuracy within 0.02
ERR_FACTOR = 1.5  # and formula error at most 1.5x (as a difference of logs: margin -log(1.5))
QUICK = {"digits_steps": 5, "formula_steps": 5, "formulas": ["xy"], "vit": {"dim": 16, "depth": 1, "heads": 2,
                                                                           "ffn_dim": 8}}


def digits_model(ffn: str, seed: int, **config: Any) -> torch.nn.Module:
    """``mlp_kan_vit(**config)`` for ``ffn="moe"``, else the pure-``ffn`` ViT with ``ffn_dim`` matched to its
    parameter count; seeded."""
    if ffn != "moe":
        target = count_params(mlp_kan_vit(**config))
        rest = {k: v for k, v in config.items() if k != "ffn_dim"}
        config = {**rest, "ffn": ffn, "ffn_dim": match_width(lambda w: mlp_kan_vit(ffn=ffn, ffn_dim=w, **rest), target, lo=2)}
    torch.manual_seed(seed)
    return mlp_kan_vit(**config)


def ffn_row(*, seed: int, ffn: str, digits_steps: int, formula_steps: int, formulas: tuple[str, ...] | list[str],
            vit: dict | None = None) -> dict[str, float]:
    """One kind of feed-forward layer (``moe``, ``mlp`` or ``kan``) on both tasks."""
    model = digits_model(ffn, seed, **(vit or {}))
    fit = digits.train(model, steps=digits_steps, seed=seed)
    out = {"digits_params": float(count_params(model)), "accuracy": digits.accuracy(model)["accuracy"],
           "final_train_loss": fit["final_train_loss"], "digits_s_per_step": fit["seconds_per_step"]}
    if ffn == "moe":
        out["mlp_slot_share"] = mlp_slot_share(model)  # routing of the test images just scored
    built: list[torch.nn.Module] = []

    def build(d: int) -> torch.nn.Module:
        built.append(zoo.create("mlp_kan_formula", in_features=d))
        return built[-1]

    f = formula.fit_formulas(build, formulas, steps=formula_steps, seed=seed, baseline=None if ffn == "moe" else ffn)
    if ffn == "moe":  # each trained model last routed its formula's test points
        out["formula_mlp_slot_share"] = sum(mlp_slot_share(m) for m in built) / len(built)
    out.update({"formula_params": f["params_mean"], "rel_rmse_gmean": f["rel_rmse_gmean"],
                "log_rel_rmse_gmean": math.log(f["rel_rmse_gmean"]), "rel_rmse_mean": f["rel_rmse_mean"],
                "formula_s_per_step": f["seconds_per_step"], **{f"rel_rmse:{n}": f[f"rel_rmse:{n}"] for n in formulas}})
    return out


REPRODUCTION = Claim(
    plugin="mlp-kan", claim=CLAIM, task="digits_classify", seeds=(0, 1, 2),
    rows=[Row(label, ffn_row, {"ffn": ffn, "digits_steps": DIGITS_STEPS, "formula_steps": FORMULA_STEPS,
                               "formulas": list(FORMULAS)}, quick_args=QUICK)
          for label, ffn in (("MLP-KAN", "moe"), ("MLP", "mlp"), ("KAN", "kan"))],
    checks=[*(Check("MLP-KAN", "accuracy", baseline=b, margin=-ACC_TOLERANCE) for b in ("MLP", "KAN")),
            *(Check("MLP-KAN", "log_rel_rmse_gmean", baseline=b, margin=-math.log(ERR_FACTOR), higher=False)
              for b in ("MLP", "KAN"))],
    settings={"formula_regress": formula.describe(formula=list(FORMULAS), steps=FORMULA_STEPS),
              "aux_loss_coef": inspect.signature(mlp_kan_vit).parameters["aux_loss_coef"].default},
    notes="within 0.02 accuracy of the better pure ViT = margin -0.02 against each; formula gmean error at most 1.5x "
          "the better baseline's = log(baseline) - log(MLP-KAN) >= -log(1.5) against each (both fixed before "
          "measuring). Digits and formulas run in each row: MLP is the ffn='mlp' ViT and the task's mlp baseline, "
          "KAN the ffn='kan' ViT and the task's kan baseline",
)
