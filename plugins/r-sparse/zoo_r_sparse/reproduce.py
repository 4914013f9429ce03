"""``zoo reproduce r-sparse``: R-Sparse at 50% sparsity on a trained char_lm GPT, training-free.

One LLaMA-like GPT (the task baseline ``gpt-rms-swiglu``) is trained; copies of it get every block
linear layer replaced at 50% sparsity by R-Sparse (per-layer alpha from ``allocation``), by
magnitude-only input sparsity (alpha = 1, channels ranked by ``|x|``: the TEAL/CATS-style
baseline), and by a pure rank-r SVD (alpha = 0); thresholds are calibrated on training windows and
the validation bits/char compared with the dense model's on the same windows. Decode speed is the
interleaved single-token timing of ``speed.time_decode``.

The margin is fixed before measuring: R-Sparse passes when its bits/char is at most 2% above the
dense model's and not above magnitude-only sparsity's.
"""
from __future__ import annotations

import copy
import logging
import time

import torch

import zoo
from zoo_task_char_lm import task as char_lm

from .allocation import search_sparse_ratios
from .model import calibrate, layer_inputs, rsparse_linears, rsparsify
from .speed import mac_fraction, time_decode

log = logging.getLogger(__name__)

BASE = "gpt-rms-swiglu"
SIZE = {"dim": 128, "depth": 4, "heads": 4, "block_size": 64}
STEPS, BATCH, SEED, SPARSITY, MARGIN = 300, 16, 0, 0.5, 0.02
CALIB_WINDOWS, VAL_WINDOWS, TIMING_TOKENS = 16, 128, 32
QUICK_SIZE = {"dim": 32, "depth": 1, "heads": 2, "block_size": 32}
QUICK = {"steps": 5, "batch": 4, "chars": 40_000, "calib": 2, "val": 4, "tokens": 2}


def variant(dense: torch.nn.Module, data: char_lm.Data, ratios, score: str, calib: torch.Tensor, val_windows: int,
            val_ids: torch.Tensor, tokens: int) -> dict[str, float]:
    """Sparsify a copy of ``dense``, calibrate it and measure loss, sparsity, MACs and decode time."""
    model = rsparsify(copy.deepcopy(dense), SPARSITY, ratios, score)
    calibrate(model, calib)
    bpc = char_lm.val_loss(model, data, max_windows=val_windows)
    layers = [layer for _n, layer in rsparse_linears(model)]
    xs = layer_inputs(model, layers, val_ids)
    routed = sum(float((~layer.mask(x)).float().mean()) for layer, x in zip(layers, xs, strict=True)) / len(layers)
    macs = sum(mac_fraction(layer, x) * layer.in_features * layer.out_features for layer, x in zip(layers, xs, strict=True))
    total = sum(layer.in_features * layer.out_features for layer in layers)
    timing = time_decode(layers, [x[:tokens] for x in xs])
    return {"val_bpc": bpc, "input_sparsity": routed, "mac_fraction": macs / total, **timing,
            "mean_alpha": sum(layer.sparse_ratio for layer in layers) / len(layers),
            "mean_rank": sum(layer.rank for layer in layers) / len(layers)}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train the dense GPT, sparsify copies, return the table; see the module docstring for pass/fail.

    Args:
        quick: a tiny model, a few steps and small samples (seconds; for tests): numbers mean nothing.
    """
    from .plugin import CLAIM

    t0 = time.perf_counter()
    size = QUICK_SIZE if quick else SIZE
    steps, batch = (QUICK["steps"], QUICK["batch"]) if quick else (STEPS, BATCH)
    n_cal, n_val, n_tok = (QUICK["calib"], QUICK["val"], QUICK["tokens"]) if quick else (
        CALIB_WINDOWS, VAL_WINDOWS, TIMING_TOKENS)
    data = char_lm.load_corpus(max_chars=QUICK["chars"] if quick else None)
    dense = char_lm.build_baseline(BASE, seed=SEED, **size)
    res = zoo.evaluate(dense, task=char_lm.NAME, steps=steps, seed=SEED, baselines=[], data=data, batch_size=batch)
    t = dense.block_size
    calib = data[0][: n_cal * t].view(n_cal, t)
    val_ids = data[1][: n_cal * t].view(n_cal, t)
    dense_bpc = char_lm.val_loss(dense, data, max_windows=n_val)
    alphas, _errors = search_sparse_ratios(dense, calib, SPARSITY)
    table = {f"dense ({BASE})": {"val_bpc": dense_bpc, "input_sparsity": 0.0, "mac_fraction": 1.0,
                                 "params": res.metrics["params"]}}
    rows = (("R-Sparse (searched alpha)", alphas, "rsparse"), ("R-Sparse (alpha=0.5)", 0.5, "rsparse"),
            ("magnitude-only (alpha=1, |x|)", 1.0, "magnitude"), ("low-rank only (alpha=0)", 0.0, "rsparse"))
    for label, ratios, score in rows:
        table[label] = variant(dense, data, ratios, score, calib, n_val, val_ids, n_tok)
        table[label]["bpc_increase"] = table[label]["val_bpc"] / dense_bpc - 1.0
        log.info("r-sparse reproduce: %s: %s", label, table[label])
    rs, mag = table["R-Sparse (searched alpha)"], table["magnitude-only (alpha=1, |x|)"]
    within = rs["bpc_increase"] <= MARGIN
    beats = rs["val_bpc"] <= mag["val_bpc"]
    passed = within and beats
    speed = (f"single-token CPU decode time of the linear layers: dense {rs['dense_ms']:.3f} ms vs R-Sparse "
             f"{rs['sparse_ms']:.3f} ms (x{rs['speedup']:.2f}, "
             f"{'a speed-up' if rs['speedup'] > 1 else 'no speed-up'} at this size; MACs {rs['mac_fraction']:.2f} of dense)")
    low = table["low-rank only (alpha=0)"]
    note = (" (as good as R-Sparse here: at this size the weights are close to low-rank, so this run does not "
            "separate R-Sparse from a plain truncated SVD)" if low["val_bpc"] <= rs["val_bpc"] else "")
    summary = (f"At {SPARSITY:.0%} sparsity of every block linear layer, R-Sparse (searched alpha, mean "
               f"{rs['mean_alpha']:.2f}) gives {rs['val_bpc']:.4f} bits/char vs dense {dense_bpc:.4f} "
               f"({rs['bpc_increase']:+.2%}; margin {MARGIN:.0%}: {'within' if within else 'exceeded'}) and vs "
               f"magnitude-only {mag['val_bpc']:.4f} ({mag['bpc_increase']:+.2%}; R-Sparse "
               f"{'better or equal' if beats else 'worse'}); low-rank only "
               f"{table['low-rank only (alpha=0)']['bpc_increase']:+.2%}{note}. {speed}.")
    if quick:
        summary = "QUICK RUN (tiny model, few steps; not a measurement of the claim). " + summary
    settings = {"quick": quick, "task": char_lm.NAME, "base": BASE, "steps": steps, "batch_size": batch, "seed": SEED,
                **size, "sparsity": SPARSITY, "margin": MARGIN, "searched_alphas": alphas,
                "calibration_windows": n_cal, "val_windows": n_val, "timing_tokens": n_tok,
                "scope": "q, k, v, out, gate, up, down of every block; every token sparse (no dense prefill)",
                "torch_threads": torch.get_num_threads(), **char_lm.corpus_info(QUICK["chars"] if quick else None)}
    return zoo.ClaimResult(plugin="r-sparse", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
