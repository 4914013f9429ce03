"""``zoo reproduce r-sparse``: R-Sparse at 50% sparsity on a trained char_lm GPT, training-free.

Per seed the task trains one LLaMA-like GPT (baseline ``gpt-rms-swiglu``); copies of it get every block
linear layer at 50% sparsity: R-Sparse (searched per-layer alpha, or 0.5), magnitude-only input sparsity
(alpha 1, ``|x|``: TEAL/CATS style) or rank-r SVD only (alpha 0), calibrated on training windows and
scored on the dense model's validation windows; decode timing from ``speed.time_decode``.
"""
from __future__ import annotations

import copy
import functools

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_char_lm import task as char_lm

from .allocation import search_sparse_ratios
from .model import calibrate, layer_inputs, rsparse_linears, rsparsify
from .plugin import CLAIM, TASK
from .speed import mac_fraction, time_decode

BASE, SPARSITY, MARGIN = "gpt-rms-swiglu", 0.5, 0.02
# the task's claim budget (issue 14: settled runs, seed spread measured); bits/char on the whole validation split
FULL = {"size": char_lm.CLAIM_SIZE, "chars": None, "train": char_lm.CLAIM_TRAIN,
        "calibration_windows": 16, "val_windows": None, "timing_tokens": 32}
QUICK = {"size": {"dim": 32, "depth": 1, "heads": 2, "block_size": 32}, "chars": 40_000, "train": {"batch_size": 4},
         "calibration_windows": 2, "val_windows": 4, "timing_tokens": 2}


@functools.lru_cache(maxsize=1)
def _dense(seed: int, quick: bool, steps: int) -> dict:
    """This seed's dense GPT trained by the task, its calibration and probe windows, searched alphas and
    bits/char. Cached: the harness runs a seed's rows one after another, and they share it."""
    cfg = QUICK if quick else FULL
    data = char_lm.load_corpus(max_chars=cfg["chars"])
    dense = char_lm.build_baseline(BASE, seed=seed, **cfg["size"])
    res = zoo.evaluate(dense, task=char_lm.NAME, steps=steps, seed=seed, baselines=[], data=data, **cfg["train"])
    t, n = dense.block_size, cfg["calibration_windows"]
    calib = data[0][: n * t].view(n, t)
    return {"model": dense, "data": data, "calib": calib, "probe": data[1][: n * t].view(n, t),
            "alphas": search_sparse_ratios(dense, calib, SPARSITY)[0], "params": res.metrics["params"],
            "val_bpc": char_lm.val_loss(dense, data, max_windows=cfg["val_windows"])}


def dense_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The dense GPT's validation bits/char on the windows the sparse copies are scored on."""
    d = _dense(seed, quick, steps)
    return {"val_bpc": d["val_bpc"], "params": d["params"]}


def sparse_row(*, seed: int, quick: bool, steps: int, alpha: float | str, score: str) -> dict[str, float]:
    """A copy of the dense GPT at 50% sparsity (``alpha="searched"``: the per-layer allocation), calibrated,
    scored for bits/char, routed share, MACs and single-token decode time."""
    cfg, d = QUICK if quick else FULL, _dense(seed, quick, steps)
    model = rsparsify(copy.deepcopy(d["model"]), SPARSITY, d["alphas"] if alpha == "searched" else alpha, score)
    calibrate(model, d["calib"])
    bpc = char_lm.val_loss(model, d["data"], max_windows=cfg["val_windows"])
    layers = [layer for _name, layer in rsparse_linears(model)]
    xs = layer_inputs(model, layers, d["probe"])
    pairs = list(zip(layers, xs, strict=True))
    routed = sum(float((~layer.mask(x)).float().mean()) for layer, x in pairs) / len(layers)
    macs = sum(mac_fraction(layer, x) * layer.in_features * layer.out_features for layer, x in pairs)
    total = sum(layer.in_features * layer.out_features for layer in layers)
    return {"val_bpc": bpc, "bpc_increase": bpc / d["val_bpc"] - 1.0, "input_sparsity": routed,
            "mac_fraction": macs / total, **time_decode(layers, [x[: cfg["timing_tokens"]] for x in xs]),
            "mean_alpha": sum(layer.sparse_ratio for layer in layers) / len(layers),
            "mean_rank": sum(layer.rank for layer in layers) / len(layers)}


RSPARSE, MAGNITUDE = "R-Sparse (searched alpha)", "magnitude-only (alpha=1, |x|)"
REPRODUCTION = Claim(
    plugin="r-sparse", claim=CLAIM, task=TASK, steps=char_lm.CLAIM_STEPS, quick_steps=5, seeds=(0, 1, 2),
    rows=[Row(f"dense ({BASE})", dense_row),
          Row(RSPARSE, sparse_row, {"alpha": "searched", "score": "rsparse"}),
          Row("R-Sparse (alpha=0.5)", sparse_row, {"alpha": 0.5, "score": "rsparse"}),
          Row(MAGNITUDE, sparse_row, {"alpha": 1.0, "score": "magnitude"}),
          Row("low-rank only (alpha=0)", sparse_row, {"alpha": 0.0, "score": "rsparse"})],
    checks=[Check(RSPARSE, "bpc_increase", margin=MARGIN, higher=False),
            Check(RSPARSE, "val_bpc", baseline=MAGNITUDE, higher=False)],
    task_options=char_lm.CLAIM_TRAIN,
    settings={"base": BASE, "sparsity": SPARSITY, "size": FULL["size"],
              **{k: FULL[k] for k in ("calibration_windows", "val_windows", "timing_tokens")},
              "scope": "q, k, v, out, gate, up, down of every block; every token sparse (no dense prefill)"},
    notes=f"margins fixed before measuring: R-Sparse's bits/char at most {MARGIN:.0%} above dense (the claim's "
          "'keeps performance') and not above magnitude-only sparsity at the same budget (margin 0: both rows sparsify the "
          "same trained weights and are scored on the same 80,000 validation characters, so the seed spread of training, "
          f"{char_lm.CLAIM_SEED_SPREAD_BPC:g} bits/char at this budget, cancels in the paired difference and the interval "
          "over seeds carries the rest); dense GPT at the task's claim budget (issue 14); the alpha=0.5 and low-rank-only "
          "rows and the decode timing (dense_ms, sparse_ms, speedup) are reported only",
)
