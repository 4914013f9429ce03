"""``image_fit``: fit one image (or a short video) with a coordinate network and score it.

Contract: ``model(coords)`` with ``coords`` of shape (N, d) in [-1, 1] (d=2: (y, x); d=3 for video:
(t, y, x); d=1 for the 1-D signal) returns values (N, C) in [0, 1] (C=1 for gray images, 3 for
colour). Builders take ``out_features`` (and ``in_features``); ``evaluate`` refuses a model whose C
differs from the image's.

Data: scikit-image's bundled images (``IMAGES``; no download), centre-cropped to a square and
resized with anti-aliasing to ``size`` x ``size`` (64 by default); ``gray=True`` turns a colour
image into its luminance (``skimage.color.rgb2gray``, C=1). Modes (``make_signal``):

- ``fit``: train on the size x size pixel grid, test on the 2x finer grid of the same image
  (``load_image(name, 2 * size)``), i.e. how well the representation interpolates between pixels.
- ``inpaint``: train on a fixed random subset of the pixels (75% by default, seed 0), test on the rest.
- ``superres``: train on the (size/2) x (size/2) grid, test on the size x size grid (the catalog's
  "train at s/2, test at s"; the same split as ``fit`` at half the size, named by the size scored).
- ``1d``: a real 1-D signal, the middle row of the bundled image (of the square crop, at full
  resolution), resized with anti-aliasing to ``size`` samples; train on them, test on the row
  resized to 2 * size samples. Coordinates (N, 1); no SSIM (an image metric).
- video (``make_video_signal``): ``frames`` crops sliding across a bundled image; train on every
  frame at size x size, test on the same frames on the 2x finer spatial grid.
- ``dataset``: not one image but a set of them (``dataset="digits"``: scikit-learn's 8x8 digits, or
  ``"faces"``: skimage's lfw_subset faces), for models that learn a space of signals (GON, VaMoH).
  This is exactly the ``signal_set_fit`` task: ``evaluate(mode="dataset")`` delegates to
  ``signal_set.evaluate`` (its contract, split, metrics and autoencoder baselines; size 16 and 500
  steps by default), so both names run one protocol.

Training (``fit``): Adam on the mean squared error over all training coordinates (full batch by
default) under a step and/or time budget. The learning rate is the caller's ``lr``, else the model's
``default_lr`` attribute when it has one (SIREN 1e-4, Fourier features 1e-3, see ``zoo_nn.inr``),
else 1e-4; a model may also declare ``default_lr_decay`` (exponential decay to that factor over the
steps). A model whose paper trains differently defines ``fit(signal, *, steps, budget_s, seed,
progress) -> dict`` and the task calls it instead; an ``lr`` (or ``lr_decay``) the caller sets is
passed on when that ``fit`` takes one, and refused (``ValueError``) when it does not, never dropped.
Metrics: PSNR (data range 1, predictions clipped to [0, 1]) and SSIM on the training grid, PSNR on the
held-out coordinates, parameters, seconds per step.

Baselines, fitted with the same steps at the model's parameter count (within ~10%, ``match_params``):
``siren`` (3 sine layers, w0=30 in every layer, the first one's ``w0_initial`` included, as in the
SIREN paper; lr 1e-4) and ``relu-ff`` (Gaussian Fourier features, 256 frequencies, sigma=5 for
[-1, 1] coordinates = Tancik et al.'s sigma=10 on [0, 1], 3 ReLU layers, lr 1e-3).
"""
from __future__ import annotations

import functools
import inspect
import logging
import math
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from zoo.figures import pyplot
from zoo.figures import save_figure as write_png
from zoo.task import Result, count_params, match_params, model_device, run_budget
from zoo_nn.inr import FourierFeatureMLP, Siren

log = logging.getLogger(__name__)

NAME = "image_fit"
DEFAULT_STEPS = 1000
DEFAULT_LR = 1e-4
# skimage.data functions that read files shipped in the wheel (the others download, so they are not here)
IMAGES = ("camera", "astronaut", "coffee", "chelsea", "cat", "coins", "moon", "text", "page", "brick", "grass",
          "gravel", "cell", "clock", "colorwheel", "rocket", "hubble_deep_field", "immunohistochemistry", "retina",
          "microaneurysms", "shepp_logan_phantom", "horse", "logo")
_ALIASES = {"phantom": "shepp_logan_phantom"}
INPAINT_KEEP, INPAINT_SEED = 0.75, 0  # "inpaint" mode: the fraction of pixels trained on, and the seed that picks them
SIGNAL_MODES = ("fit", "inpaint", "superres", "1d")  # one image: make_signal
MODES = (*SIGNAL_MODES, "dataset")  # "dataset": a set of images, signal_set_fit's protocol (evaluate delegates)
DEFAULT_SIZE = 64
# each baseline: its class and its fixed arguments; the hidden width is matched to the model's parameter count
BASELINES: dict[str, tuple[type[nn.Module], dict[str, Any]]] = {
    "siren": (Siren, {"layers": 3, "w0": 30.0, "w0_initial": 30.0}),
    "relu-ff": (FourierFeatureMLP, {"layers": 3, "n_features": 256, "sigma": 5.0, "seed": 0}),
}


