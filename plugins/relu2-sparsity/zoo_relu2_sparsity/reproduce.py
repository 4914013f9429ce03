"""``zoo reproduce relu2-sparsity``: ReLU vs SwiGLU vs ReGLU vs ReLU² GPTs on char_lm.

The paper's four FFNs in the task's reference GPT (RMSNorm, equal parameters: gated FFNs at 2/3 width),
trained by the task alike, then analysed with ``cett``: sparsity at equal loss (PPL-1%: the largest
shared CETT keeping perplexity within 1% of the model's own), predictivity and hardware affinity there.
"""
from __future__ import annotations

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_char_lm import task as char_lm

from . import cett
from .plugin import CLAIM, TASK

PPL_P = 0.01
# ReLU² must lead each FFN by more than one configuration's seed noise in PPL-1% sparsity: the 300-step harness
# run (2026-12-01) measured seed stds of 0.003-0.015 (ReLU, ReLU², ReGLU) and a paired ReLU² - ReGLU std of 0.012
MARGIN = 0.01
# the task's claim budget (issue 14: settled runs, seed spread measured); bits/char on the whole validation split
FULL = {"size": char_lm.CLAIM_SIZE, "chars": None, "train": char_lm.CLAIM_TRAIN,
        "calibration_windows": 16, "search_iters": 10, "eval_windows": None, "predictor_steps": 200, "probe_windows": 16}
QUICK = {"size": {"dim": 32, "depth": 1, "heads": 2, "block_size": 32}, "chars": 40_000, "train": {"batch_size": 4},
         "calibration_windows": 2, "search_iters": 3, "eval_windows": 4, "predictor_steps": 5, "probe_windows": 2}


def ffn_row(*, seed: int, quick: bool, steps: int, model: str) -> dict[str, float]:
    """Train one GPT (a task baseline or this plugin's model) through the task and measure it at PPL-1%."""
    cfg = QUICK if quick else FULL
    data = char_lm.load_corpus(max_chars=cfg["chars"])
    if model in char_lm.BASELINES:
        net = char_lm.build_baseline(model, seed=seed, **cfg["size"])
    else:
        torch.manual_seed(seed)
        net = zoo.create(model, **cfg["size"])
    res = zoo.evaluate(net, task=char_lm.NAME, steps=steps, seed=seed, baselines=[], data=data, **cfg["train"])
    curves = cett.calibrate(net, data, n_windows=cfg["calibration_windows"])
    windows = cfg["eval_windows"]
    point = cett.ppl_sparsity(net, data, curves, p=PPL_P, iters=cfg["search_iters"], max_windows=windows)
    at02 = cett.evaluate_at(net, data, [c.threshold(0.2) for c in curves], max_windows=windows)
    pred = cett.predictivity(net, data, point["thresholds"], steps=cfg["predictor_steps"], n_windows=cfg["probe_windows"])
    hw = cett.hardware_affinity(net, data, point["thresholds"], n_windows=cfg["probe_windows"])
    dense = point["dense_bpc"]
    return {"params": res.metrics["params"], "val_bpc": res.metrics["val_bpc"],
            "exact_zero_sparsity": res.metrics["act_sparsity"],
            "ppl1_cett": point["cett"], "ppl1_sparsity": point["sparsity"], "ppl1_bpc_increase": point["bpc"] / dense - 1,
            "sparsity@cett0.2": at02["sparsity"], "bpc_increase@cett0.2": at02["bpc"] / dense - 1,
            "pred_recall": pred["recall"], "pred_sparsity": pred["predicted_sparsity"],
            "token_reuse": hw["token_reuse"], "hot20_coverage": hw["hot_coverage"],
            "seconds_per_step": res.metrics["seconds_per_step"]}


# row label -> model: two task baselines, then this plugin's models
MODELS = {"ReLU (gpt-rms-relu)": "gpt-rms-relu", "SwiGLU (gpt-rms-swiglu)": "gpt-rms-swiglu",
          "ReGLU (reglu_gpt)": "reglu_gpt", "ReLU2 (relu2_gpt)": "relu2_gpt"}
RELU2 = "ReLU2 (relu2_gpt)"
OTHERS = tuple(label for label in MODELS if label != RELU2)
REPRODUCTION = Claim(
    plugin="relu2-sparsity", claim=CLAIM, task=TASK, steps=char_lm.CLAIM_STEPS, quick_steps=5, seeds=(0, 1, 2),
    rows=[Row(label, ffn_row, {"model": model}) for label, model in MODELS.items()],
    checks=[Check(RELU2, "ppl1_sparsity", baseline=other, margin=MARGIN) for other in OTHERS],
    task_options=char_lm.CLAIM_TRAIN,
    settings={"ppl_p": PPL_P, "size": FULL["size"], "norm": "RMSNorm",
              **{k: FULL[k] for k in ("calibration_windows", "search_iters", "eval_windows", "predictor_steps",
                                      "probe_windows")}},
    notes=f"margin {MARGIN:g} (one point of PPL-1% sparsity), fixed before the run: the paper claims ReLU² has the highest "
          "sparsity at equal loss, not by how much, and a lead under one configuration's seed noise (stds 0.003-0.015, "
          "paired ReLU² - ReGLU 0.012, in the 300-step harness run) is no win; one check per other FFN; GPTs at the "
          "task's claim budget (issue 14), PPL-1% searched on the whole validation split; dense bits/char, predictivity "
          "(pred_recall, pred_sparsity) and hardware affinity (token_reuse, hot20_coverage) at the PPL-1% point are "
          "reported only",
)
