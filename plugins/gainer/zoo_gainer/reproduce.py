"""``zoo reproduce gainer``: GaINeR fits an image and allows local edits; SIREN and ReLU+FF do not.

GaINeR (its own ``fit``) and the task's SIREN and ReLU+FF at its parameter count are fitted to 64x64
camera for the same steps and scored. Then the ``N_MOVED`` Gaussians nearest the centre move by
``OFFSET`` (4 training pixels right and down), and each baseline gets a one-unit edit of the same largest
pixel change; ``editing`` measures what changed on the 2x grid.
"""
from __future__ import annotations

import functools

import torch
from torch import nn

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_image_fit import image_fit as task

from .editing import CHANGED, RADIUS, edit_locality, unit_edit
from .plugin import CLAIM, TASK

IMAGE, SIZE, N_MOVED, OFFSET, MIN_PSNR, MIN_INSIDE = "camera", 64, 5, (0.125, 0.125), 25.0, 0.99
QUICK = {"size": 16, "model": {"n_gaussians": 64, "k": 8, "hash_levels": 2, "hidden": 16}}


def _fit(net: nn.Module, signal: task.ImageSignal, steps: int, seed: int) -> dict[str, float]:
    torch.manual_seed(seed)
    fig = task.fit(net, signal, steps=steps, lr=net.default_lr, seed=seed)
    return {"params": float(count_params(net)), **task.score(net, signal), "seconds_per_step": fig["seconds_per_step"]}


@functools.lru_cache(maxsize=1)
def _gainer(seed: int, quick: bool, steps: int) -> tuple[task.ImageSignal, int, dict[str, float]]:
    """GaINeR fitted, scored and edited; cached because the baselines' edits are sized to its edit."""
    signal = task.make_signal(IMAGE, QUICK["size"] if quick else SIZE)
    torch.manual_seed(seed)
    model = zoo.create("gainer", **(QUICK["model"] if quick else {}))
    params = count_params(model)
    row = _fit(model, signal, steps, seed)
    ids = torch.topk(torch.cdist(torch.zeros(1, 2), model.means.detach())[0], N_MOVED, largest=False).indices
    return signal, params, {**row, **edit_locality(model, signal.test_coords, ids, torch.tensor(OFFSET))}


def gainer_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """GaINeR's fit and the locality of moving its ``N_MOVED`` central Gaussians (on the 2x grid)."""
    return dict(_gainer(seed, quick, steps)[2])


def baseline_row(*, seed: int, quick: bool, steps: int, baseline: str) -> dict[str, float]:
    """The task's ``baseline`` at GaINeR's parameter count: its fit, and a one-unit edit as large as GaINeR's."""
    signal, params, ours = _gainer(seed, quick, steps)
    net = task.build_baseline(baseline, params=params, data=signal, seed=seed)
    return {**_fit(net, signal, steps, seed), **unit_edit(net, signal.test_coords, ours["max_change"])}


REPRODUCTION = Claim(
    plugin="gainer", claim=CLAIM, task=TASK, steps=500, quick_steps=5, seeds=(0, 1, 2),
    rows=[Row("gainer", gainer_row), Row("siren", baseline_row, {"baseline": "siren"}),
          Row("relu-ff", baseline_row, {"baseline": "relu-ff"})],
    checks=[Check("gainer", "psnr_train", margin=MIN_PSNR), Check("gainer", "frac_in_support", margin=MIN_INSIDE)]
    + [Check("gainer", "frac_changed", baseline=b, margin=1 / (2 * SIZE) ** 2, higher=False) for b in ("siren", "relu-ff")],
    settings={"moved": N_MOVED, "offset": list(OFFSET), "support_sigmas": RADIUS,
              "changed_threshold": CHANGED},
    notes=f"margins fixed by the claim: GaINeR fits to >= {MIN_PSNR:g} dB, >= {MIN_INSIDE:.0%} of the pixels its edit "
          f"changes lie in the moved Gaussians' support, and it changes strictly fewer pixels of the 2x grid than "
          f"either baseline's one-unit edit (margin: one pixel of the {2 * SIZE}x{2 * SIZE} grid)",
)
