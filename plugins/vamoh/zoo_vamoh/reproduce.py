"""``zoo reproduce vamoh``: in-painting and conditional super-resolution of 8x8 digits as functions.

Data: ``signal_set_fit``'s digits at their native 8x8 (``load_set("digits", 8)``: 1024 training,
256 held-out images, split seed 1; our hyperparameters were chosen on the split of seed 0), values
in [0, 1], pixel-centre coordinates in [-1, 1]. 8x8 is the catalog's setting and the data's real
resolution (the task's 16x16 digits are a bilinear resize of these).

Training (same number of steps for all, 2000, on the same kind of masked batches, see
``baselines``): VaMoH (``vamoh_ff`` defaults), implicit GON (``gon_implicit`` defaults, latent from
the observed pixels only), and the task's MLP autoencoders with VaMoH's parameter count (``ae``)
and twice it (``ae-2x``), fed the zero-filled masked image.

Measured on the held-out digits:
- in-painting: 50% of each image's pixels observed (a fixed random half per image); MSE on the
  missing pixels; CPU milliseconds per image for it (encode + decode; timed interleaved, best of 3).
- super-resolution x2 with a real ground truth: the 4x4 average-pooled image, given at its own
  pixel-centre coordinates, decoded on the 8x8 grid; MSE against the 8x8 original; next to
  bilinear upsampling of the 4x4 image.
- 8x8 -> 16x16: the 8x8 image decoded on the 16x16 grid, MSE to ``load_set("digits", 16)``. That
  reference *is* the bilinear upsampling of the 8x8 (so bilinear scores 0 by construction): this
  measures how far the learned continuous function departs from the smooth interpolant, not
  which method is right.
- reconstruction MSE with every pixel observed; training CPU seconds; parameters.

Pass criterion, fixed before running: VaMoH's in-painting MSE is at most 1.05 x the best of GON,
ae and ae-2x ("as well as or better"), AND its in-painting CPU time per image is at most GON's
("less computationally demanding" than an INR-based generative model of functions; the
autoencoders are grid-bound and cannot decode other resolutions). Super-resolution is reported,
not part of the criterion (the catalog asks for it qualitatively).
"""
from __future__ import annotations

import time
from typing import Callable

import torch

import zoo
from zoo.task import count_params
from zoo_task_image_fit import signal_set as task
from zoo_task_image_fit.signal_set import build_baseline, coord_grid

from .baselines import bilinear, downsample, fit_ae_masked, fit_gon_masked, gon_encode

CLAIM = ("VaMoH in-paints held-out 8x8 digits (50% of pixels observed) as well as or better than implicit GON "
         "and masked-trained autoencoders (MSE on missing pixels <= 1.05 x the best), at no more inference CPU "
         "than GON; super-resolution reported")
STEPS, QUICK_STEPS = 2000, 3
N_TRAIN, N_TEST, SPLIT_SEED = 1024, 256, 1
OBSERVED = 0.5
TOLERANCE = 1.05
QUICK = {"latent_dim": 4, "components": 2, "hidden": 4, "hyper_hidden": (8,), "cat_hidden": (8,), "enc_width": 8}


def _test_masks(n: int, pixels: int, seed: int) -> torch.Tensor:
    """A fixed random half of each held-out image's pixels: (n, pixels) bool."""
    order = torch.rand(n, pixels, generator=torch.Generator().manual_seed(seed + 100)).argsort(1)
    return torch.zeros(n, pixels, dtype=torch.bool).scatter_(1, order[:, :int(OBSERVED * pixels)], True)


def _mse(pred: torch.Tensor, target: torch.Tensor, where: torch.Tensor | None = None) -> float:
    err = (pred.clamp(0, 1) - target) ** 2
    return float(err[where].mean() if where is not None else err.mean())