# ---------------------------------------------------------------------------------------------- data
@functools.lru_cache(maxsize=8)
def _raw_image(name: str):
    import numpy as np
    import skimage.data

    key = _ALIASES.get(name, name)
    if key not in IMAGES:
        raise ValueError(f"unknown image {name!r}; bundled images (offline): {', '.join(IMAGES)} (alias: phantom)")
    img = np.asarray(getattr(skimage.data, key)())
    if img.dtype == bool:
        img = img.astype(np.float32)
    elif img.dtype == np.uint8:
        img = img.astype(np.float32) / 255.0
    else:
        img = img.astype(np.float32)
        img = (img - img.min()) / max(float(img.max() - img.min()), 1e-12)
    if img.ndim == 2:
        img = img[..., None]
    if img.shape[-1] == 4:  # RGBA (logo): drop alpha
        img = img[..., :3]
    h, w = img.shape[:2]
    s = min(h, w)  # centre crop to a square, so resizing keeps the aspect ratio
    top, left = (h - s) // 2, (w - s) // 2
    return img[top:top + s, left:left + s]


def _source(name: str, gray: bool):
    img = _raw_image(name)
    if gray and img.shape[-1] == 3:
        from skimage.color import rgb2gray

        img = rgb2gray(img)[..., None].astype("float32")
    return img


@functools.lru_cache(maxsize=32)
def _resized(name: str, size: int, gray: bool = False):
    from skimage.transform import resize

    img = _source(name, gray)
    out = resize(img, (size, size, img.shape[-1]), anti_aliasing=True, order=1, mode="reflect")
    return out.clip(0.0, 1.0).astype("float32")


def load_image(name: str = "camera", size: int = 64, *, gray: bool = False) -> torch.Tensor:
    """A bundled scikit-image image as (size, size, C) float32 in [0, 1]; C=1 for gray, 3 for colour.

    Centre-cropped to a square, then resized with anti-aliasing (``skimage.transform.resize``). Offline.
    ``gray=True`` gives a colour image's luminance (C=1); gray images are unchanged.

    >>> load_image("camera", 32).shape, load_image("astronaut", 8, gray=True).shape
    (torch.Size([32, 32, 1]), torch.Size([8, 8, 1]))
    """
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    return torch.from_numpy(_resized(name, int(size), bool(gray)).copy())


