"""``zoo reproduce mlp-kan``: MLP-KAN vs pure MLP and pure KAN, on representation and function learning.

1. digits_classify (representation learning): ``mlp_kan_vit`` against the same ViT with a single MLP
   (``ffn="mlp"``) or a single FasterKAN (``ffn="kan"``) as feed-forward layer, its ``ffn_dim`` matched
   to MLP-KAN's total parameter count; the task's trainer (AdamW, one-cycle, batch 64), ``DIGITS_STEPS``.
2. formula_regress (function learning): ``zoo.evaluate(mlp_kan_formula)`` on ``FORMULAS`` with the
   task's ``mlp`` and ``kan`` baselines at its parameter count (full-batch Adam, ``FORMULA_STEPS``).

"Close to the better" is fixed before measuring: digits accuracy within ``ACC_TOLERANCE`` of the best
pure model; formula geometric-mean relative RMSE at most ``ERR_FACTOR`` x the best baseline's.
"""
from __future__ import annotations

import logging
import time

import torch

import zoo
from zoo_task_digits import task as digits
from zoo_task_formula_regress import task
from zoo_task_formula_regress.task import torch_threads
from zoo.task import count_params, match_width

from .model import mlp_kan_vit

log = logging.getLogger(__name__)

SEED = 0
DIGITS_STEPS, QUICK_DIGITS_STEPS = 400, 5
FORMULA_STEPS, QUICK_FORMULA_STEPS = 500, 5
FORMULAS = ("exp_sin_sq", "bessel_j0", "ellipkinc", "feynman_I_6_2")  # toy, 1-d, special function, Feynman
QUICK_FORMULAS = ("xy",)
QUICK_VIT = {"dim": 16, "depth": 1, "heads": 2, "ffn_dim": 8}
ACC_TOLERANCE = 0.02
ERR_FACTOR = 1.5


def digits_models(seed: int, **config: int) -> dict[str, torch.nn.Module]:
    """MLP-KAN ViT (``mlp_kan_vit(**config)``) and the pure-MLP / pure-KAN ViTs with ``ffn_dim`` matched to
    its parameter count."""
    torch.manual_seed(seed)
    moe = mlp_kan_vit(**config)
    target = count_params(moe)
    out = {"MLP-KAN": moe}
    rest = {k: v for k, v in config.items() if k != "ffn_dim"}
    for label, kind in (("pure MLP", "mlp"), ("pure KAN", "kan")):
        width = match_width(lambda w, k=kind: mlp_kan_vit(ffn=k, ffn_dim=w, **rest), target, lo=2)
        torch.manual_seed(seed)
        out[label] = mlp_kan_vit(ffn=kind, ffn_dim=width, **rest)
    return out


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Run both comparisons; ``passed`` when MLP-KAN is close to the better pure model on both tasks.

    Args:
        quick: a few steps and one formula (seconds; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    d_steps, f_steps = (QUICK_DIGITS_STEPS, QUICK_FORMULA_STEPS) if quick else (DIGITS_STEPS, FORMULA_STEPS)
    formulas = list(QUICK_FORMULAS if quick else FORMULAS)
    t0 = time.perf_counter()
    table: dict[str, dict[str, float]] = {}
    with torch_threads(1):
        for label, model in digits_models(SEED, **(QUICK_VIT if quick else {})).items():
            fit = digits.train(model, steps=d_steps, seed=SEED)
            table[f"{label} ViT (digits)"] = {"params": float(count_params(model)),
                                              "accuracy": digits.accuracy(model)["accuracy"],
                                              "final_train_loss": fit["final_train_loss"],
                                              "s_per_step": fit["seconds_per_step"]}
            log.info("mlp-kan reproduce: digits %s %s", label, table[f"{label} ViT (digits)"])
        torch.manual_seed(SEED)
        r = zoo.evaluate(zoo.create("mlp_kan_formula"), task=task.NAME, formula=formulas, steps=f_steps, seed=SEED)
    for label, m in (("MLP-KAN", r.metrics), ("mlp", r.baselines["mlp"]), ("kan", r.baselines["kan"])):
        row = {"params": m["params_mean"], "rel_rmse_gmean": m["rel_rmse_gmean"], "rel_rmse_mean": m["rel_rmse_mean"],
               "s_per_step": m["seconds_per_step"]}
        row.update({f"rel_rmse:{f}": m[f"rel_rmse:{f}"] for f in formulas})
        table[f"{label} (formula_regress)"] = row

    acc = {k: table[f"{k} ViT (digits)"]["accuracy"] for k in ("MLP-KAN", "pure MLP", "pure KAN")}
    err = {k: table[f"{k} (formula_regress)"]["rel_rmse_gmean"] for k in ("MLP-KAN", "mlp", "kan")}
    best_acc, best_err = max(acc["pure MLP"], acc["pure KAN"]), min(err["mlp"], err["kan"])
    digits_ok = acc["MLP-KAN"] >= best_acc - ACC_TOLERANCE
    formula_ok = err["MLP-KAN"] <= ERR_FACTOR * best_err
    passed = digits_ok and formula_ok
    summary = (f"digits: MLP-KAN {acc['MLP-KAN']:.4f} vs pure MLP {acc['pure MLP']:.4f} / pure KAN "
               f"{acc['pure KAN']:.4f} -> {'within' if digits_ok else 'not within'} {ACC_TOLERANCE} of the better; "
               f"formulas ({len(formulas)}): gmean rel RMSE MLP-KAN {err['MLP-KAN']:.4g} vs mlp {err['mlp']:.4g} / "
               f"kan {err['kan']:.4g} -> {'within' if formula_ok else 'not within'} {ERR_FACTOR}x of the better.")
    if quick:
        summary = "QUICK RUN (few steps, one formula; not a measurement of the claim). " + summary
    settings = {"quick": quick, "seed": SEED, "intra_op_threads": 1, "acc_tolerance": ACC_TOLERANCE,
                "err_factor": ERR_FACTOR,
                "digits": {"steps": d_steps, "model": "mlp_kan_vit (D=64, 2 blocks, ffn_dim 32, 4+4 experts, top-2)",
                           "baselines": "same ViT with ffn='mlp' / 'kan', ffn_dim matched to total parameters",
                           "trainer": "zoo_task_digits.task.train defaults (AdamW 2e-3, wd 0.05, one-cycle, batch 64)"},
                "formula": {"steps": f_steps, "formulas": formulas, "model": "mlp_kan_formula defaults",
                            "trainer": "zoo_task_formula_regress.task.train (Adam 1e-2, cosine, full batch)"}}
    return zoo.ClaimResult(plugin="mlp-kan", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