def _cpu_ms(fns: dict[str, Callable[[], torch.Tensor]], n: int, repeats: int = 3) -> dict[str, float]:
    """Best-of-``repeats`` CPU milliseconds per image of each function, the methods interleaved."""
    best = {k: float("inf") for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            c0 = time.process_time()
            fn()
            best[k] = min(best[k], (time.process_time() - c0) * 1e3 / n)
    return best


def reproduce(quick: bool = False, seed: int = 0) -> zoo.ClaimResult:
    """Train VaMoH, implicit GON, ae and ae-2x for the same steps; compare in-painting, super-resolution, CPU."""
    t0, c0 = time.perf_counter(), time.process_time()
    steps = QUICK_STEPS if quick else STEPS
    n_train, n_test = (32, 8) if quick else (N_TRAIN, N_TEST)
    s8 = task.load_set("digits", 8, n_train=n_train, n_test=n_test, seed=SPLIT_SEED)
    s16 = task.load_set("digits", 16, n_train=n_train, n_test=n_test, seed=SPLIT_SEED)
    x, x16 = s8.test, s16.test
    b = len(x)
    c8, c4, c16 = coord_grid(8, 8), coord_grid(4, 4), coord_grid(16, 16)
    v8, low = x.reshape(b, 64, 1), downsample(x).reshape(b, 16, 1)
    mask = _test_masks(b, 64, seed)
    missing = ~mask.view(b, 8, 8, 1)
    table: dict[str, dict[str, float]] = {}

    torch.manual_seed(seed)
    vam = zoo.create("vamoh_ff", **(QUICK if quick else {}))
    cpu = time.process_time()
    vam.fit(s8, steps=steps, seed=seed)
    vam_cpu = time.process_time() - cpu
    params = count_params(vam)

    torch.manual_seed(seed)
    gon = zoo.create("gon_implicit", **({"hidden": 8, "layers": 2} if quick else {}))
    cpu = time.process_time()
    fit_gon_masked(gon, s8, steps=steps, seed=seed)
    gon_cpu = time.process_time() - cpu

    aes, ae_cpu = {}, {}
    for name in ("ae", "ae-2x"):
        aes[name] = build_baseline(name, params=params, data=s8, latent_dim=vam.latent_dim, seed=seed)
        cpu = time.process_time()
        fit_ae_masked(aes[name], s8, steps=steps, seed=seed)
        ae_cpu[name] = time.process_time() - cpu

    def gon_pred(coords: torch.Tensor, values: torch.Tensor, out: torch.Tensor, m: torch.Tensor | None = None):
        z = gon_encode(gon, coords, values, m).detach()
        with torch.no_grad():
            return gon.decode(z, out)

    inpaint = {"vamoh": lambda: vam.predict(c8, v8, c8, mask),
               "gon_implicit": lambda: gon_pred(c8, v8, c8, mask)}
    for name, ae in aes.items():
        inpaint[name] = (lambda a: lambda: a.reconstruct(x * ~missing).detach())(ae)
    ms = _cpu_ms(inpaint, b)
    with torch.no_grad():
        up = bilinear(downsample(x), 8)
        sr = {"vamoh": vam.predict(c4, low, c8), "gon_implicit": gon_pred(c4, low, c8),
              **{k: a.reconstruct(up) for k, a in aes.items()}, "bilinear": up}
        sr16 = {"vamoh": vam.predict(c8, v8, c16), "gon_implicit": gon_pred(c8, v8, c16), "bilinear": bilinear(x, 16)}
        full = {"vamoh": vam.reconstruct(x), "gon_implicit": gon_pred(c8, v8, c8),
                **{k: a.reconstruct(x) for k, a in aes.items()}}
    rows = {"vamoh": (params, vam_cpu), "gon_implicit": (count_params(gon), gon_cpu),
            **{k: (count_params(a), ae_cpu[k]) for k, a in aes.items()}}
    for name, (p, train_cpu) in rows.items():
        table[name] = {"params": float(p), "train_cpu_s": train_cpu,
                       "inpaint_mse": _mse(inpaint[name]().reshape(x.shape), x, missing),
                       "inpaint_cpu_ms": ms[name], "sr4to8_mse": _mse(sr[name].reshape(x.shape), x),
                       "sr8to16_vs_bilinear": (_mse(sr16[name].reshape(x16.shape), x16) if name in sr16 else None),
                       "recon_mse": _mse(full[name].reshape(x.shape), x)}
    mean_img = s8.train.mean(0, keepdim=True).expand_as(x)
    table["bilinear"] = {"sr4to8_mse": _mse(sr["bilinear"], x), "sr8to16_vs_bilinear": _mse(sr16["bilinear"], x16)}
    table["mean image"] = {"inpaint_mse": _mse(mean_img, x, missing), "sr4to8_mse": _mse(mean_img, x),
                           "recon_mse": _mse(mean_img, x)}

    v = table["vamoh"]
    rivals = {k: table[k]["inpaint_mse"] for k in ("gon_implicit", "ae", "ae-2x")}
    best = min(rivals, key=rivals.get)
    as_good = v["inpaint_mse"] <= TOLERANCE * rivals[best]
    cheaper = v["inpaint_cpu_ms"] <= table["gon_implicit"]["inpaint_cpu_ms"]
    summary = (f"in-painting MSE on missing pixels (50% observed): VaMoH {v['inpaint_mse']:.4f} vs best rival {best} "
               f"{rivals[best]:.4f} ({'within' if as_good else 'outside'} x{TOLERANCE}; GON "
               f"{rivals['gon_implicit']:.4f}, ae {rivals['ae']:.4f}, ae-2x {rivals['ae-2x']:.4f}, mean image "
               f"{table['mean image']['inpaint_mse']:.4f}); inference CPU {v['inpaint_cpu_ms']:.3f} vs GON "
               f"{table['gon_implicit']['inpaint_cpu_ms']:.3f} ms/image; training CPU {vam_cpu:.0f} s vs GON "
               f"{gon_cpu:.0f} s; x2 super-resolution 4x4->8x8 MSE VaMoH {v['sr4to8_mse']:.4f}, GON "
               f"{table['gon_implicit']['sr4to8_mse']:.4f}, bilinear {table['bilinear']['sr4to8_mse']:.4f}")
    return zoo.ClaimResult(plugin="vamoh", claim=CLAIM, passed=bool(as_good and cheaper), table=table, summary=summary,
                           settings={"dataset": "digits", "size": 8, "n_train": n_train, "n_test": n_test,
                                     "split_seed": SPLIT_SEED, "steps": steps, "observed": OBSERVED, "seed": seed,
                                     "quick": quick, "cpu_seconds": time.process_time() - c0},
                           seconds=time.perf_counter() - t0)
