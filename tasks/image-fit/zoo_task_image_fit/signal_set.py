"""``signal_set_fit``: learn a space of signals (a set of small real images) and reconstruct held-out members.

Data (offline, ``load_set``): ``"digits"``: scikit-learn's 8x8 digits (values / 16), resized with
bilinear interpolation to ``size`` x ``size`` (16 by default); ``"faces"``: the 100 faces of
``skimage.data.lfw_subset()`` (25x25 gray), resized to ``size`` when it differs from 25. A fixed
seeded permutation picks ``n_train`` training and ``n_test`` held-out images (disjoint). Images are
(N, H, W, C) float32 in [0, 1]; ``coords`` is ``coord_grid(H, W)`` (H*W, 2) in [-1, 1], (y, x),
row-major, so ``images.reshape(N, H*W, C)`` lines up with it.

Contract (conformance): ``model(images (B, H, W, C)) -> reconstructions (B, H, W, C)``, i.e. encode
then decode (for GON the encoding is the gradient step from the zero latent; for per-signal methods
such as D'OH it is a fixed number of latent optimisation steps). For ``evaluate`` a model provides
``fit(signal_set, *, steps, seed, progress) -> dict`` (train on ``signal_set.train``; the dict may
hold ``losses``, one training MSE per step) and ``reconstruct(images) -> images`` (the forward pass
may simply call it); optionally ``sample(n) -> (n, H, W, C)``.

Metrics: reconstruction MSE and PSNR (data range 1, predictions clipped to [0, 1], over all pixels
of the set) on the training and held-out images, trainable parameters, seconds per step.

Baselines (``build_baseline``): conventional MLP autoencoders (encoder pixels -> hidden -> latent,
decoder latent -> hidden -> pixels, ReLU, the model's latent size when it declares ``latent_dim``,
else 32), trained with Adam (1e-3) on minibatch MSE for the same steps: ``ae`` has as many
parameters as the model stores (``stored_params``), ``ae-2x`` twice that (the GON paper's comparison).
What a model stores is its trainable parameters, unless it declares more: a per-signal method keeps
state outside its parameters (D'OH optimises one latent per signal through fixed projections, so it
has no trainable parameters at all) and says so with a method ``stored_params(signal_set) -> int``.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from zoo.task import Result, count_params, match_params, model_device, run_budget

from .image_fit import coord_grid, psnr

NAME = "signal_set_fit"
DEFAULT_STEPS = 500
DATASETS = ("digits", "faces")
_DEFAULT_N = {"digits": (512, 256), "faces": (80, 20)}
BASELINES = ("ae", "ae-2x")
BATCH_SIZE = 64  # minibatch of the autoencoder baselines
DEFAULT_LATENT = 32  # the baselines' latent size for a model that declares no latent_dim
MAX_TRAIN_SCORED = 256  # training images scored (all held-out images are)


# ---------------------------------------------------------------------------------------------- data
@dataclass
class SignalSet:
    """A set of images split into training and held-out members, and their pixel coordinates."""

    name: str
    train: torch.Tensor  # (N, H, W, C)
    test: torch.Tensor  # (M, H, W, C)
    coords: torch.Tensor  # (H*W, 2)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(H, W, C) of one image."""
        return tuple(self.train.shape[1:])  # type: ignore[return-value]

    @property
    def channels(self) -> int:
        return int(self.train.shape[-1])

    def to(self, device: Any) -> SignalSet:
        """This set with its tensors on ``device`` (the task runs where the model is)."""
        return SignalSet(self.name, self.train.to(device), self.test.to(device), self.coords.to(device))


@functools.lru_cache(maxsize=4)
def _raw(name: str):
    import numpy as np

    if name == "digits":
        from sklearn.datasets import load_digits

        return (load_digits().images / 16.0).astype(np.float32)
    if name == "faces":
        import skimage.data

        return np.asarray(skimage.data.lfw_subset()[:100], dtype=np.float32)  # the first 100 are faces
    raise ValueError(f"unknown signal set {name!r}; choose from {DATASETS}")


