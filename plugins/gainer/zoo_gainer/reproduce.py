"""``zoo reproduce gainer``: GaINeR fits an image and allows local edits; SIREN and ReLU+FF do not.

1. Fit ``gainer`` to 64x64 camera (``image_fit`` "fit" mode, its own rule, ``STEPS`` steps) and the
   task's SIREN and ReLU+FF baselines at its parameter count (same steps, their own learning rates);
   score all three (training grid, and the 2x finer grid: a continuous representation).
2. Edit: move the ``N_MOVED`` Gaussians nearest to the image centre by ``OFFSET`` (4 pixels right and
   down on the training grid) and render the 2x grid before and after. A pixel changed when some
   channel moved by more than 1/255; the support of the edit is the set of points within Mahalanobis
   distance 3 (their own covariance) of a moved Gaussian's old or new mean.
3. The same-size edit of a baseline: shift the bias of one first-layer unit, the smallest part of an
   MLP, by the amount that gives the same largest pixel change as GaINeR's edit (or, when one unit
   cannot change any pixel that much, the largest change it can make; ``max_change`` says which).

Passed when GaINeR fits camera to >= 25 dB training PSNR, its edit changes some pixels and >= 99% of
them lie in the support, and it changes a smaller fraction of the image than either baseline's edit.
"""
from __future__ import annotations

import logging
import time

import torch
from torch import nn

import zoo
from zoo.task import count_params
from zoo_task_image_fit import image_fit as task

log = logging.getLogger(__name__)

CLAIM = ("GaINeR fits camera (>= 25 dB) and moving 5 Gaussians changes only pixels in their support, a smaller part "
         "of the image than an edit of one unit of SIREN or ReLU+FF of at most the same size")
IMAGE, SIZE, STEPS, N_MOVED, OFFSET, RADIUS = "camera", 64, 500, 5, (0.125, 0.125), 3.0
MIN_PSNR, MIN_INSIDE, CHANGED = 25.0, 0.99, 1.0 / 255
QUICK = {"size": 16, "steps": 5, "model": {"n_gaussians": 64, "k": 8, "hash_levels": 2, "hidden": 16}}


def edit_locality(model: nn.Module, coords: torch.Tensor, ids: torch.Tensor, offset: torch.Tensor) -> dict[str, float]:
    """Move Gaussians ``ids`` of a trained GaINeR by ``offset``; where did the rendering at ``coords`` change?"""
    before = task.predict(model, coords)
    old = model.means[ids].detach().clone()
    var = model.log_var[ids].detach().exp()
    model.edit(ids, old + offset)
    after = task.predict(model, coords)
    model.edit(ids, old)  # undo
    delta = (after - before).abs().amax(-1)
    changed = delta > CHANGED
    m2 = torch.stack([(((coords[:, None, :] - c[None]) ** 2) / var[None]).sum(-1) for c in (old, old + offset)])
    support = (m2 <= RADIUS ** 2).any(-1).any(0)
    n_changed = int(changed.sum())
    out = {"frac_changed": n_changed / coords.shape[0], "max_change": float(delta.max()),
           "max_change_outside": float(delta[~support].max()) if (~support).any() else 0.0,
           "frac_support": float(support.float().mean())}
    if n_changed:  # undefined when the edit changed nothing
        out["frac_in_support"] = float((changed & support).sum()) / n_changed
    return out


def unit_edit(model: nn.Module, coords: torch.Tensor, target_change: float) -> dict[str, float]:
    """Shift one first-layer unit's bias so the largest pixel change matches ``target_change``; what changed?

    The shift is scanned on a geometric grid (1e-4 .. ~1e2) and refined by bisection at the first
    crossing; when no shift reaches ``target_change`` (a sine unit's effect is bounded) the shift with
    the largest effect is used, and ``max_change`` reports what it reached.
    """
    first = next(m for m in model.modules() if isinstance(m, nn.Linear))
    before = task.predict(model, coords)

    def change(delta: float) -> torch.Tensor:
        with torch.no_grad():
            first.bias[0] += delta
            out = (task.predict(model, coords) - before).abs().amax(-1)
            first.bias[0] -= delta
        return out

    grid = [1e-4 * 1.25 ** i for i in range(62)]
    peaks = [float(change(d).max()) for d in grid]
    i = next((j for j, p in enumerate(peaks) if p >= target_change), None)
    if i is None:
        shift = grid[max(range(len(grid)), key=peaks.__getitem__)]
    else:
        lo, hi = (grid[i - 1] if i else 0.0), grid[i]
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if float(change(mid).max()) < target_change else (lo, mid)
        shift = hi
    delta = change(shift)
    return {"frac_changed": float((delta > CHANGED).float().mean()), "max_change": float(delta.max()),
            "bias_shift": shift}


