"""``zoo reproduce stl-embed-inversion``: the embedding-prefix decoder after 1 and 10 epochs vs nearest-neighbour
retrieval, on held-out kernel embeddings.

Every row runs ``stl_logic.evaluate(mode="invert", n_train=6000, baselines=[])`` on the same seed's data: 6,000
training and 300 test formulae of the kernel papers' generator, their kernel embeddings against 128 anchors (500
kernel trajectories), semantic similarity of decoded vs gold on 200 held-out trajectories. ``decoder_1epoch`` trains
one pass (188 steps of 32), ``decoder`` ten; ``nn_retrieval`` returns the training formula with the nearest
embedding (cosine).
"""
from __future__ import annotations

from typing import Any

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_stl_logic import task
from zoo_task_stl_logic.baselines import build_baseline

from .model import CPU
from .plugin import CLAIM

N_TRAIN = 6000
METRICS = ("validity", "kernel_sim", "kernel_sim_valid", "exact", "length_ratio", "shorter_or_equal", "train_loss",
           "fit_seconds", "params")
QUICK = {"n_train": 300, "n_test": 60, "n_traj": 100, "n_readout": 50}
VALIDITY_MIN, SIM_MARGIN, LENGTH_MAX = 0.9, 0.0, 1.0


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(metrics[k]) for k in METRICS if k in metrics}


def _run(model: Any, *, seed: int, quick: bool, epochs: int) -> dict[str, float]:
    opts = QUICK if quick else {"n_train": N_TRAIN}
    return _keep(task.evaluate(model, mode="invert", seed=seed, baselines=[], epochs=epochs, **opts).metrics)


def decoder_row(*, seed: int, quick: bool, epochs: int) -> dict[str, float]:
    """``stl_embed_inversion`` (CPU defaults) trained ``epochs`` passes over the training formulae, then decoded."""
    return _run(zoo.create("stl_embed_inversion"), seed=seed, quick=quick, epochs=epochs)


def retrieval_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's ``nn_retrieval`` on the same training formulae and embeddings."""
    return _run(build_baseline("nn_retrieval"), seed=seed, quick=quick, epochs=1)


REPRODUCTION = Claim(
    plugin="stl-embed-inversion", claim=CLAIM, task="stl_logic", seeds=(0, 1, 2),
    rows=[Row("decoder_1epoch", decoder_row, {"epochs": 1}),
          Row("decoder", decoder_row, {"epochs": 10}, quick_args={"epochs": 2}),
          Row("nn_retrieval", retrieval_row)],
    checks=[Check("decoder_1epoch", "validity", margin=VALIDITY_MIN),
            Check("decoder", "kernel_sim", baseline="nn_retrieval", margin=SIM_MARGIN),
            Check("decoder", "length_ratio", margin=LENGTH_MAX, higher=False)],
    settings={"model": dict(CPU), "n_train": N_TRAIN, "quick_data": QUICK},
    task_options={"mode": "invert", "n_train": N_TRAIN},
    notes=f"margins fixed before the recorded run: validity after one epoch >= {VALIDITY_MIN} (the paper: 'valid "
          f"formulae after only 1 epoch'; 0.9 leaves room for a few broken decodes, chance is near 0); kernel "
          f"similarity of decoded vs gold (0 for an invalid decode) after 10 epochs - nearest-neighbour retrieval "
          f">= {SIM_MARGIN} (the paper's 'semantic generalization in about 10 epochs', made falsifiable against the "
          f"obvious non-generative inverse); mean decoded/gold token-length ratio over valid decodes <= {LENGTH_MAX} "
          f"('often simpler'). The training set is {N_TRAIN} formulae rather than the task's default 2,000 because "
          f"an epoch is a data-size unit: in a seed-0 trial one epoch of 2,000 (63 steps) gave validity 0.17 and "
          f"two epochs 0.91; the paper's epochs are over far larger sets. The embedding is the kernel embedding "
          f"(128 anchors), not the stl-kernel-embed encoder.",
)
