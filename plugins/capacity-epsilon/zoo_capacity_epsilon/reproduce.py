"""``zoo reproduce capacity-epsilon``: measured packings of near-orthogonal vectors against plain JL and the
k/d-adjusted capacity, and epsilon of the shipped glyph_gpt.stdlib embedding and of Gaussian ones.

Per seed: (1) ``packing``: for every d in ``DIMS`` and eps in ``EPS`` the greedy packing (an orthonormal basis, then
random directions until under 1% of a batch fits) counts k_meas; the errors are mean |ln(k_pred / k_meas)| over the
grid for k_JL = exp(d eps^2 / 4) and k_adj = d exp(d eps^2 / 4), and ``jl_underestimate`` is mean ln(k_meas / k_JL);
(2) ``embeddings``: epsilon of the glyph_gpt.stdlib token embedding (97 x 64; the same every seed) and of a seeded
Gaussian matrix of the same shape (whose cosine std must be 1/sqrt(d): ``gauss_std_ratio``), and log-capacities at
those epsilons (reported only).
"""
from __future__ import annotations

import math
from functools import cache

import numpy as np

from zoo.claims import Check, Claim, Row

from .capacity import DEFAULT_C, capacity, epsilon_estimate, greedy_packing
from .plugin import CLAIM

DIMS, QUICK_DIMS = (8, 16, 24, 32), (8, 16)
EPS, QUICK_EPS = (0.3, 0.4, 0.5), (0.3, 0.5)
RATIO_MARGIN, UNDER_MARGIN = 3.0, 1.0


def packing_row(*, seed: int, quick: bool) -> dict[str, float]:
    """Measured greedy packings on the (d, eps) grid and the two formulas' log-errors."""
    out: dict[str, float] = {}
    jl_err, adj_err, under = [], [], []
    for d in QUICK_DIMS if quick else DIMS:
        for eps in QUICK_EPS if quick else EPS:
            k = greedy_packing(d, eps, seed=seed)
            cap = capacity(d, eps, c=DEFAULT_C)
            out[f"k@d={d},eps={eps:g}"] = float(k)
            jl_err.append(abs(cap["log_jl"] - math.log(k)))
            adj_err.append(abs(cap["log_adjusted"] - math.log(k)))
            under.append(math.log(k) - cap["log_jl"])
    out["jl_log_error"] = float(np.mean(jl_err))
    out["adjusted_log_error"] = float(np.mean(adj_err))
    out["error_ratio"] = out["jl_log_error"] / max(out["adjusted_log_error"], 1e-9)
    out["jl_underestimate"] = float(np.mean(under))
    return out


@cache
def _glyph_embedding() -> np.ndarray:
    import zoo

    return zoo.create("glyph_gpt.stdlib").tok.weight.detach().double().numpy()


def embeddings_row(*, seed: int, quick: bool) -> dict[str, float]:
    """Epsilon of the glyph_gpt.stdlib embedding and of a Gaussian matrix of the same shape, with capacities."""
    glyph = _glyph_embedding()
    gauss = np.random.default_rng(seed).standard_normal(glyph.shape)
    out: dict[str, float] = {}
    for name, e in (("glyph", glyph), ("gauss", gauss)):
        est = epsilon_estimate(e)
        eps = min(est["eps"], 1.0)
        cap = capacity(e.shape[1], eps)
        out.update({f"{name}_eps": est["eps"], f"{name}_sigma": est["sigma"], f"{name}_log_jl": cap["log_jl"],
                    f"{name}_log_adjusted": cap["log_adjusted"]})
    out["gauss_std_ratio"] = out["gauss_sigma"] * math.sqrt(glyph.shape[1])
    return out


REPRODUCTION = Claim(
    plugin="capacity-epsilon", claim=CLAIM, task=None, seeds=(0, 1, 2, 3, 4), quick_seeds=(0, 1),
    rows=[Row("packing", packing_row), Row("embeddings", embeddings_row)],
    checks=[Check("packing", "error_ratio", margin=RATIO_MARGIN),
            Check("packing", "jl_underestimate", margin=UNDER_MARGIN)],
    settings={"dims": list(DIMS), "eps": list(EPS), "c": DEFAULT_C, "packing": "orthonormal basis + greedy random, "
              "batch 256, stop below 1% accepted", "embedding": "glyph_gpt.stdlib tok.weight (97 x 64)"},
    notes=f"margins fixed before the recorded run: (1) the k/d-adjusted formula's mean |log| error against the measured "
          f"packings is at most 1/{RATIO_MARGIN:g} of plain JL's (error_ratio >= {RATIO_MARGIN:g}; the paper reports two "
          "orders of magnitude on its own, unread, error measure over trained LMs; at d <= 32 and with this plugin's "
          "reading of the formula a severalfold cut is the small-scale statement); (2) JL underestimates: mean "
          f"ln(k_meas / k_JL) >= {UNDER_MARGIN:g} (measured packings at least e times the JL count). Both formulas use "
          "the same constant c = 4 (the random-vector union bound), fixed, not fitted, so the adjusted formula gets no "
          "extra parameter. The embeddings row is reported only: the glyph embedding's epsilon (frozen, non-semantic "
          "glyph vectors, cosine sigma about twice 1/sqrt(d)) against Gaussian rows (sigma = 1/sqrt(d) is the known "
          "answer, gauss_std_ratio ~ 1).",
)