def reproduce(quick: bool = False, seed: int = 0) -> zoo.ClaimResult:
    """Fit, edit and compare; see the module docstring."""
    t0, c0 = time.perf_counter(), time.process_time()
    size, steps = (QUICK["size"], QUICK["steps"]) if quick else (SIZE, STEPS)
    signal = task.make_signal(IMAGE, size)
    torch.manual_seed(seed)
    model = zoo.create("gainer", **(QUICK["model"] if quick else {}))
    params = count_params(model)
    nets = {"gainer": model}
    for b in ("siren", "relu-ff"):
        nets[b] = task.build_baseline(b, params=params, data=signal, seed=seed)
    table: dict[str, dict[str, float]] = {}
    for name, net in nets.items():
        torch.manual_seed(seed)
        fig = task.fit(net, signal, steps=steps, lr=net.default_lr, seed=seed)
        table[name] = {"params": float(count_params(net)), **task.score(net, signal),
                       "seconds_per_step": fig["seconds_per_step"]}
    coords = signal.test_coords  # the 2x finer grid
    ids = torch.topk(torch.cdist(torch.zeros(1, 2), model.means.detach())[0], N_MOVED, largest=False).indices
    ours = edit_locality(model, coords, ids, torch.tensor(OFFSET))
    table["gainer"].update(ours)
    for b in ("siren", "relu-ff"):
        table[b].update(unit_edit(nets[b], coords, ours["max_change"]))
    fit_ok = table["gainer"]["psnr_train"] >= MIN_PSNR
    local = ours["frac_changed"] > 0 and ours.get("frac_in_support", 0.0) >= MIN_INSIDE
    smaller = all(ours["frac_changed"] < table[b]["frac_changed"] for b in ("siren", "relu-ff"))
    inside = ours.get("frac_in_support", float("nan"))
    summary = (f"GaINeR {table['gainer']['psnr_train']:.2f} dB train / {table['gainer']['psnr_test']:.2f} dB 2x-grid "
               f"(SIREN {table['siren']['psnr_train']:.2f} / {table['siren']['psnr_test']:.2f}, ReLU+FF "
               f"{table['relu-ff']['psnr_train']:.2f} / {table['relu-ff']['psnr_test']:.2f}); moving {N_MOVED} Gaussians "
               f"changed {ours['frac_changed']:.2%} of the 2x grid, {inside:.1%} of it inside their 3-sigma support"
               f" (largest change outside {ours['max_change_outside']:.4f}, largest change {ours['max_change']:.3f}); "
               f"a one-unit edit of at most that size changed {table['siren']['frac_changed']:.2%} (SIREN, largest "
               f"change {table['siren']['max_change']:.3f}) and {table['relu-ff']['frac_changed']:.2%} (ReLU+FF, "
               f"{table['relu-ff']['max_change']:.3f}); fit >= {MIN_PSNR:g} dB: {'yes' if fit_ok else 'NO'}, "
               f"local: {'yes' if local else 'NO'}, more local than both baselines: {'yes' if smaller else 'NO'}")
    return zoo.ClaimResult(plugin="gainer", claim=CLAIM, passed=bool(fit_ok and local and smaller), table=table,
                           summary=summary,
                           settings={"image": IMAGE, "size": size, "steps": steps, "seed": seed, "quick": quick,
                                     "moved": N_MOVED, "offset": list(OFFSET), "support_sigmas": RADIUS,
                                     "changed_threshold": CHANGED, "torch_threads": torch.get_num_threads(),
                                     "wall_s": time.perf_counter() - t0, "process_time_s": time.process_time() - c0},
                           seconds=time.perf_counter() - t0)
