"""``zoo reproduce cortex-dnn-similarity``: does the SSM recover the layer that synthetic "neurons" read out?

Per seed: a small digits CNN (``zoo_nn``'s ``DigitsCNN``, width 16, 4 conv blocks) is trained with the digits task's
loop for ``STEPS`` steps; its activations on ``N_STIM`` held-out digit images (the stimuli) are recorded at the four
conv blocks and the head (``LAYERS``, maps flattened). Synthetic recordings of ``UNITS`` "neurons" are noisy random
linear readouts of one layer k (Gaussian weights, Gaussian noise of ``NOISE`` times the readout's standard deviation).
The tool compares them with every layer of the trained CNN over ``N_BOOT`` draws of ``STIM_FRAC`` of the stimuli and
``UNIT_FRAC`` of the units. Rows: ``planted`` (k = each layer in turn; ``accuracy`` = share of draws whose best layer
is k, averaged over k), ``noise`` (pure-noise "neurons": no layer should be preferred), ``random_init`` (readouts of
the same layers of an untrained CNN of the same architecture, compared with the trained CNN's layers: a match that
only reflected a layer's position in the architecture would recover k here too).
``preferred`` is the share of draws agreeing on the most frequent best layer.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_nn.backbones import DigitsCNN
from zoo_task_digits import task as digits

from .plugin import CLAIM
from .ssm import similarity_of_similarity

CNN = {"width": 16, "stages": 2}
LAYERS = ("features.2", "features.5", "features.8", "features.11", "head")  # the conv blocks' ReLUs, then the logits
STEPS, QUICK_STEPS = 300, 30
N_STIM, QUICK_N_STIM = 200, 80
UNITS, NOISE = 100, 1.0
N_BOOT, QUICK_N_BOOT = 50, 10
STIM_FRAC, UNIT_FRAC = 0.5, 0.3
ACCURACY_MARGIN, PREFERENCE_MARGIN, SPECIFICITY_MARGIN = 0.7, 0.3, 0.2


def _activations(model: torch.nn.Module, x: torch.Tensor) -> dict[str, np.ndarray]:
    acts = zoo.activations(model, x, layers=list(LAYERS))
    return {n: acts[n].astype(np.float64) for n in LAYERS}


def readout(a: np.ndarray, rng: np.random.Generator, units: int = UNITS, noise: float = NOISE) -> np.ndarray:
    """``units`` noisy random linear readouts of activations ``a`` (N, D): ``a W + noise * std(a W) * eps``."""
    clean = a @ rng.standard_normal((a.shape[1], units)) / np.sqrt(a.shape[1])
    return clean + noise * clean.std() * rng.standard_normal(clean.shape)


@cache
def _measure(seed: int, quick: bool) -> dict[str, dict[str, float]]:
    torch.manual_seed(seed)
    trained = DigitsCNN(**CNN)
    fit = digits.train(trained, steps=QUICK_STEPS if quick else STEPS, seed=seed)
    torch.manual_seed(seed + 10_000)
    untrained = DigitsCNN(**CNN)
    x, _ = digits.probe_data(n=QUICK_N_STIM if quick else N_STIM, seed=seed)
    layers, random_layers = _activations(trained, x), _activations(untrained, x)
    boot = {"n_boot": QUICK_N_BOOT if quick else N_BOOT, "stim_frac": STIM_FRAC, "unit_frac": UNIT_FRAC, "seed": seed}
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {"planted": {}, "noise": {}, "random_init": {}}
    for row, source in (("planted", layers), ("random_init", random_layers)):
        hits, pref, depth_err = [], [], []
        for k, name in enumerate(LAYERS):
            res = similarity_of_similarity(readout(source[name], rng), layers, **boot)
            hits.append(res["frequency"][name])
            pref.append(res["preferred"])
            depth_err.append(abs(res["pseudo_depth_mean"] - k / (len(LAYERS) - 1)))
            out[row][f"accuracy:{name}"] = res["frequency"][name]
            out[row][f"ssm:{name}"] = res["ssm"][name]
        out[row].update(accuracy=float(np.mean(hits)), preferred=float(np.mean(pref)),
                        pseudo_depth_error=float(np.mean(depth_err)))
    pref, best = [], []
    for _ in LAYERS:  # as many pure-noise recordings as planted ones
        res = similarity_of_similarity(rng.standard_normal((len(x), UNITS)), layers, **boot)
        pref.append(res["preferred"])
        best.append(max(res["ssm"].values()))
    out["noise"].update(preferred=float(np.mean(pref)), best_ssm=float(np.mean(best)))
    out["planted"]["cnn_accuracy"] = digits.accuracy(trained)["accuracy"]
    out["planted"]["final_train_loss"] = float(fit["final_train_loss"])
    return out


def recovery_row(*, seed: int, quick: bool, which: str) -> dict[str, float]:
    """One kind of synthetic recording's recovery figures on this seed's trained CNN."""
    return dict(_measure(seed, quick)[which])


SETTINGS: dict[str, Any] = {"cnn": dict(CNN), "layers": list(LAYERS), "steps": STEPS, "stimuli": N_STIM,
                            "units": UNITS, "noise": NOISE, "n_boot": N_BOOT, "stim_frac": STIM_FRAC,
                            "unit_frac": UNIT_FRAC, "ssm": "Pearson RSMs, Pearson SSM"}

REPRODUCTION = Claim(
    plugin="cortex-dnn-similarity", claim=CLAIM, task="digits_classify", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,),
    rows=[Row("planted", recovery_row, {"which": "planted"}), Row("noise", recovery_row, {"which": "noise"}),
          Row("random_init", recovery_row, {"which": "random_init"})],
    checks=[Check("planted", "accuracy", margin=ACCURACY_MARGIN),
            Check("planted", "preferred", baseline="noise", margin=PREFERENCE_MARGIN),
            Check("planted", "accuracy", baseline="random_init", margin=SPECIFICITY_MARGIN)],
    settings=SETTINGS,
    task_options={"steps": STEPS},
    notes=f"margins fixed before the recorded run, from one pilot seed (planted accuracy 0.92, preferred 0.92; noise "
          f"preferred 0.34; random-init accuracy 0.41): (1) planted pseudo-layer accuracy >= {ACCURACY_MARGIN} "
          f"(chance is 1/{len(LAYERS)} = {1 / len(LAYERS):.1f}; 'recovers k' under subsampling to {STIM_FRAC:.0%} of "
          f"the stimuli and {UNIT_FRAC:.0%} of the units, noise at SNR 1); (2) the planted recordings' preferred-layer "
          f"share exceeds pure noise's by >= {PREFERENCE_MARGIN} (noise has no preferred layer; its share is above 1/L "
          "only by the luck of a fixed stimulus set); (3) planted accuracy exceeds that of readouts of an untrained "
          f"CNN's layer k by >= {SPECIFICITY_MARGIN} (the match is to what layer k computes, not to its position). The "
          "SSM is Pearson on Pearson RSMs; the interval of each check is over seeds, each seed's value a mean over "
          f"{N_BOOT} draws and the {len(LAYERS)} planted layers.",
)
