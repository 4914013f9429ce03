"""``zoo reproduce value-aware-attn``: value-aware vs value-oblivious r-sparse attention, synthetic and a char-LM's.

Per seed: (1) synthetic attention inputs: ``SYN_N`` sequences of ``T`` Gaussian queries, keys and values (d = 16);
(2) the char-LM: ``attention_probe_gpt`` (the ``char_lm`` reference GPT at dim 64, 2 layers, 4 heads) trained with the
task's loop for ``LM_STEPS`` steps on the Python standard library's source, then its queries, keys and values on
``LM_WINDOWS`` validation windows of ``T`` characters (every layer and head: 2 x 4 x 4 = 32 attention maps). For every
kernel (softmax at temperatures 0.5, 1, 4; relu; quadratic) and r, causal attention rows are approximated by the r
largest weights (``top_r``: the optimum of the value-oblivious objective ||a - a~||; ``top_r_renorm``: the same
renormalised, as top-r sparse attention computes) and by the value-aware optimum (``value_aware``); the metric is the
output error relative to ||AV|| over all rows. The ``gap`` row holds, per source, the top-r minus value-aware error
at the hottest temperature minus the same at the coldest (the skew part of the claim).
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_char_lm import task as char_lm

from .model import CPU
from .plugin import CLAIM
from .value_aware import compare

T, D_SYN, SYN_N, LM_WINDOWS = 24, 16, 8, 4
QUICK_SYN_N, QUICK_LM_WINDOWS, QUICK_T = 2, 1, 12
LM_STEPS, QUICK_LM_STEPS = 300, 5
R, QUICK_R = (2, 4, 8), (4,)
KERNELS = ("softmax", "relu", "quadratic")
TEMPERATURES = (0.5, 1.0, 4.0)
CHECK_R = 4
AWARE_MARGIN, SKEW_MARGIN = 0.05, 0.02
SOURCES = ("syn", "lm")


def synthetic_qkv(seed: int, n: int = SYN_N, t: int = T) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` sequences of ``t`` standard-normal queries, keys and values of dimension ``D_SYN``, seeded."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, t, D_SYN)) for _ in range(3))  # type: ignore[return-value]


def lm_qkv(seed: int, steps: int, windows: int = LM_WINDOWS,
           t: int = T) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], float]:
    """Queries, keys and values (layers x heads x windows, T, 16) of the char-LM trained ``steps`` steps, and its final
    training loss (nats per character)."""
    torch.manual_seed(seed)
    model = zoo.create("attention_probe_gpt")
    data = char_lm.load_corpus()
    fit = char_lm.train(model, data, steps=steps, seed=seed)
    val = data[1]
    starts = np.random.default_rng(seed).integers(0, len(val) - t, windows)
    ids = torch.stack([val[s:s + t] for s in starts])
    per_layer = model.qkv(ids)
    qkv = tuple(torch.cat([per_layer[i][j] for i in sorted(per_layer)]).reshape(-1, t, CPU["dim"] // CPU["heads"])
                .double().numpy() for j in range(3))
    return qkv, float(fit["final_train_loss"])  # type: ignore[return-value]


@cache
def _measure(seed: int, quick: bool) -> dict[str, dict[str, float]]:
    rs = QUICK_R if quick else R
    out: dict[str, dict[str, float]] = {"top_r": {}, "top_r_renorm": {}, "value_aware": {}, "gap": {}}
    if quick:
        lm, lm_loss = lm_qkv(seed, QUICK_LM_STEPS, QUICK_LM_WINDOWS, QUICK_T)
        syn = synthetic_qkv(seed, QUICK_SYN_N, QUICK_T)
    else:
        (lm, lm_loss), syn = lm_qkv(seed, LM_STEPS), synthetic_qkv(seed)
    out["gap"]["lm:final_train_loss"] = lm_loss
    inputs = {"syn": syn, "lm": lm}
    for src, (q, k, v) in inputs.items():
        res = compare(q, k, v, r=rs, kernels=KERNELS, temperatures=TEMPERATURES)
        for key, m in res.items():
            out["top_r"][f"{src}:{key}"] = m["oblivious_raw"]
            out["top_r_renorm"][f"{src}:{key}"] = m["oblivious"]
            out["value_aware"][f"{src}:{key}"] = m["aware"]
            out["value_aware"][f"{src}:{key}:exact_fraction"] = m["exact_fraction"]
        gap = {tau: res[f"softmax@{tau:g}/r={CHECK_R}"]["oblivious_raw"] - res[f"softmax@{tau:g}/r={CHECK_R}"]["aware"]
               for tau in TEMPERATURES}
        out["gap"].update({f"{src}:gap@{tau:g}": g for tau, g in gap.items()})
        out["gap"][f"{src}:hot_minus_cold"] = gap[max(TEMPERATURES)] - gap[min(TEMPERATURES)]
    return out


def approximation_row(*, seed: int, quick: bool, which: str) -> dict[str, float]:
    """One approximation's relative output errors (or the ``gap`` figures) on this seed's inputs."""
    return dict(_measure(seed, quick)[which])


SETTINGS: dict[str, Any] = {"T": T, "synthetic": {"sequences": SYN_N, "d": D_SYN}, "lm_windows": LM_WINDOWS,
                            "lm_steps": LM_STEPS, "lm": dict(CPU), "r": list(R), "kernels": list(KERNELS),
                            "temperatures": list(TEMPERATURES), "causal": True}

REPRODUCTION = Claim(
    plugin="value-aware-attn", claim=CLAIM, task="char_lm", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,),
    rows=[Row("value_aware", approximation_row, {"which": "value_aware"}),
          Row("top_r", approximation_row, {"which": "top_r"}),
          Row("top_r_renorm", approximation_row, {"which": "top_r_renorm"}),
          Row("gap", approximation_row, {"which": "gap"})],
    checks=[Check("value_aware", f"{src}:softmax@1/r={CHECK_R}", baseline="top_r", margin=AWARE_MARGIN, higher=False)
            for src in SOURCES]
    + [Check("gap", f"{src}:hot_minus_cold", margin=SKEW_MARGIN) for src in SOURCES],
    settings=SETTINGS,
    task_options={"steps": LM_STEPS},
    notes=f"margins fixed before the recorded run: (1) at softmax temperature 1 (the model's own attention) and r = "
          f"{CHECK_R}, top-r minus value-aware relative output error >= {AWARE_MARGIN} on synthetic and on the "
          f"char-LM's Q/K/V ('substantially beats'; the paper reports 8-20 points of error; 0.05 is a quarter to a "
          f"tenth of the errors measured, and top-r is the exact optimum of the value-oblivious objective, the "
          f"stronger of the two top-r variants, so the check is against the hardest value-oblivious baseline); "
          f"(2) skew: that gap at temperature {max(TEMPERATURES):g} minus the gap at {min(TEMPERATURES):g} >= "
          f"{SKEW_MARGIN} on both sources (a larger value-aware advantage for the less skewed kernel). relu, "
          "quadratic, r = 2 and 8 and the renormalised top-r are reported only. The value-aware solver is exact "
          "(every support) where C(n, r) <= 3000 and swap-refined from three starts otherwise (exact_fraction "
          "reports the share); an inexact solve can only understate the value-aware advantage.",
)