@functools.lru_cache(maxsize=8)
def _resized(name: str, size: int) -> torch.Tensor:
    x = torch.from_numpy(_raw(name).copy()).unsqueeze(1)  # (N, 1, h, w)
    if x.shape[-1] != size:
        x = nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x.clamp(0, 1).permute(0, 2, 3, 1).contiguous()


def load_set(name: str = "digits", size: int = 16, n_train: int | None = None, n_test: int | None = None,
             seed: int = 0) -> SignalSet:
    """The signal set ``name`` at ``size`` x ``size``, split by a permutation seeded by ``seed``.

    Defaults: digits 512 train / 256 held-out (of 1797), faces 80 / 20 (of 100).

    >>> s = load_set("digits", 16, n_train=10, n_test=5)
    >>> s.train.shape, s.test.shape, s.coords.shape
    (torch.Size([10, 16, 16, 1]), torch.Size([5, 16, 16, 1]), torch.Size([256, 2]))
    """
    if size < 2:
        raise ValueError(f"size must be >= 2, got {size}")
    imgs = _resized(name, int(size))
    dn_tr, dn_te = _DEFAULT_N[name]
    n_train = dn_tr if n_train is None else int(n_train)
    n_test = dn_te if n_test is None else int(n_test)
    if n_train < 1 or n_test < 1 or n_train + n_test > len(imgs):
        raise ValueError(f"{name}: n_train={n_train} + n_test={n_test} must be >= 1 each and <= {len(imgs)}")
    perm = torch.randperm(len(imgs), generator=torch.Generator().manual_seed(seed))
    tr, te = perm[:n_train], perm[n_train:n_train + n_test]
    return SignalSet(name, imgs[tr].clone(), imgs[te].clone(), coord_grid(int(size), int(size)))


def minibatches(n: int, batch_size: int, seed: int) -> Callable[[], torch.Tensor]:
    """A generator of index batches: seeded reshuffled epochs over ``range(n)``.

    >>> nxt = minibatches(5, 2, 0); [len(nxt()) for _ in range(4)]
    [2, 2, 1, 2]
    """
    g = torch.Generator().manual_seed(seed)
    state: dict[str, Any] = {"perm": torch.randperm(n, generator=g), "i": 0}

    def nxt() -> torch.Tensor:
        if state["i"] >= n:
            state["perm"], state["i"] = torch.randperm(n, generator=g), 0
        idx = state["perm"][state["i"]:state["i"] + batch_size]
        state["i"] += batch_size
        return idx

    return nxt


# ---------------------------------------------------------------------------------------- contract
def example_input() -> torch.Tensor:
    """Two held-out digits at 8x8: (2, 8, 8, 1)."""
    return load_set("digits", 8, n_train=1, n_test=2).test


def check_output(model: nn.Module, out: Any) -> None:
    """The forward contract: reconstructions with the input's shape (2, 8, 8, 1), finite."""
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (2, 8, 8, 1) or not torch.isfinite(out).all():
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise AssertionError(f"{NAME}: model(images (2, 8, 8, 1)) must return finite reconstructions (2, 8, 8, 1), "
                             f"got {shape}")


