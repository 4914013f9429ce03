"""The data of ``ssl_probe``'s modes, each as a :class:`Split`: unlabeled pretraining inputs, a labeled probe-training
part and a labeled test part. Every loader is deterministic (files read as shipped, synthetic sets seeded).

- ``fashion_mnist``: the Debian package ``dataset-fashion-mnist`` (idx files under /usr/share/datasets/fashion-mnist
  or ``$ZOO_FASHION_MNIST_DIR``), images (N, 1, 28, 28) in [0, 1]. Pretraining and probe training use the first
  ``FASHION_TRAIN = 10,000`` images of the official training split (the idx order; the probe also sees their labels),
  the probes are scored on the whole official test split (10,000 images).
- ``digits``: scikit-learn's ``load_digits``, (N, 1, 8, 8) scaled to [0, 1], the stratified 75/25 split of
  ``random_state=0`` (1,347 / 450), as the ``digits_classify`` task splits it.
- ``ucr``: UCR univariate sets as bundled in the sktime wheel (``.ts`` files, read here without importing sktime),
  official train/test splits; series (N, L). ``UCR_SETS`` names them.
- ``multiscale``: synthetic series (N, L = 128) of five shapes (sine, square, sawtooth, chirp, random walk), each
  with a random frequency/phase, amplitude and offset magnitude log-uniform in [1e-3, 1e3] (offset sign random), plus
  1% (of the amplitude) Gaussian noise; RAW values. 200 series per class for training, 100 for test, seeded.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

NAME = "ssl_probe"
FASHION_TRAIN = 10_000  # the fixed CPU-sized subset: the first 10,000 training images
UCR_SETS = {"gunpoint": "GunPoint", "italy_power_demand": "ItalyPowerDemand", "arrow_head": "ArrowHead",
            "osuleaf": "OSULeaf"}
UCR_INSTALL = "pip install sktime  (only its bundled .ts files are read)"
MULTISCALE_CLASSES = ("sine", "square", "sawtooth", "chirp", "random_walk")
MULTISCALE_LENGTH, MULTISCALE_TRAIN, MULTISCALE_TEST = 128, 200, 100  # per class
MULTISCALE_RANGE = (1e-3, 1e3)  # amplitudes and offset magnitudes, log-uniform


@dataclass(frozen=True)
class Split:
    """One mode's data: ``x_pretrain`` (unlabeled), ``x_train``/``y_train`` (probe training), ``x_test``/``y_test``.
    Images are (N, 1, H, W), series (N, L); labels are int64 in ``range(n_classes)``."""

    x_pretrain: torch.Tensor
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    kind: str  # "image" or "series"
    source: str

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1


@functools.lru_cache(maxsize=1)
def fashion_mnist() -> Split:
    """Fashion-MNIST at 28x28: the first 10,000 training images (pretraining and probe training), the official test
    (read by ``zoo_task_digits``'s reader of the Debian package, ``$ZOO_FASHION_MNIST_DIR`` to point elsewhere)."""
    from zoo_task_digits.task import fashion_mnist_raw

    x_tr, y_tr, x_te, y_te = fashion_mnist_raw()

    def images(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(x.copy()).view(-1, 1, 28, 28).float() / 255.0

    x_tr = images(x_tr[:FASHION_TRAIN])
    return Split(x_tr, x_tr, torch.from_numpy(y_tr[:FASHION_TRAIN].copy()), images(x_te), torch.from_numpy(y_te.copy()),
                 "image",
                 f"Fashion-MNIST (Debian dataset-fashion-mnist) 28x28 in [0, 1]: the first {FASHION_TRAIN:,} training "
                 "images for pretraining and probe training, the official 10,000 test images for scoring")


@functools.lru_cache(maxsize=1)
def digits() -> Split:
    """scikit-learn digits, 8x8 in [0, 1], stratified 75/25 split (random_state 0)."""
    from sklearn.datasets import load_digits

    from zoo_task_digits.task import digits_split_indices

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    tr, te = digits_split_indices()  # the digits_classify task's split
    x_tr = x[tr]
    return Split(x_tr, x_tr, y[tr], x[te], y[te], "image",
                 "scikit-learn load_digits 8x8 scaled to [0, 1]; stratified split test_size=0.25, random_state=0 "
                 "(1,347 pretraining/probe-training images, 450 test)")


def read_ts(path: Path) -> tuple[np.ndarray, list[str]]:
    """A univariate, equal-length ``.ts`` file (sktime/UEA format): ``(values (N, L) float64, labels)``.

    Header lines start with ``@`` or ``#``; each data line is ``v1,v2,...,vL:label`` (``?`` marks a missing value,
    read as NaN).
    """
    rows, labels = [], []
    in_data = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):
                in_data = in_data or line.lower().startswith("@data")
                continue
            if not in_data:
                continue
            *dims, label = line.split(":")
            if len(dims) != 1:
                raise ValueError(f"{NAME}: {path} is multivariate ({len(dims)} dimensions); ssl_probe reads univariate sets")
            rows.append([float("nan") if v == "?" else float(v) for v in dims[0].split(",")])
            labels.append(label.strip())
    if len({len(r) for r in rows}) != 1:
        raise ValueError(f"{NAME}: {path} has series of unequal lengths; ssl_probe reads equal-length sets")
    return np.asarray(rows, dtype=np.float64), labels


def ucr_dir() -> Path:
    """The folder of UCR ``.ts`` files in the installed sktime wheel (found without importing sktime)."""
    from zoo.task import package_dir

    return package_dir("sktime", f"{NAME} mode='ucr'", UCR_INSTALL) / "datasets" / "data"


def _znorm(x: torch.Tensor) -> torch.Tensor:
    return (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True).clamp_min(1e-8)


@functools.lru_cache(maxsize=8)
def ucr(dataset: str = "gunpoint", normalize: str = "znorm") -> Split:
    """A UCR set's official train/test split; ``normalize`` is ``"znorm"`` (each series to mean 0, std 1) or
    ``"none"``; labels re-coded to 0..C-1 in sorted order of the file's labels."""
    if dataset not in UCR_SETS:
        raise ValueError(f"{NAME}: unknown UCR dataset {dataset!r}; choose from {list(UCR_SETS)}")
    if normalize not in ("znorm", "none"):
        raise ValueError(f"{NAME}: normalize={normalize!r}; choose from ['znorm', 'none']")
    name = UCR_SETS[dataset]
    folder = ucr_dir() / name
    parts = {p: read_ts(folder / f"{name}_{p}.ts") for p in ("TRAIN", "TEST")}
    classes = sorted(set(parts["TRAIN"][1]) | set(parts["TEST"][1]), key=lambda s: (len(s), s))
    code = {c: i for i, c in enumerate(classes)}
    xs = {p: torch.nan_to_num(torch.tensor(v, dtype=torch.float32)) for p, (v, _) in parts.items()}
    ys = {p: torch.tensor([code[c] for c in lab], dtype=torch.long) for p, (_, lab) in parts.items()}
    if normalize == "znorm":
        xs = {p: _znorm(x) for p, x in xs.items()}
    return Split(xs["TRAIN"], xs["TRAIN"], ys["TRAIN"], xs["TEST"], ys["TEST"], "series",
                 f"UCR {name} (sktime's bundled .ts files), official split {len(ys['TRAIN'])}/{len(ys['TEST'])}, "
                 f"length {xs['TRAIN'].shape[1]}, normalize={normalize}")


def multiscale_series(n_per_class: int, seed: int, length: int = MULTISCALE_LENGTH) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_per_class`` series of each class in ``MULTISCALE_CLASSES`` (class order), RAW values, seeded.

    Each series: ``offset + amplitude * shape(t) + 0.01 * amplitude * noise`` on ``t = 0..1``; ``shape`` has unit
    scale (sine/square/sawtooth with 2-8 cycles and a random phase, a chirp sweeping 1 to 10 cycles, a random walk
    scaled to unit std); amplitude and |offset| log-uniform in ``MULTISCALE_RANGE``, the offset's sign random.
    """
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, length, dtype=torch.float64)
    lo, hi = (math.log(v) for v in MULTISCALE_RANGE)
    xs, ys = [], []
    for c, kind in enumerate(MULTISCALE_CLASSES):
        n = n_per_class
        cycles = 2 + 6 * torch.rand(n, 1, generator=g, dtype=torch.float64)
        phase = torch.rand(n, 1, generator=g, dtype=torch.float64)
        u = cycles * t + phase  # position in cycles
        if kind == "sine":
            s = torch.sin(2 * math.pi * u)
        elif kind == "square":
            s = torch.sign(torch.sin(2 * math.pi * u))
        elif kind == "sawtooth":
            s = 2 * (u - torch.floor(u)) - 1
        elif kind == "chirp":
            s = torch.sin(2 * math.pi * (t + 4.5 * t ** 2 + phase))  # 1 to 10 cycles per unit time
        else:
            w = torch.randn(n, length, generator=g, dtype=torch.float64).cumsum(1)
            w = w - w.mean(1, keepdim=True)
            s = w / w.std(1, keepdim=True)
        amp = torch.exp(lo + (hi - lo) * torch.rand(n, 1, generator=g, dtype=torch.float64))
        off = torch.exp(lo + (hi - lo) * torch.rand(n, 1, generator=g, dtype=torch.float64))
        sign = torch.where(torch.rand(n, 1, generator=g, dtype=torch.float64) < 0.5, -1.0, 1.0)
        noise = 0.01 * torch.randn(n, length, generator=g, dtype=torch.float64)
        xs.append(sign * off + amp * (s + noise))
        ys.append(torch.full((n,), c, dtype=torch.long))
    return torch.cat(xs).float(), torch.cat(ys)


@functools.lru_cache(maxsize=4)
def multiscale(data_seed: int = 0) -> Split:
    """The multi-scale synthetic set: training series from ``data_seed``, test series from ``data_seed + 1000``."""
    x_tr, y_tr = multiscale_series(MULTISCALE_TRAIN, data_seed)
    x_te, y_te = multiscale_series(MULTISCALE_TEST, data_seed + 1000)
    return Split(x_tr, x_tr, y_tr, x_te, y_te, "series",
                 f"synthetic {', '.join(MULTISCALE_CLASSES)}; amplitude and |offset| log-uniform in {MULTISCALE_RANGE}, "
                 f"raw values; {MULTISCALE_TRAIN}/{MULTISCALE_TEST} per class, length {MULTISCALE_LENGTH}, "
                 f"data_seed={data_seed}")
