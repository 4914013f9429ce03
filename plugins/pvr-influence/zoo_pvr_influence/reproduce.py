"""``zoo reproduce pvr-influence``: canonical holdout of bit 0 on nine Boolean targets of n = 8 bits (dictators,
parities, majorities, AND, a PVR function whose frozen bit is a pointer bit, a degree-1 linear target), for a linear
model (w.x + b, GD from zero), an MLP and a tiny Transformer.

Per seed and model: the unseen-half squared error ``test_mse:<target>`` of the model trained on the half cube x_0 = +1,
and over the nine targets: ``spearman`` (rank correlation of the errors with the Boolean-influence prediction 4 Inf_0),
``spearman_wrong_bit`` (the same with 4 Inf_1, the influence of a bit that is not held out: the control predictor),
``mean_abs_dev`` (mean |test_mse - 4 Inf_0|), ``max_dev_influence_deg1`` (max |test_mse - Inf_0| over the degree <= 1
targets: dictators and the linear one) and ``max_dev_exact`` (max |test_mse - the exact GD holdout error of w.x + b|).
"""
from __future__ import annotations

from functools import cache

import numpy as np

from zoo.claims import Check, Claim, Row

from .boolean import PVR, boolean_influence, linear_holdout_prediction
from .plugin import CLAIM

N, K, WRONG = 8, 0, 1
_LIN = np.array([0.6, 0.5, 0.4, 0.3, 0.3, 0.2, 0.1, 0.0])
TARGETS = {
    "dictator_0": lambda x: x[:, 0],
    "dictator_1": lambda x: x[:, 1],
    "parity_01": lambda x: x[:, 0] * x[:, 1],
    "parity_12": lambda x: x[:, 1] * x[:, 2],
    "majority_3": lambda x: np.sign(x[:, :3].sum(1)),
    "majority_5": lambda x: np.sign(x[:, :5].sum(1)),
    "and_01": lambda x: np.where((x[:, 0] > 0) & (x[:, 1] > 0), 1.0, -1.0),
    "pvr_pointer": PVR(2, 3, "majority", extra=2),
    "linear": lambda x: x @ (_LIN / np.linalg.norm(_LIN)),
}
QUICK_TARGETS = ("dictator_0", "dictator_1", "majority_3", "parity_12")
DEGREE_ONE = ("dictator_0", "dictator_1", "linear")  # targets of degree <= 1: the linear model's error is Inf_0
QUICK_STEPS = 60
LINEAR_MARGIN, RANK_MARGIN, CONTROL_MARGIN = 0.02, 0.8, 0.3


def _rank(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    r[order] = np.arange(len(v), dtype=float)
    for val in np.unique(v):  # ties share their average rank
        r[v == val] = r[v == val].mean()
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = _rank(np.asarray(a, float)), _rank(np.asarray(b, float))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / den) if den > 0 else 0.0


@cache
def _measures(name: str) -> tuple[float, float, float]:
    f = TARGETS[name]
    return (4 * float(boolean_influence(f, N, K)), 4 * float(boolean_influence(f, N, WRONG)),
            linear_holdout_prediction(f, N, K))


def holdout_row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    """Canonical holdout of bit 0 for ``model`` on every target: errors and their agreement with the predictions."""
    import torch

    from .holdout import canonical_holdout

    torch.set_num_threads(1)
    names = QUICK_TARGETS if quick else tuple(TARGETS)
    out: dict[str, float] = {}
    test, pred, wrong, exact, deg1 = [], [], [], [], []
    for name in names:
        res = canonical_holdout(model, TARGETS[name], N, K, seed=seed, steps=QUICK_STEPS if quick else None)
        p, w, e = _measures(name)
        out[f"test_mse:{name}"] = res["test_mse"]
        test.append(res["test_mse"])
        pred.append(p)
        wrong.append(w)
        exact.append(e)
        if name in DEGREE_ONE:
            deg1.append(abs(res["test_mse"] - p / 4))
    t = np.array(test)
    out["spearman"] = spearman(t, np.array(pred))
    out["spearman_wrong_bit"] = spearman(t, np.array(wrong))
    out["spearman_gain"] = out["spearman"] - out["spearman_wrong_bit"]
    out["mean_abs_dev"] = float(np.mean(np.abs(t - np.array(pred))))
    out["max_dev_exact"] = float(np.max(np.abs(t - np.array(exact))))
    out["max_dev_influence_deg1"] = float(max(deg1))
    return out


REPRODUCTION = Claim(
    plugin="pvr-influence", claim=CLAIM, task=None, seeds=(0, 1, 2), quick_seeds=(0,),
    rows=[Row(m, holdout_row, {"model": m}) for m in ("linear", "mlp", "transformer")],
    checks=[Check("linear", "max_dev_influence_deg1", margin=LINEAR_MARGIN, higher=False),
            Check("mlp", "spearman", margin=RANK_MARGIN), Check("transformer", "spearman", margin=RANK_MARGIN),
            Check("mlp", "spearman_gain", margin=CONTROL_MARGIN),
            Check("transformer", "spearman_gain", margin=CONTROL_MARGIN)],
    settings={"n": N, "frozen_bit": K, "control_bit": WRONG, "targets": list(TARGETS), "training":
              "full batch squared loss on the 128-point half cube; linear: GD lr 0.2, 400 steps from zero; mlp "
              "(2 x 128 ReLU) and transformer (dim 32, 2 heads, 1 block): Adam 3e-3, 300 steps"},
    notes=f"margins fixed before the recorded run: (1) linear model (w.x + b, GD from zero): on the degree <= 1 "
          f"targets the unseen-half error is within {LINEAR_MARGIN} of Inf_0 (a tight characterisation; max_dev_exact "
          f"reports the agreement with this plugin's closed form on every target); (2) MLP and Transformer: Spearman "
          f"rank correlation of the unseen-half errors with 4 Inf_0 "
          f"(the min-degree learner's error) over the nine targets >= {RANK_MARGIN} ('supported experimentally'); (3) "
          f"control: that correlation exceeds the one with 4 Inf_1 (the influence of a bit that was not held out) by "
          f">= {CONTROL_MARGIN}, so the agreement is about the frozen bit, not about how hard the target is. "
          "3 seeds: a seed runs about 30 s (the transformer dominates). mean_abs_dev reports how close the networks' "
          "errors come to the value 4 Inf_0 itself.",
)