# ------------------------------------------------------------------------------------------ baseline
class MLPAutoencoder(nn.Module):
    """Conventional autoencoder on flattened pixels: Linear-ReLU-Linear to ``latent_dim``, and back.

    >>> ae = MLPAutoencoder((8, 8, 1), hidden=16, latent_dim=4)
    >>> ae.reconstruct(torch.rand(3, 8, 8, 1)).shape
    torch.Size([3, 8, 8, 1])
    """

    default_lr = 1e-3

    def __init__(self, shape: tuple[int, int, int], hidden: int = 256, latent_dim: int = 32):
        super().__init__()
        self.shape, d = tuple(shape), int(torch.tensor(shape).prod())
        self.latent_dim = latent_dim
        self.encoder = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, latent_dim))
        self.decoder = nn.Sequential(nn.Linear(latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.reconstruct(images)

    def reconstruct(self, images: torch.Tensor) -> torch.Tensor:
        b = images.shape[0]
        return self.decoder(self.encoder(images.reshape(b, -1))).reshape(b, *self.shape)

    def fit(self, signal_set: SignalSet, *, steps: int = DEFAULT_STEPS, seed: int = 0, progress: str | None = None,
            batch_size: int = BATCH_SIZE) -> dict:
        """Adam (1e-3) on the minibatch reconstruction MSE over ``signal_set.train``."""
        x = signal_set.train
        nxt = minibatches(len(x), batch_size, seed)
        opt = torch.optim.Adam(self.parameters(), lr=self.default_lr)
        losses: list[float] = []

        def step(i: int) -> float:
            xb = x[nxt()]
            loss = torch.mean((self.reconstruct(xb) - xb) ** 2)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            return losses[-1]

        out = run_budget(step, steps=steps, budget_s=None, progress=progress)
        out["losses"] = losses
        return out


def stored_params(model: nn.Module, signal_set: SignalSet) -> int:
    """How many numbers ``model`` stores to represent ``signal_set.train``: what the baselines are sized to.

    An amortised model (GON, an autoencoder) stores its shared weights; its latents are computed from
    the input, so this is ``count_params(model)``. A model that keeps per-signal state outside its
    parameters declares the total with a method ``model.stored_params(signal_set) -> int`` (D'OH: one
    ``latent_dim`` code per training signal), which is used instead.

    >>> ae = MLPAutoencoder((8, 8, 1), hidden=16, latent_dim=4)
    >>> stored_params(ae, load_set("digits", 8, n_train=4, n_test=2)) == count_params(ae)
    True
    """
    declared = getattr(model, "stored_params", None)
    return int(declared(signal_set)) if callable(declared) else count_params(model)


def build_baseline(name: str, *, params: int | None = None, data: SignalSet | None = None, seed: int = 0,
                   latent_dim: int = DEFAULT_LATENT) -> nn.Module:
    """``ae`` (``params`` parameters) or ``ae-2x`` (2 * ``params``), the hidden width matched by search.

    Images have ``data``'s shape (without ``data``: 16x16 gray, the default digits).

    >>> s = load_set("digits", 8, n_train=4, n_test=2)
    >>> abs(count_params(build_baseline("ae-2x", params=5000, data=s, latent_dim=8)) - 10000) < 300
    True
    """
    if name not in BASELINES:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {BASELINES}")
    if params is None:
        raise ValueError(f"{NAME} sizes its baselines to the model: pass params=stored_params(model, data)")
    shape = data.shape if data is not None else (16, 16, 1)
    target = params * (2 if name == "ae-2x" else 1)
    torch.manual_seed(seed)
    d = int(torch.tensor(shape).prod())
    hi = max(1024, target // (2 * (d + latent_dim)) + 2)  # about 2 w (d + latent) parameters: any target is reachable
    return match_params(lambda w: MLPAutoencoder(shape, w, latent_dim), target, lo=1, hi=hi)


def describe(*, dataset: str = "digits", size: int = 16, steps: int | None = None,
             baselines: list[str] | None = None) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (its defaults without any): data, split, training.

    >>> d = describe(); d["n_train"], d["n_test"], d["steps"]
    (512, 256, 500)
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown signal set {dataset!r}; choose from {DATASETS}")
    n_train, n_test = _DEFAULT_N[dataset]
    source, native = {"digits": ("scikit-learn load_digits, values / 16", 8),
                      "faces": ("the first 100 images of skimage.data.lfw_subset() (faces), gray", 25)}[dataset]
    return {"data": f"{source}, {native}x{native}" + (f", resized bilinearly to {size}x{size}" if size != native else ""),
            "split": "a random permutation seeded by the seed: the first n_train images train, the next n_test are held out",
            "dataset": dataset, "size": size, "n_train": n_train, "n_test": n_test,
            "steps": DEFAULT_STEPS if steps is None else int(steps), "budget_s": None,
            "training": "the model's own fit(signal_set, *, steps, seed, progress)",
            "metrics": ["mse_train", "psnr_train", "mse_test", "psnr_test", "params", "stored_params",
                        "seconds_per_step"],
            "scored": f"at most {MAX_TRAIN_SCORED} training images, every held-out image; predictions clipped to [0, 1]",
            "baselines": {b: {"class": MLPAutoencoder.__name__, "params": ("2x " if b == "ae-2x" else "") +
                              "what the model stores (stored_params: its trainable parameters, or what it declares)",
                              "latent_dim": f"the model's latent_dim, else {DEFAULT_LATENT}",
                              "optimizer": "Adam", "lr": MLPAutoencoder.default_lr, "batch_size": BATCH_SIZE,
                              "loss": "MSE"}
                          for b in (BASELINES if baselines is None else baselines)}}


# ------------------------------------------------------------------------------------------- scoring
def reconstruct_all(model: nn.Module, images: torch.Tensor, batch_size: int = 128) -> torch.Tensor:
    """``model.reconstruct`` (or ``model``) over ``images`` in batches, clipped to [0, 1], detached."""
    fn = getattr(model, "reconstruct", None) or model
    outs = [fn(images[i:i + batch_size]).detach() for i in range(0, len(images), batch_size)]
    return torch.cat(outs).clamp(0, 1)


def score(model: nn.Module, signal_set: SignalSet, max_train: int = MAX_TRAIN_SCORED) -> dict[str, float]:
    """MSE and PSNR on (at most ``max_train`` of) the training images and on every held-out image."""
    out: dict[str, float] = {}
    for split, x in (("train", signal_set.train[:max_train]), ("test", signal_set.test)):
        rec = reconstruct_all(model, x)
        out[f"mse_{split}"] = float(torch.mean((rec - x) ** 2))
        out[f"psnr_{split}"] = psnr(rec, x)
    return out


def evaluate(model: nn.Module, *, dataset: str = "digits", size: int = 16, steps: int | None = None, seed: int = 0,
             baselines: list[str] | None = None, signal_set: SignalSet | None = None,
             budget_s: float | None = None) -> Result:
    """Fit (unless pretrained) and score ``model`` on a signal set, next to the autoencoder baselines.

    Training is by step count only (``steps``, default 500), so results are deterministic; a
    ``budget_s`` (passed by ``zoo.evaluate``) must be None.

    >>> import zoo                                               # doctest: +SKIP
    >>> r = zoo.evaluate("gon_implicit", steps=300)              # doctest: +SKIP
    """
    if budget_s is not None:
        raise ValueError(f"{NAME} trains by step count; pass steps= instead of budget_s=")
    t0 = time.perf_counter()
    sset = (signal_set or load_set(dataset, size, seed=seed)).to(model_device(model))
    steps = DEFAULT_STEPS if steps is None else int(steps)
    prov = getattr(model, "zoo", None)
    trained = not getattr(prov, "pretrained", False)
    baselines = list(BASELINES) if baselines is None else list(baselines)
    stored = stored_params(model, sset)
    metrics: dict[str, float] = {"params": float(count_params(model)), "stored_params": float(stored)}
    if trained:
        torch.manual_seed(seed)
        fig = model.fit(sset, steps=steps, seed=seed, progress=f"fit {NAME}")
        metrics.update({k: float(v) for k, v in fig.items() if k in ("steps", "seconds_per_step", "final_train_loss")})
    metrics.update(score(model, sset))
    rows: dict[str, dict[str, float]] = {}
    for b in baselines:
        base = build_baseline(b, params=max(stored, 1), data=sset, latent_dim=getattr(model, "latent_dim", DEFAULT_LATENT),
                              seed=seed).to(model_device(model))
        fig = base.fit(sset, steps=steps, seed=seed, progress=f"fit {b}")
        rows[b] = {"params": float(count_params(base)), "steps": float(fig["steps"]),
                   "seconds_per_step": float(fig["seconds_per_step"]), **score(base, sset)}
    return Result(task=NAME, metrics=metrics, baselines=rows, n=int(len(sset.test)), seconds=time.perf_counter() - t0,
                  config={"dataset": sset.name, "size": int(sset.shape[0]), "n_train": int(len(sset.train)),
                          "n_test": int(len(sset.test)), "steps": steps, "seed": seed, "trained": trained})
