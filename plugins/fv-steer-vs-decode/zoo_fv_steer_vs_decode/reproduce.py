"""``zoo reproduce fv-steer-vs-decode``: the steerable x decodable contingency on ``icl_toy``'s token GPT.

One seed = one ``experiment.run`` (fit and test prompts drawn from that seed; the GPT is the task's cached one): the
function vector of ``zoo-function-vectors`` (``fv_*`` rows) and the paper's own FV definition, the mean difference
of the residual stream between in-context and zero-shot prompts per task and layer (``md_*`` rows), each added at
layers 0..3 of zero-shot test prompts; decodability by the logit lens on the clean test prompts. Cells: 8 tasks x 4
layers = 32. ``*_snd`` is the share (and count) of steerable-not-decodable cells, ``*_dns`` of decodable-not-
steerable ones. Reported only: ``fv`` / ``mean_diff`` / ``scaled`` / ``random`` rows (the other cells, the paper's
per-task unit (best layer / any layer), the tuned-lens and probe closures, norm-transfer r), and the unembedding
statistics of the mean-difference FV.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from zoo.claims import Check, Claim, Row

from .plugin import CLAIM

SND_MARGIN, DNS_MAX, COHERENCE_MARGIN = 0.05, 0.10, 0.2
QUICK = {"n_fit": 16, "n_test": 16, "probe_steps": 40, "lens_steps": 30}


@cache
def _run(seed: int, quick: bool) -> dict[str, Any]:
    import torch

    from zoo.task import torch_threads
    from zoo_task_icl_toy import task as T

    from .experiment import run

    with torch_threads(1), torch.no_grad():
        return run(T.trained_gpt("token"), seed, **(QUICK if quick else {}))


def _cell(prefix: str, key: str):
    def row(*, seed: int, quick: bool) -> dict[str, float]:
        t = _run(seed, quick)[f"{prefix}_table"]
        p = "" if prefix == "fv" else f"{prefix}_"
        return {"share": t[f"{p}{key}"] / t[f"{p}cells"], "count": t[f"{p}{key}"]}
    return row


def _summary(prefix: str):
    def row(*, seed: int, quick: bool) -> dict[str, float]:
        r = _run(seed, quick)
        out = {k.removeprefix(f"{prefix}_"): v for k, v in r[f"{prefix}_table"].items()}
        gain = r["gain" if prefix == "fv" else f"gain_{prefix}"]
        out["mean_gain"], out["max_gain"] = float(gain.mean()), float(gain.max())
        if prefix == "fv":
            out.update({k: r[k] for k in ("snd_closed_by_tuned", "snd_closed_by_probe", "norm_transfer_r")})
            out.update({f"tuned_{k}": r["tuned_table"][f"tuned_{k}"] for k in
                        ("steerable_not_decodable", "decodable_not_steerable")})
            out.update({f"probe_{k}": r["probe_table"][f"probe_{k}"] for k in
                        ("steerable_not_decodable", "decodable_not_steerable")})
            for name in ("lens", "tuned", "probe", "control", "selectivity"):
                for j, v in enumerate(r[name].mean(0)):
                    out[f"{name}@L{j}"] = float(v)
            for j, v in enumerate(r["gain"].mean(0)):
                out[f"gain@L{j}"] = float(v)
        if prefix == "mean_diff":
            out.update({"snd_closed_by_tuned": r["mean_diff_snd_closed_by_tuned"],
                        "snd_closed_by_probe": r["mean_diff_snd_closed_by_probe"],
                        "norm_transfer_r": r["norm_transfer_r_mean_diff"]})
        if prefix == "scaled":
            out["norm_transfer_r"] = r["norm_transfer_r_scaled"]
        return {k: float(v) for k, v in out.items() if not (isinstance(v, float) and np.isnan(v))}
    return row


def _unembed(key: str):
    def row(*, seed: int, quick: bool) -> dict[str, float]:
        return {k: float(np.mean(v)) for k, v in _run(seed, quick)[key].items()}
    return row


ROWS = [Row("fv_snd", _cell("fv", "steerable_not_decodable")), Row("fv_dns", _cell("fv", "decodable_not_steerable")),
        Row("md_snd", _cell("mean_diff", "steerable_not_decodable")),
        Row("md_dns", _cell("mean_diff", "decodable_not_steerable")),
        Row("fv_unembed", _unembed("fv_unembed")), Row("random_unembed", _unembed("random_unembed")),
        Row("md_unembed", _unembed("mean_diff_unembed")),
        Row("fv", _summary("fv")), Row("mean_diff", _summary("mean_diff")), Row("scaled", _summary("scaled")),
        Row("random", _summary("random"))]

CHECKS = [Check("fv_snd", "share", "fv_dns", margin=SND_MARGIN),
          Check("fv_dns", "share", margin=DNS_MAX, higher=False),
          Check("md_snd", "share", "md_dns", margin=SND_MARGIN),
          Check("md_dns", "share", margin=DNS_MAX, higher=False),
          Check("fv_unembed", "coherence", "random_unembed", margin=-COHERENCE_MARGIN, higher=False)]

REPRODUCTION = Claim(
    plugin="fv-steer-vs-decode", claim=CLAIM, task="icl_toy", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS,
    checks=CHECKS, task_options={"mode": "token"},
    settings={"gpt": "icl_toy trained_gpt('token') (dim 64, 4 layers x 4 heads)", "layers": "0..3 (entering block l)",
              "cells": "8 tasks x 4 layers", "steerable": "FV zero-shot acc - no-vector acc > 0.1",
              "decodable": "logit-lens top-1 acc on clean 5-shot prompts >= 0.5", "fv": "zoo-function-vectors, k=4",
              "mean_diff": "mean clean - mean zero-shot residual, last position, per task and layer",
              "scaled_fv": "5 x FV", "random": "random direction with the FV's norm, per task",
              "tuned_lens": "diagonal scale+bias, 200 Adam steps lr 0.05, fitted on the fit prompts",
              "probe": "2-layer MLP (64 ReLU), 300 Adam steps; H&L control: type = (task, query token); counts when "
                       "acc >= 0.5 and selectivity >= 0.1",
              "coherence": "share of the top-5 unembedded tokens inside the task's output domain",
              "n_fit_per_task": 64, "n_test_per_task": 128},
    notes=f"margins fixed from the paper's statements before the recorded run: steerable-not-decodable share exceeds "
          f"decodable-not-steerable share by >= {SND_MARGIN:g} ('common' vs 'nearly empty'), decodable-not-steerable "
          f"<= {DNS_MAX:g} of cells (the paper: 3 of 72 = 0.04), for both FV definitions; FV top-5 coherence within "
          f"{COHERENCE_MARGIN:g} of a random vector of the same norm ('incoherent'). Disclosure: one pilot of seed 0 "
          "ran while building (it showed 7 vs 9 cells for the head FV); the thresholds are the brief's and the "
          "margins the paper's, not tuned on it. Reported only: scaled FV (x5), random vectors (the chance level of "
          "'steerable'), the per-task unit, tuned-lens and probe closures, norm-transfer correlations. The GPT is the "
          "task's one cached model: seeds vary prompts, probes and random vectors, not the GPT.",
)