def load_row(name: str = "camera", n: int = 256, *, gray: bool = False) -> torch.Tensor:
    """The ``1d`` mode's signal: the middle row of the square crop at full resolution, resized to (n, C).

    A real 1-D signal shipped offline (scikit-image's bundled pictures), resized with anti-aliasing.

    >>> load_row("camera", 64).shape
    torch.Size([64, 1])
    """
    from skimage.transform import resize

    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    img = _source(name, gray)
    row = img[img.shape[0] // 2]
    out = resize(row, (int(n), row.shape[-1]), anti_aliasing=True, order=1, mode="reflect")
    return torch.from_numpy(out.clip(0.0, 1.0).astype("float32"))


def coord_grid(h: int, w: int) -> torch.Tensor:
    """Pixel-centre coordinates (h*w, 2) in [-1, 1], row-major (y, x), matching ``img.reshape(-1, C)``.

    >>> coord_grid(2, 2).tolist()
    [[-0.5, -0.5], [-0.5, 0.5], [0.5, -0.5], [0.5, 0.5]]
    """
    ys = (torch.arange(h, dtype=torch.float32) * 2 + 1) / h - 1
    xs = (torch.arange(w, dtype=torch.float32) * 2 + 1) / w - 1
    yy, xx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([yy, xx], dim=-1).reshape(-1, 2)


def _axis(n: int) -> torch.Tensor:
    return (torch.arange(n, dtype=torch.float32) * 2 + 1) / n - 1


@dataclass
class ImageSignal:
    """A signal to fit: training coordinates/values and held-out ones.

    ``shape`` is the training grid's shape ((H, W, C) or (T, H, W, C)); ``values.reshape(shape)``
    is the training image unless the mode samples pixels (``inpaint``), in which case
    ``grid_coords``/``grid_values`` hold the full grid (for pictures and SSIM) and ``test_shape``
    is (N_test, C). ``test_shape`` is the held-out grid's shape when the test set is a grid.
    """

    name: str
    coords: torch.Tensor
    values: torch.Tensor
    shape: tuple
    test_coords: torch.Tensor
    test_values: torch.Tensor
    test_shape: tuple
    mode: str = "fit"
    grid_coords: torch.Tensor | None = None
    grid_values: torch.Tensor | None = None

    @property
    def channels(self) -> int:
        return int(self.values.shape[-1])

    @property
    def in_features(self) -> int:
        return int(self.coords.shape[-1])

    def to(self, device: Any) -> ImageSignal:
        """This signal with its tensors on ``device`` (the task runs where the model is)."""
        return replace(self, **{f.name: getattr(self, f.name).to(device) for f in fields(self)
                                if isinstance(getattr(self, f.name), torch.Tensor)})

    def grid(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Coordinates and values of the whole training-resolution grid (``shape``)."""
        if self.grid_coords is not None:
            return self.grid_coords, self.grid_values
        return self.coords, self.values


def make_signal(name: str = "camera", size: int = DEFAULT_SIZE, mode: str = "fit", *, keep: float = INPAINT_KEEP,
                seed: int = INPAINT_SEED, gray: bool = False) -> ImageSignal:
    """The ``image_fit`` signal of one image in ``mode`` (``SIGNAL_MODES``; see the module docstring).

    "fit" tests on the 2x grid, "inpaint" on the pixels not trained on, "superres" trains on the
    (size/2)^2 grid and tests on the size^2 grid, "1d" fits the image's middle row (``load_row``) with
    ``size`` samples and tests on 2 * size. ``keep`` is the fraction of pixels trained on in "inpaint"
    mode; ``seed`` fixes which. ``gray=True``: a colour image's luminance.

    >>> s = make_signal("camera", 16)
    >>> s.coords.shape, s.values.shape, s.test_values.shape
    (torch.Size([256, 2]), torch.Size([256, 1]), torch.Size([1024, 1]))
    >>> r = make_signal("camera", 16, mode="superres")
    >>> r.shape, r.test_shape
    ((8, 8, 1), (16, 16, 1))
    >>> make_signal("camera", 16, mode="1d").coords.shape
    torch.Size([16, 1])
    """
    if mode == "dataset":
        raise ValueError("the dataset mode fits a set of images, not one signal: evaluate(model, mode='dataset', "
                         "dataset='digits') or signal_set.load_set('digits')")
    if mode not in SIGNAL_MODES:
        raise ValueError(f"unknown image_fit mode {mode!r}; choose from {', '.join(MODES)} (video: make_video_signal)")
    if mode == "1d":
        row, fine = load_row(name, size, gray=gray), load_row(name, 2 * size, gray=gray)
        return ImageSignal(f"1d:{name}", _axis(size)[:, None], row, tuple(row.shape), _axis(2 * size)[:, None],
                           fine, tuple(fine.shape), mode="1d")
    if mode == "superres":
        if size < 2 or size % 2:
            raise ValueError(f"superres mode trains on the size/2 grid: size must be even and >= 2, got {size}")
        low, full = load_image(name, size // 2, gray=gray), load_image(name, size, gray=gray)
        c = low.shape[-1]
        return ImageSignal(name, coord_grid(size // 2, size // 2), low.reshape(-1, c), tuple(low.shape),
                           coord_grid(size, size), full.reshape(-1, c), tuple(full.shape), mode="superres")
    img = load_image(name, size, gray=gray)
    c = img.shape[-1]
    coords, values = coord_grid(size, size), img.reshape(-1, c)
    if mode == "fit":
        fine = load_image(name, 2 * size, gray=gray)
        return ImageSignal(name, coords, values, tuple(img.shape), coord_grid(2 * size, 2 * size),
                           fine.reshape(-1, c), tuple(fine.shape), mode="fit")
    if not 0.0 < keep < 1.0:  # inpaint
        raise ValueError(f"keep must be in (0, 1), got {keep}")
    n = coords.shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    k = int(round(keep * n))
    tr, te = perm[:k].sort().values, perm[k:].sort().values
    return ImageSignal(name, coords[tr], values[tr], tuple(img.shape), coords[te], values[te],
                       (len(te), c), mode="inpaint", grid_coords=coords, grid_values=values)


def load_video(name: str = "astronaut", frames: int = 16, size: int = 32) -> torch.Tensor:
    """(T, H, W, C): ``frames`` size x size crops panning across a bundled image.

    The image is loaded at 2 * size; crop t starts at column ``round(t * size / (frames - 1))`` and
    row ``round(t * size / (2 * (frames - 1)))``, so the window pans right and down across the image,
    about 2 pixels per frame by default.

    >>> load_video(frames=4, size=8).shape
    torch.Size([4, 8, 8, 3])
    """
    return _video(name, frames, size, scale=1)


def _video(name: str, frames: int, size: int, scale: int) -> torch.Tensor:
    base = load_image(name, 2 * size * scale)
    span = max(frames - 1, 1)
    out = []
    for t in range(frames):
        dx, dy = round(t * size / span), round(t * size / (2 * span))
        out.append(base[dy * scale:(dy + size) * scale, dx * scale:(dx + size) * scale])
    return torch.stack(out)


def make_video_signal(frames: int = 16, size: int = 32, name: str = "astronaut") -> ImageSignal:
    """The video signal: coords (T*H*W, 3) (t, y, x) in [-1, 1], frame-major.

    Train on every frame at size x size; test on the same frames on the 2x finer spatial grid (the
    crops are cut at the same places of the image loaded at twice the resolution).

    >>> s = make_video_signal(frames=4, size=8)
    >>> s.coords.shape, s.shape, s.test_shape
    (torch.Size([256, 3]), (4, 8, 8, 3), (4, 16, 16, 3))
    """
    video, fine = _video(name, frames, size, 1), _video(name, frames, size, 2)
    c = video.shape[-1]

    def grid(t: int, h: int, w: int) -> torch.Tensor:
        tt, yy, xx = torch.meshgrid(_axis(t), _axis(h), _axis(w), indexing="ij")
        return torch.stack([tt, yy, xx], dim=-1).reshape(-1, 3)

    return ImageSignal(f"video:{name}", grid(frames, size, size), video.reshape(-1, c), tuple(video.shape),
                       grid(frames, 2 * size, 2 * size), fine.reshape(-1, c), tuple(fine.shape), mode="video")


# ------------------------------------------------------------------------------------------- metrics
def psnr(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Peak signal-to-noise ratio in dB for data range 1: ``-10 log10(MSE)``; ``inf`` when identical.

    >>> round(psnr(torch.zeros(4), torch.full((4,), 0.1)), 6)
    20.0
    """
    mse = float(torch.mean((pred.detach().float() - target.detach().float()) ** 2))
    return float("inf") if mse == 0.0 else -10.0 * math.log10(mse)


def ssim(pred_img: torch.Tensor, target_img: torch.Tensor) -> float:
    """SSIM (``skimage.metrics.structural_similarity``, data range 1) of (H, W, C) images.

    (T, H, W, C) videos give the mean over frames; predictions are clipped to [0, 1].

    >>> ssim(torch.ones(16, 16, 1) * 0.5, torch.ones(16, 16, 1) * 0.5)
    1.0
    """
    from skimage.metrics import structural_similarity

    p = pred_img.detach().float().clamp(0, 1).cpu().numpy()
    t = target_img.detach().float().cpu().numpy()
    if p.shape != t.shape:
        raise ValueError(f"ssim: shapes differ: {p.shape} vs {t.shape}")
    if p.ndim == 4:
        return float(sum(ssim(torch.from_numpy(a), torch.from_numpy(b)) for a, b in zip(p, t, strict=True)) / len(p))
    win = min(7, *[s if s % 2 else s - 1 for s in p.shape[:2]])
    return float(structural_similarity(p, t, data_range=1.0, channel_axis=-1, win_size=win))


# ---------------------------------------------------------------------------------------- contract
def example_input() -> torch.Tensor:
    """Coordinates (16, 2): the pixel centres of a 4x4 grid."""
    return coord_grid(4, 4)


def check_output(model: nn.Module, out: Any) -> None:
    """The forward contract: a (16, C) tensor for the 16 example coordinates."""
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or out.shape[0] != 16 or out.shape[1] < 1:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise AssertionError(f"{NAME}: model(coords (16, 2)) must return a (16, C) tensor, got {shape}")


# ------------------------------------------------------------------------------------------ training
@torch.no_grad()
def predict(model: nn.Module, coords: torch.Tensor, chunk: int = 65536) -> torch.Tensor:
    """``model(coords)`` in chunks, in eval mode (returns the raw, unclipped output)."""
    was = model.training
    model.eval()
    out = torch.cat([model(coords[i:i + chunk]) for i in range(0, coords.shape[0], chunk)])
    model.train(was)
    return out


def _own_fit_options(model: nn.Module, own, lr: float | None, lr_decay: float | None) -> dict[str, float]:
    """The ``lr``/``lr_decay`` to pass to a model's own ``fit``: those set and accepted; refuse the others.

    A value equal to the model's own ``default_lr``/``default_lr_decay`` is what its ``fit`` uses
    anyway, so it is not an error when that ``fit`` takes no such argument.
    """
    params = inspect.signature(own).parameters
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    out: dict[str, float] = {}
    for key, value in (("lr", lr), ("lr_decay", lr_decay)):
        if value is None:
            continue
        if key in params or var_kw:
            out[key] = value
        elif value != getattr(model, f"default_{key}", None):
            raise ValueError(f"{NAME}: {type(model).__name__} trains by its own fit(), which takes no {key}=, so "
                             f"{key}={value:g} cannot be honoured; leave {key} unset (the model uses "
                             f"{getattr(model, f'default_{key}', 'its own')}) or give its fit a {key} argument")
    return out


def fit(model: nn.Module, signal: ImageSignal, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None,
        lr: float | None = None, batch_size: int | None = None, seed: int = 0, progress: str | None = None,
        lr_decay: float | None = None) -> dict:
    """Fit ``model`` to ``signal`` in place: Adam on MSE over the training coordinates.

    ``lr`` defaults to the model's ``default_lr``, else ``DEFAULT_LR``. Full batch unless
    ``batch_size`` is given (then seeded random batches). ``lr_decay``: the learning rate decays
    exponentially to ``lr * lr_decay`` at the last step (the schedule of the WIRE/SL2A-INR code bases;
    needs ``steps``). A model with its own ``fit(signal, *, steps, budget_s, seed, progress)`` is
    trained by that instead, given ``lr``/``lr_decay`` when they are set and its ``fit`` takes them
    (``ValueError`` when set and not taken: a learning rate is never dropped silently). Returns
    ``run_budget``'s figures (steps, train_seconds, seconds_per_step, final_train_loss),
    ``psnr_train`` and ``losses`` (the training MSE at every step, before its update; absent for a
    model's own fit unless it reports them).

    >>> m = Siren(hidden=16, layers=2)
    >>> fig = fit(m, make_signal("camera", 8), steps=5)
    >>> fig["steps"]
    5
    """
    own = getattr(model, "fit", None)
    if callable(own):
        extra = _own_fit_options(model, own, lr, lr_decay)
        out = dict(own(signal, steps=steps, budget_s=budget_s, seed=seed, progress=progress, **extra))
    else:
        lr = lr if lr is not None else getattr(model, "default_lr", DEFAULT_LR)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        sched = None
        if lr_decay is not None:
            if steps is None:
                raise ValueError("lr_decay needs steps= (the decay is spread over the step count)")
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: lr_decay ** min(i / steps, 1.0))
        out = mse_loop(model, signal, opt, steps=steps, budget_s=budget_s, progress=progress,
                       batch_size=batch_size, seed=seed, sched=sched)
    out["psnr_train"] = psnr(predict(model, signal.coords).clamp(0, 1), signal.values)
    return out


def mse_loop(model: nn.Module, signal: ImageSignal, opt: torch.optim.Optimizer, *, steps: int | None,
             budget_s: float | None = None, progress: str | None = None, batch_size: int | None = None,
             seed: int = 0, sched=None) -> dict:
    """The training loop of ``fit`` with the caller's optimiser: MSE on the training coordinates.

    For models with their own ``fit`` (their own optimiser groups or selection step) that train on
    plain MSE. Returns ``run_budget``'s figures and ``losses``; leaves the model in eval mode.
    """
    x, y = signal.coords, signal.values
    g = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    model.train()

    def step(i: int) -> float:
        if batch_size is None or batch_size >= x.shape[0]:
            xb, yb = x, y
        else:
            idx = torch.randint(x.shape[0], (batch_size,), generator=g)
            xb, yb = x[idx], y[idx]
        loss = torch.mean((model(xb) - yb) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
        return losses[-1]

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    out["losses"] = losses
    model.eval()
    return out


def steps_to_psnr(losses: list[float], target_db: float, never: float = math.inf) -> float:
    """The first step count after which the training MSE (``fit``'s ``losses``) reaches ``target_db``; ``never`` if none.

    >>> steps_to_psnr([0.1, 0.01, 0.001], 20.0), steps_to_psnr([0.1], 20.0, never=2)
    (2.0, 2.0)
    """
    for i, loss in enumerate(losses):
        if loss <= 10 ** (-target_db / 10):
            return float(i + 1)
    return float(never)


def score(model: nn.Module, signal: ImageSignal) -> dict[str, float]:
    """PSNR on the training and held-out coordinates, SSIM on the training (and held-out) grid (not for 1-D)."""
    gc, gv = signal.grid()
    pred = predict(model, gc).clamp(0, 1)
    train = pred if signal.grid_coords is None else predict(model, signal.coords).clamp(0, 1)
    test = predict(model, signal.test_coords).clamp(0, 1)
    out = {"psnr_train": psnr(train, signal.values), "psnr_test": psnr(test, signal.test_values)}
    if signal.in_features == 1:  # SSIM is an image metric
        return out
    out["ssim_train"] = ssim(pred.reshape(signal.shape), gv.reshape(signal.shape))
    if signal.mode != "inpaint":
        out["ssim_test"] = ssim(test.reshape(signal.test_shape), signal.test_values.reshape(signal.test_shape))
    return out


def fit_recipe(model_name: str, signal: ImageSignal | None = None, *, steps: int = DEFAULT_STEPS, seed: int = 0,
               lr: float | None = None, **overrides: Any) -> tuple[nn.Module, dict[str, float]]:
    """A pretrained tag's recipe: ``zoo.create(model_name, **overrides)`` fitted to ``signal`` and scored.

    ``signal`` defaults to 64x64 ``camera`` (fit mode); ``lr`` to the model's ``default_lr``, decayed by
    its ``default_lr_decay`` if it has one (as in ``evaluate``). Seeded, so deterministic on CPU. Returns
    the model in eval mode and the metrics measured here: PSNR/SSIM on the training grid, PSNR on the
    held-out coordinates (``psnr_test_2x`` in fit mode: the 2x finer grid), steps. A plugin's
    ``train.py`` calls it with its own model and step count.

    >>> model, metrics = fit_recipe("sl2a_inr", steps=2000)       # doctest: +SKIP
    """
    import zoo

    torch.manual_seed(seed)
    model = zoo.create(model_name, **overrides)
    signal = signal if signal is not None else make_signal("camera", 64)
    fig = fit(model, signal, steps=steps, lr=lr, seed=seed,
              lr_decay=getattr(model, "default_lr_decay", None))  # the same rule as evaluate()
    scores = score(model, signal)
    held_out = "psnr_test_2x" if signal.mode == "fit" else "psnr_test"  # fit mode holds out the 2x finer grid
    metrics = {"psnr_train": scores["psnr_train"], held_out: scores["psnr_test"], "steps": float(fig["steps"])}
    if "ssim_train" in scores:
        metrics["ssim_train"] = scores["ssim_train"]
    return model.eval(), metrics


def build_baseline(name: str, *, params: int | None = None, data: ImageSignal | None = None, seed: int = 0,
                   **options: Any) -> nn.Module:
    """Baseline ``name`` (``BASELINES``), seeded, its hidden width matched to ``params`` (``count_params``).

    Its input and output sizes are ``data``'s coordinate dimension and channels; without ``data``,
    ``options`` may give ``in_features`` and ``out_features`` (default 2 and 1: a gray image).

    >>> count_params(build_baseline("siren", params=5000, data=make_signal("camera", 8)))
    5097
    """
    if name not in BASELINES:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {sorted(BASELINES)}")
    if params is None:
        raise ValueError(f"{NAME} sizes its baselines to the model: pass params=count_params(model)")
    dims = {"in_features": 2, "out_features": 1} if data is None else {"in_features": data.in_features,
                                                                        "out_features": data.channels}
    unknown = set(options) - set(dims)
    if unknown:
        raise TypeError(f"{NAME}.build_baseline: unknown options {sorted(unknown)}; valid: {sorted(dims)}")
    dims.update(options)
    cls, kwargs = BASELINES[name]
    torch.manual_seed(seed)
    return match_params(lambda w: cls(hidden=w, **dims, **kwargs), params, lo=4, hi=2048)


def describe(*, image: str = "camera", size: int | None = None, mode: str = "fit", steps: int | None = None,
             budget_s: float | None = None, lr: float | None = None,
             baselines: list[str] | None = None, gray: bool = False, dataset: str | None = None) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (its defaults without any): data, split, optimiser.

    ``mode="dataset"`` describes ``signal_set_fit``'s protocol, which ``evaluate`` then runs.

    >>> describe()["steps"], describe(mode="inpaint")["test"]
    (1000, 'the 25% of the pixels not trained on')
    >>> d = describe(mode="dataset"); d["dataset"], d["size"], d["steps"], list(d["baselines"])
    ('digits', 16, 500, ['ae', 'ae-2x'])
    """
    if mode == "dataset" or dataset is not None:
        from . import signal_set

        _dataset_mode_options(mode, image=image, lr=lr, gray=gray, budget_s=budget_s)
        given = {k: v for k, v in {"size": size, "steps": steps, "baselines": baselines}.items() if v is not None}
        return {**signal_set.describe(dataset=dataset or "digits", **given), "mode": "dataset",
                "protocol": f"the {signal_set.NAME} task's (image_fit's evaluate delegates to signal_set.evaluate)"}
    size = DEFAULT_SIZE if size is None else size
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    train = {"fit": f"every pixel of the {size}x{size} grid",
             "inpaint": f"{INPAINT_KEEP:.0%} of the {size}x{size} pixels, drawn with seed {INPAINT_SEED}",
             "superres": f"every pixel of the image resized to the {size // 2}x{size // 2} grid",
             "1d": f"the image's middle row resized to {size} samples (coordinates (N, 1))"}
    test = {"fit": f"the same image resized to the {2 * size}x{2 * size} grid (between the training pixels)",
            "inpaint": f"the {1 - INPAINT_KEEP:.0%} of the pixels not trained on",
            "superres": f"the same image on the {size}x{size} grid (super-resolution x2)",
            "1d": f"the same row resized to {2 * size} samples (between the training samples)"}
    if mode not in train:
        raise ValueError(f"unknown {NAME} mode {mode!r}; choose from {', '.join(MODES)} (video: make_video_signal)")
    names = list(BASELINES) if baselines is None else list(baselines)
    return {"data": f"scikit-image {image!r}{' (luminance)' if gray else ''}, centre-cropped to a square, resized "
                    f"with anti-aliasing to {size}x{size}, values in [0, 1]; coordinates: pixel centres in [-1, 1]",
            "image": image, "size": size, "mode": mode, "gray": gray, "train": train[mode], "test": test[mode],
            "steps": steps, "budget_s": budget_s, "optimizer": "Adam", "batch": "full batch", "loss": "MSE",
            "lr": lr if lr is not None else f"the model's default_lr, else {DEFAULT_LR:g}",
            "lr_decay": "the model's default_lr_decay (exponential over the steps; none under budget_s alone), else none",
            "own_fit": "a model with fit(signal, *, steps, budget_s, seed, progress) is trained by it; an lr set "
                       "here is passed to it (refused if its fit takes none)",
            "metrics": ["psnr_train", "psnr_test", "ssim_train (not in 1d mode)",
                        "ssim_test (not in inpaint or 1d mode)", "params", "seconds_per_step"],
            "baselines": {b: {"class": BASELINES[b][0].__name__, **BASELINES[b][1], "lr": BASELINES[b][0].default_lr,
                              "hidden": "matched to the model's count_params"} for b in names}}


def save_figure(path: str | Path, target: torch.Tensor, recon: torch.Tensor, title: str = "") -> str:
    """Write a PNG of target | reconstruction | absolute error for (H, W, C) or (T, H, W, C) images (curves for (N, C))."""
    plt = pyplot()

    if target.ndim == 4:  # video: the middle frame
        target, recon = target[target.shape[0] // 2], recon[recon.shape[0] // 2]
    t, r = target.clamp(0, 1).cpu().numpy(), recon.clamp(0, 1).cpu().numpy()
    if t.ndim == 2:  # a 1-D signal (N, C): curves
        fig, ax = plt.subplots(figsize=(9, 3.3))
        ax.plot(t, color="0.6", label="target")
        ax.plot(r, linestyle="--", label="reconstruction")
        ax.set_title(title)
        ax.legend(loc="upper right")
        return write_png(fig, path)
    err = abs(t - r).mean(-1)
    gray = t.shape[-1] == 1
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.3))
    for ax, im, label in zip(axes, [t, r, err], ["target", "reconstruction", "|error|"], strict=True):
        if im.ndim == 3 and gray:
            im = im[..., 0]
        ax.imshow(im, cmap="gray" if im.ndim == 2 and label != "|error|" else "inferno",
                  vmin=0, vmax=1 if label != "|error|" else max(float(err.max()), 1e-6))
        ax.set_title(label)
        ax.axis("off")
    fig.suptitle(title)
    return write_png(fig, path)


def _check_channels(model: nn.Module, signal: ImageSignal) -> None:
    try:
        out = predict(model, signal.coords[:2])
    except RuntimeError as e:
        raise ValueError(f"{NAME}: the model cannot take {signal.in_features}-d coordinates of {signal.name}: {e}") from e
    c = out.shape[-1] if out.ndim == 2 else None
    if c != signal.channels:
        raise ValueError(f"{NAME}: the model outputs {c} channel(s) but {signal.name!r} has {signal.channels}; "
                         f"create the model with out_features={signal.channels} (e.g. zoo eval NAME --set "
                         f"out_features={signal.channels}) or choose a {'colour' if c == 3 else 'gray'} image")


def _dataset_mode_options(mode: str, *, image: str, lr: float | None, gray: bool, budget_s: float | None,
                          out_dir: str | None = None, signal: ImageSignal | None = None) -> None:
    """Refuse the one-image options in the dataset mode (signal_set_fit's protocol has none of them)."""
    if mode != "dataset":
        raise ValueError(f"{NAME}: dataset= is the dataset mode's option; pass mode='dataset' (got mode={mode!r})")
    refused = {"image": image != "camera", "lr": lr is not None, "gray": gray, "budget_s": budget_s is not None,
               "out_dir": out_dir is not None, "signal": signal is not None}
    bad = [k for k, v in refused.items() if v]
    if bad:
        raise ValueError(f"{NAME}: mode='dataset' runs signal_set_fit's protocol (a set of images, the model's own fit "
                         f"by step count), which takes no {', '.join(bad)}; leave {'it' if len(bad) == 1 else 'them'} unset "
                         "and choose the set with dataset='digits' or 'faces', the training length with steps=")


def evaluate(model: nn.Module, *, image: str = "camera", size: int | None = None, steps: int | None = None,
             budget_s: float | None = None, seed: int = 0, baselines: list[str] | None = None,
             out_dir: str | None = None, lr: float | None = None, mode: str = "fit",
             signal: ImageSignal | None = None, gray: bool = False, dataset: str | None = None) -> Result:
    """Fit (unless pretrained) and score ``model`` on one image, next to SIREN and ReLU+FF at equal parameters.

    ``mode`` is one of ``SIGNAL_MODES`` (``make_signal``; ``size`` 64 by default, ``gray=True`` for a
    colour image's luminance), or pass a ready ``signal`` (e.g. ``make_video_signal()``). ``lr``
    defaults to the model's ``default_lr`` or 1e-4 (a model with its own ``fit`` gets it only when
    set); baselines use their own. With ``out_dir``, writes ``<out_dir>/<name>.png`` for the model and
    each baseline.

    ``mode="dataset"`` fits a set of images instead (``dataset``: ``"digits"``, the default, or
    ``"faces"``): it returns ``signal_set.evaluate(model, dataset=, size=, steps=, seed=, baselines=)``
    unchanged but for ``config["mode"] = "dataset"`` (its ``task`` stays ``"signal_set_fit"``, the
    protocol that was run). The model follows that task's contract (``fit(signal_set, ...)`` and
    ``reconstruct(images)``), ``size`` and ``steps`` default to its 16 and 500, the baselines are its
    autoencoders ``ae``/``ae-2x``, and the one-image options (``image``, ``gray``, ``lr``,
    ``budget_s``, ``out_dir``, ``signal``) are refused.

    >>> import zoo                                                      # doctest: +SKIP
    >>> r = zoo.evaluate("poly_inr", steps=500, out_dir="out")          # doctest: +SKIP
    >>> r = zoo.evaluate("gon_implicit", task="image_fit", mode="dataset", steps=300)  # doctest: +SKIP
    """
    if mode == "dataset" or dataset is not None:
        from . import signal_set

        _dataset_mode_options(mode, image=image, lr=lr, gray=gray, budget_s=budget_s, out_dir=out_dir, signal=signal)
        given = {"size": size} if size is not None else {}
        res = signal_set.evaluate(model, dataset=dataset or "digits", steps=steps, seed=seed, baselines=baselines, **given)
        return replace(res, config={**res.config, "mode": "dataset"})
    size = DEFAULT_SIZE if size is None else size
    t0 = time.perf_counter()
    given = signal is not None
    signal = (signal or make_signal(image, size, mode, gray=gray)).to(model_device(model))
    _check_channels(model, signal)
    prov = getattr(model, "zoo", None)
    trained = not getattr(prov, "pretrained", False)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    baselines = list(BASELINES) if baselines is None else list(baselines)
    name = getattr(prov, "name", None) or type(model).__name__.lower()
    if name in baselines:
        name = f"{name} (model)"
    params = count_params(model)
    rows: dict[str, tuple[nn.Module, dict[str, float]]] = {}

    m: dict[str, float] = {"params": float(params), "steps": 0.0}
    if trained:
        torch.manual_seed(seed)
        fig = fit(model, signal, steps=steps, budget_s=budget_s, lr=lr, seed=seed, progress=f"fit {name}",
                  lr_decay=getattr(model, "default_lr_decay", None) if steps else None)
        m.update({k: float(v) for k, v in fig.items() if k in ("steps", "seconds_per_step", "final_train_loss")})
    rows[name] = (model, m)
    for b in baselines:
        base = build_baseline(b, params=params, data=signal, seed=seed).to(model_device(model))
        bm = {"params": float(count_params(base))}
        fig = fit(base, signal, steps=steps, budget_s=budget_s, lr=base.default_lr, seed=seed, progress=f"fit {b}")
        bm.update({k: float(v) for k, v in fig.items() if k in ("steps", "seconds_per_step", "final_train_loss")})
        rows[b] = (base, bm)

    artifacts: dict[str, str] = {}
    for key, (net, metrics) in rows.items():
        metrics.update(score(net, signal))
        if out_dir is not None:
            gc, gv = signal.grid()
            artifacts[key] = save_figure(Path(out_dir) / f"{key}.png", gv.reshape(signal.shape),
                                         predict(net, gc).reshape(signal.shape),
                                         f"{key} on {signal.name}: {metrics['psnr_train']:.2f} dB")
    model_metrics = rows.pop(name)[1]
    return Result(task=NAME, metrics=model_metrics, baselines={k: v[1] for k, v in rows.items()},
                  n=int(signal.test_coords.shape[0]), seconds=time.perf_counter() - t0,
                  config={"image": signal.name, "size": int(signal.shape[-2]) if given else size, "mode": signal.mode,
                          "gray": gray, "steps": steps,
                          "budget_s": budget_s, "seed": seed, "trained": trained, "lr": lr},
                  artifacts=artifacts)
