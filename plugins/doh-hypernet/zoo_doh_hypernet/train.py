"""Recipe of the pretrained tag ``doh_siren.digits`` (run by ``zoo train doh_siren.digits``)."""
from __future__ import annotations

import torch

import zoo
from zoo_task_image_fit import signal_set as task

DIGITS_STEPS = 300  # latent optimisation steps per signal, as in the reproduction


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``doh_siren`` (latent 256) on 16x16 digits (split seed ``seed``), 300 latent steps per signal.

    D'OH has nothing shared to train (its projections are fixed by the seed): ``fit`` only sets the
    per-signal latent steps, and every image, training or held-out, is fitted alone in
    ``reconstruct``. So the saved weights are the seeded projections and scales, and the metrics
    measured here (``signal_set_fit.score``: MSE/PSNR on 256 training and the 256 held-out digits)
    are those of per-signal fits. Deterministic for a given seed on CPU.

    >>> model, metrics = digits()                                   # doctest: +SKIP
    """
    sset = task.load_set("digits", 16, seed=seed)
    torch.manual_seed(seed)
    model = zoo.create("doh_siren")
    fig = model.fit(sset, steps=DIGITS_STEPS, seed=seed)
    return model.eval(), {**task.score(model, sset), "inner_steps": float(fig["inner_steps"]),
                          "bytes_per_signal": float(model.memory_bytes())}
