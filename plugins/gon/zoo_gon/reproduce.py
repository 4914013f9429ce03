"""``zoo reproduce gon``: implicit GON vs conventional autoencoders with 2x (and 1x) its parameters.

Implicit GON (``gon_implicit`` defaults) and the ``signal_set_fit`` baselines ``ae-2x`` and ``ae``
(MLP autoencoders, same latent size 32, sized to 2x and 1x GON's parameter count) are trained for the
same number of minibatch Adam steps (batch 64; GON lr 1e-4 as in the authors' implicit GON, the AEs
1e-3) on 512 16x16 digits, then scored on 256 held-out digits. Pass: GON's held-out MSE is lower
than ae-2x's AND its training MSE averaged over all steps (area under the curve: convergence speed)
is lower too.
"""
from __future__ import annotations

import time

import torch

import zoo
from zoo.task import count_params
from zoo_task_image_fit import signal_set as task

CLAIM = ("implicit GON reaches a lower held-out reconstruction MSE, and converges faster, than an autoencoder "
         "with 2x its parameters (16x16 digits, same steps)")
STEPS, QUICK_STEPS = 500, 3
CHECKPOINTS = (50, 100, 250, 500)


def _row(model: torch.nn.Module, sset: task.SignalSet, steps: int, seed: int) -> dict[str, float]:
    c0 = time.process_time()
    fig = model.fit(sset, steps=steps, seed=seed)
    cpu = time.process_time() - c0
    losses = fig["losses"]
    row = {"params": float(count_params(model)), **task.score(model, sset),
           "train_mse_auc": sum(losses) / len(losses)}
    for c in CHECKPOINTS:
        if c <= len(losses):
            w = losses[max(0, c - 10):c]
            row[f"train_mse@{c}"] = sum(w) / len(w)
    row["cpu_s"] = cpu
    return row


def reproduce(quick: bool = False, seed: int = 0) -> zoo.ClaimResult:
    """Train implicit GON, ae-2x and ae for the same steps; pass if GON beats ae-2x on held-out MSE and AUC."""
    t0, c0 = time.perf_counter(), time.process_time()
    steps = QUICK_STEPS if quick else STEPS
    sset = task.load_set("digits", 8 if quick else 16, n_train=32 if quick else 512, n_test=16 if quick else 256,
                         seed=seed)
    torch.manual_seed(seed)
    gon = zoo.create("gon_implicit", **({"hidden": 16, "layers": 2} if quick else {}))
    params = count_params(gon)
    table = {"gon_implicit": _row(gon, sset, steps, seed)}
    for name in ("ae-2x", "ae"):
        table[name] = _row(task.build_baseline(name, params=params, data=sset, latent_dim=gon.latent_dim, seed=seed), sset, steps, seed)
    g, a = table["gon_implicit"], table["ae-2x"]
    passed = g["mse_test"] < a["mse_test"] and g["train_mse_auc"] < a["train_mse_auc"]
    summary = (f"after {steps} steps held-out MSE GON {g['mse_test']:.4f} ({g['psnr_test']:.2f} dB, {g['params']:.0f} "
               f"params) vs AE-2x {a['mse_test']:.4f} ({a['psnr_test']:.2f} dB, {a['params']:.0f} params), AE-1x "
               f"{table['ae']['mse_test']:.4f}; mean training MSE over the run {g['train_mse_auc']:.4f} vs "
               f"{a['train_mse_auc']:.4f}")
    return zoo.ClaimResult(plugin="gon", claim=CLAIM, passed=bool(passed), table=table, summary=summary,
                           settings={"dataset": "digits", "size": int(sset.shape[0]), "n_train": len(sset.train),
                                     "n_test": len(sset.test), "steps": steps, "seed": seed, "quick": quick,
                                     "cpu_seconds": time.process_time() - c0},
                           seconds=time.perf_counter() - t0)
