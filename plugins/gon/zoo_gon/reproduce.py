"""``zoo reproduce gon``: implicit GON vs conventional autoencoders with 2x (and 1x) its parameters.

Implicit GON (``gon_implicit`` defaults) and the ``signal_set_fit`` baselines ``ae-2x`` and ``ae``
(MLP autoencoders, same latent size, sized to 2x and 1x GON's parameter count) train for the same
number of minibatch Adam steps on the task's digits split for each seed, then are scored on its
held-out digits. The claim holds when GON's held-out MSE is lower than ae-2x's and its training MSE
averaged over all steps (area under the curve: convergence speed) is lower too.
"""
from __future__ import annotations

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_image_fit import signal_set as task

from .plugin import CLAIM, TASK

CHECKPOINTS = (50, 100, 250, 500)
QUICK = {"size": 8, "n_train": 32, "n_test": 16, "gon": {"hidden": 16, "layers": 2}}


def _data(seed: int, quick: bool) -> task.SignalSet:
    if quick:
        return task.load_set("digits", QUICK["size"], n_train=QUICK["n_train"], n_test=QUICK["n_test"], seed=seed)
    return task.load_set("digits", 16, seed=seed)


def _gon(quick: bool) -> torch.nn.Module:
    return zoo.create("gon_implicit", **(QUICK["gon"] if quick else {}))


def _fit_and_score(model: torch.nn.Module, sset: task.SignalSet, steps: int, seed: int) -> dict[str, float]:
    losses = model.fit(sset, steps=steps, seed=seed)["losses"]
    row = {"params": float(count_params(model)), **task.score(model, sset), "train_mse_auc": sum(losses) / len(losses)}
    for c in CHECKPOINTS:
        if c <= len(losses):
            w = losses[max(0, c - 10):c]
            row[f"train_mse@{c}"] = sum(w) / len(w)
    return row


def gon_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """Implicit GON trained on this seed's split."""
    sset = _data(seed, quick)
    torch.manual_seed(seed)
    return _fit_and_score(_gon(quick), sset, steps, seed)


def ae_row(*, seed: int, quick: bool, steps: int, baseline: str) -> dict[str, float]:
    """The task's autoencoder baseline sized from GON's parameter count, same latent, same steps."""
    sset = _data(seed, quick)
    gon = _gon(quick)
    ae = task.build_baseline(baseline, params=count_params(gon), data=sset, latent_dim=gon.latent_dim, seed=seed)
    return _fit_and_score(ae, sset, steps, seed)


REPRODUCTION = Claim(
    plugin="gon", claim=CLAIM, task=TASK, steps=500, quick_steps=3, seeds=(0, 1, 2, 3, 4),
    rows=[Row("gon_implicit", gon_row), Row("ae-2x", ae_row, {"baseline": "ae-2x"}), Row("ae", ae_row, {"baseline": "ae"})],
    checks=[Check("gon_implicit", "mse_test", baseline="ae-2x", higher=False),
            Check("gon_implicit", "train_mse_auc", baseline="ae-2x", higher=False)],
    settings={"dataset": "digits", "size": 16, "checkpoints": list(CHECKPOINTS)},
    notes="margin 0: the paper claims GON is better than ae-2x on both, not by how much; ae (1x) is reported only; "
          "5 seeds since issue 14 (3 left both checks inconclusive with GON ahead on every seed)",
)
