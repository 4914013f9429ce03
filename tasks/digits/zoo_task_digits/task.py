"""``digits_classify``: 8x8 grey-image classification on scikit-learn's digits or on Fashion-MNIST.

Contract: ``model(x)`` with ``x`` of shape (B, 1, 8, 8), values in [0, 1], returns logits (B, 10),
or a dict whose ``"logits"`` is a tensor or ``{granularity: (B, 10)}`` (then every granularity is
scored and ``accuracy`` is the largest one's). A model may define ``loss(output, target)``; the
default is cross-entropy.

Data (``dataset=``): ``"digits"`` (the default) is scikit-learn's bundled 8x8 digits (1797 images, no
download) on a fixed stratified 75/25 split (``random_state=0``); 450 test images, so one image is 0.22
points of accuracy. ``"fashion_mnist"`` is Fashion-MNIST's own 60,000/10,000 split from the Debian
package ``dataset-fashion-mnist``, area-downsampled from 28x28 to 8x8: the same contract, so every model
and baseline of the task runs on it unchanged and at the same cost per step, and all 10,000 test images
are scored (one image is 0.01 points), which is what a claim that needs statistical power uses it for.

Training: AdamW with a one-cycle schedule under a step and/or time budget; weight decay applies to weight
matrices and kernels only (``decays``), never to biases, norm gains or per-channel/scalar parameters.
Baselines: the reference backbones of ``zoo_nn.backbones`` with LayerNorm and ReLU (GELU in the ViT),
sized by ``evaluate`` to the model's parameter count and trained under the same budget. ``describe()``
reports these settings from the constants below.
"""
from __future__ import annotations

import functools
import gzip
import inspect
import logging
import os
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from zoo.task import (
    Result,
    all_reduce_sum,
    count_params,
    distributed,
    match_width,
    model_device,
    run_budget,
    shard,
    to_model_device,
)

log = logging.getLogger(__name__)

NAME = "digits_classify"
DEFAULT_STEPS = 600
BATCH_SIZE, LR, WEIGHT_DECAY = 64, 2e-3, 0.05  # AdamW's defaults in ``train``
WARMUP = 0.1  # one-cycle: fraction of the steps spent warming up
TEST_SIZE, SPLIT_SEED = 0.25, 0  # the stratified split of the digits
BASELINES = {"mlp-ln-relu": "mlp", "cnn-ln-relu": "cnn", "vit-ln-gelu": "vit"}
# the backbone argument build_baseline(params=...) sizes: MLP hidden units, CNN base channels, ViT width
WIDTH_ARG = {"mlp": "hidden", "cnn": "width", "vit": "dim"}
DATASETS = ("digits", "fashion_mnist")
IMG_SIZE = 8  # the contract's input side; Fashion-MNIST's 28x28 images are averaged down to it
FASHION_MNIST_DIR = Path(os.environ.get("ZOO_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"))
FASHION_MNIST_INSTALL = "apt-get install -y dataset-fashion-mnist"
EVAL_CHUNK = 2000  # test images per forward pass in ``accuracy`` (10,000 at once is a lot of activations)


def _check_dataset(dataset: str) -> None:
    if dataset not in DATASETS:
        raise ValueError(f"{NAME}: unknown dataset {dataset!r}; choose from {list(DATASETS)}")


@functools.lru_cache(maxsize=2)  # parsed once per folder: decompressing 30 MB must not dominate a run
def fashion_mnist_raw(directory: Path | None = None) -> tuple[Any, Any, Any, Any]:
    """Fashion-MNIST's official split as read from the idx files in ``directory`` (default ``FASHION_MNIST_DIR``):
    ``(x_train (60000, 28, 28) uint8, y_train (60000,) int64, x_test (10000, 28, 28), y_test)`` numpy arrays,
    shared by every task that reads the Debian package (callers must not modify them)."""
    import numpy as np

    directory = FASHION_MNIST_DIR if directory is None else Path(directory)
    files = {f"{part}_{kind}": directory / f"{part}-{kind}-ubyte.gz"
             for part in ("train", "t10k") for kind in ("images-idx3", "labels-idx1")}
    missing = [str(f) for f in files.values() if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"Fashion-MNIST files not found ({', '.join(missing)}); install the Debian "
                                f"package: `{FASHION_MNIST_INSTALL}` (or point ZOO_FASHION_MNIST_DIR at a folder "
                                "holding the four *-ubyte.gz files)")

    def read(name: str, offset: int) -> np.ndarray:
        with gzip.open(files[name]) as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)  # offset: the idx header

    out = (read("train_images-idx3", 16).reshape(-1, 28, 28), read("train_labels-idx1", 8).astype(np.int64),
           read("t10k_images-idx3", 16).reshape(-1, 28, 28), read("t10k_labels-idx1", 8).astype(np.int64))
    if [len(t) for t in out] != [60_000, 60_000, 10_000, 10_000]:
        raise ValueError(f"Fashion-MNIST files in {directory} hold {[len(t) for t in out]} images/labels, "
                         f"expected 60,000 and 10,000; reinstall: `{FASHION_MNIST_INSTALL}`")
    return out


@functools.lru_cache(maxsize=2)
def _fashion_mnist(directory: Path) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fashion-MNIST's official split, images in [0, 1] area-downsampled to 8x8."""
    x_tr, y_tr, x_te, y_te = fashion_mnist_raw(directory)

    def images(x: Any) -> torch.Tensor:
        x = torch.from_numpy(x.copy()).view(-1, 1, 28, 28).float() / 255.0
        return nn.functional.adaptive_avg_pool2d(x, IMG_SIZE)  # area average: 28 is not a multiple of 8

    return images(x_tr), torch.from_numpy(y_tr), images(x_te), torch.from_numpy(y_te)


def digits_split_indices() -> tuple[Any, Any]:
    """The fixed stratified split of scikit-learn's 1,797 digits (``TEST_SIZE``, ``SPLIT_SEED``): train and test
    indices into ``load_digits()``, shared by every task that uses this split."""
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    y = load_digits().target
    return train_test_split(np.arange(len(y)), test_size=TEST_SIZE, random_state=SPLIT_SEED, stratify=y)


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    tr, te = digits_split_indices()
    return x[tr], y[tr], x[te], y[te]


def _split(dataset: str = "digits") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The cached split of ``dataset`` (shared tensors: callers must not modify them)."""
    _check_dataset(dataset)
    return _digits() if dataset == "digits" else _fashion_mnist(FASHION_MNIST_DIR)


def load_split(dataset: str = "digits") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x_train, y_train, x_test, y_test)``: 1347 training and 450 test images for ``"digits"``, 60,000 and
    10,000 for ``"fashion_mnist"``; images (N, 1, 8, 8) in [0, 1]."""
    return tuple(t.clone() for t in _split(dataset))  # type: ignore[return-value]


def example_input(batch: int = 4) -> torch.Tensor:
    return _split()[0][:batch].clone()


def probe_data(n: int | None = None, seed: int = 0, dataset: str = "digits") -> tuple[torch.Tensor, torch.Tensor]:
    """Held-out inputs and their labels for analysis tools (``zoo analyze``): the first ``n`` test images of
    ``dataset`` (all by default) in a seeded order."""
    _check_dataset(dataset)
    _, _, x, y = _split(dataset)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))[: n or len(y)]
    return x[order].clone(), y[order].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract: logits (B, 10) for every head."""
    for key, logits in logits_of(output).items():
        if logits.ndim != 2 or logits.shape[1] != 10:
            raise AssertionError(f"{NAME}: head {key or 'logits'} has shape {tuple(logits.shape)}, expected (B, 10)")


def logits_of(output: Any) -> dict[str, torch.Tensor]:
    """Every head's logits, keyed ``""`` for a plain model or by granularity for a dict of heads."""
    if isinstance(output, torch.Tensor):
        return {"": output}
    if isinstance(output, dict) and "logits" in output:
        logits = output["logits"]
        if isinstance(logits, torch.Tensor):
            return {"": logits}
        if isinstance(logits, dict):
            return {str(k): v for k, v in sorted(logits.items(), key=lambda kv: int(kv[0]))}
    raise TypeError(f"{NAME}: model output must be logits or a dict with 'logits', got {type(output).__name__}")


def default_loss(output: Any, target: torch.Tensor) -> torch.Tensor:
    return sum(nn.functional.cross_entropy(v, target) for v in logits_of(output).values())


def decays(p: torch.Tensor) -> bool:
    """Whether ``train`` applies weight decay to ``p``: only to tensors with at least two axes longer than 1
    (weight matrices, convolution kernels, position tables).

    Vectors however they are shaped (biases, norm gains, EvoNorm's ``(1, C, 1, 1)`` affines, a ViT's class
    token) and scalars (Derf's alpha and shift) are not decayed: decay pulls them to 0, which for a gain or a
    scale means shrinking the layer's output rather than regularising a map (the usual practice, e.g. timm's
    and nanoGPT's no-decay groups).

    >>> decays(torch.zeros(10, 64)), decays(torch.zeros(64)), decays(torch.zeros(1, 8, 1, 1))
    (True, False, False)
    """
    return sum(s > 1 for s in p.shape) >= 2


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW parameter groups: ``weight_decay`` for the parameters ``decays`` selects, 0 for the others."""
    params = list(model.parameters())  # frozen ones too, as before: a parameter unfrozen mid-run still trains
    groups = [{"params": [p for p in params if decays(p)], "weight_decay": weight_decay},
              {"params": [p for p in params if not decays(p)], "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


def train(model: nn.Module, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None, seed: int = 0,
          batch_size: int = BATCH_SIZE, lr: float = LR, weight_decay: float = WEIGHT_DECAY, progress: str | None = None,
          data: tuple | None = None, dataset: str = "digits") -> dict[str, float]:
    """Train ``model`` in place on the training split of ``dataset`` (or the caller's ``data``); return loss
    and timing figures. Weight decay applies to the parameters ``decays`` selects (``param_groups``)."""
    x, y = to_model_device(model, *(data or _split(dataset))[:2])
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(param_groups(model, weight_decay), lr=lr, weight_decay=weight_decay)
    total = steps or 10_000
    # one-cycle schedule; below 20 steps its warm-up would be under 2 steps (a division by zero): constant lr
    sched = (torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, pct_start=WARMUP) if total >= 20
             else torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0))
    loss_fn = getattr(model, "loss", default_loss)
    model.train()

    def step(i: int) -> float:
        idx = torch.randint(len(y), (batch_size,), generator=g)
        loss = loss_fn(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i + 1 < total:
            sched.step()
        return loss.item()

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor | None = None, y: torch.Tensor | None = None,
             dataset: str = "digits") -> dict[str, float]:
    """Test accuracy of every head on ``dataset``'s whole test split (or ``x``, ``y``): ``accuracy`` (the largest
    head) and ``accuracy@m`` per head.

    Under ``torchrun`` each rank scores its shard of the test set and the counts are summed.
    """
    if x is None:
        _, _, x, y = _split(dataset)
    x, y = to_model_device(model, x, y)
    rank, world = distributed()
    part = range(len(y))[shard(len(y), rank, world)]
    model.eval()
    correct: dict[str, float] = {}
    for start in range(part.start, part.stop, EVAL_CHUNK):  # in eval mode a chunk's logits do not depend on the others
        chunk = slice(start, min(start + EVAL_CHUNK, part.stop))
        for k, logits in logits_of(model(x[chunk])).items():
            correct[k] = correct.get(k, 0.0) + float((logits.argmax(-1) == y[chunk]).sum())
    keys = list(correct)
    totals = all_reduce_sum([correct[k] for k in keys])
    out = {}
    for key, c in zip(keys, totals, strict=True):
        out[f"accuracy@{key}" if key else "accuracy"] = c / len(y)
    if "accuracy" not in out:
        out["accuracy"] = out[f"accuracy@{keys[-1]}"]
    return out


def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, **options: Any) -> nn.Module:
    """Baseline ``name`` (``BASELINES``), seeded; ``options`` go to the backbone (e.g. ``norm_layer``).

    ``params`` (a ``count_params`` figure) sizes it: the width (``WIDTH_ARG``: MLP hidden units, CNN base
    channels, ViT width in steps of its head count) whose parameter count is closest to ``params``
    (``zoo.task.match_width``); the achieved count is the ``params`` of its row. ``params=None`` keeps the
    backbone's default size. ``data`` is unused (every dataset has the same input shape).

    >>> count_params(build_baseline("cnn-ln-relu", params=20_000))
    18914
    """
    from zoo_nn.backbones import BACKBONES

    if name not in BASELINES:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {sorted(BASELINES)}")
    kind = BASELINES[name]
    cls = BACKBONES[kind]
    if params is not None:
        arg = WIDTH_ARG[kind]
        if arg in options:
            raise ValueError(f"{NAME}.build_baseline: params= and {arg}= both size {name!r}; pass one of them")
        # the ViT splits its width into heads: only multiples of the head count are valid widths
        unit = options.get("heads", inspect.signature(cls).parameters["heads"].default) if kind == "vit" else 1
        width = unit * match_width(lambda w: cls(**{arg: unit * w}, **options), params)
        options = {**options, arg: width}
    torch.manual_seed(seed)
    return cls(**options)


def fit(model: nn.Module, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None, seed: int = 0,
        train_model: bool = True, progress: str | None = None, dataset: str = "digits",
        **train_kw: Any) -> dict[str, float]:
    """One model's row of ``evaluate``: ``params`` (``count_params``), the training figures of ``train``
    (seeded as ``evaluate`` seeds it) unless ``train_model`` is False, and ``accuracy`` on ``dataset``.

    >>> from zoo_nn.backbones import DigitsMLP
    >>> sorted(fit(DigitsMLP(hidden=8, depth=1), steps=2))  # doctest: +NORMALIZE_WHITESPACE
    ['accuracy', 'final_train_loss', 'params', 'seconds_per_step', 'steps', 'train_seconds']
    """
    metrics: dict[str, float] = {"params": float(count_params(model))}
    if train_model:
        torch.manual_seed(seed)  # the model's own randomness (dropout, sampling) in training
        metrics.update(train(model, steps=steps, budget_s=budget_s, seed=seed, progress=progress, dataset=dataset,
                             **train_kw))
    metrics.update(accuracy(model, dataset=dataset))
    return metrics


_SOURCES = {
    "digits": ("scikit-learn load_digits, 8x8 grey images scaled to [0, 1], 10 classes; split stratified, "
               f"test_size={TEST_SIZE}, random_state={SPLIT_SEED}"),
    "fashion_mnist": ("Fashion-MNIST (Debian dataset-fashion-mnist), its own 60,000/10,000 split; 28x28 grey images "
                      f"scaled to [0, 1] and area-averaged to {IMG_SIZE}x{IMG_SIZE} (adaptive_avg_pool2d), 10 classes"),
}


def describe(*, steps: int | None = None, budget_s: float | None = None, batch_size: int = BATCH_SIZE,
             lr: float = LR, weight_decay: float = WEIGHT_DECAY, data: tuple | None = None, dataset: str = "digits",
             baseline_params: int | str | None = "model") -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (its defaults without any): data, split, optimiser.

    >>> describe()["optimizer"], describe(lr=1e-3)["lr"], describe()["n_test"]
    ('AdamW', 0.001, 450)
    """
    _check_dataset(dataset)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    split = _split(dataset)
    source = _SOURCES[dataset]
    if data is not None:
        source = "the caller's training tensors (data=); the test split of " + source
    if baseline_params is None:
        sizing = "the backbones' default sizes (baseline_params=None)"
    else:
        target = "the model's count_params" if baseline_params == "model" else f"{int(baseline_params):,} parameters"
        sizing = f"the width whose count_params is closest to {target} (build_baseline(params=)); rows report the count"
    return {"data": source, "dataset": dataset, "n_train": len((data or split)[1]), "n_test": len(split[3]),
            "steps": steps, "budget_s": budget_s, "batch_size": batch_size, "optimizer": "AdamW", "lr": lr,
            "weight_decay": weight_decay,
            "weight_decay_on": "tensors with at least two axes longer than 1 (matrices, kernels); none on biases, "
                               "norm gains, per-channel or scalar parameters",
            "schedule": f"one-cycle, warm-up {WARMUP} of the steps (constant lr below 20 steps)",
            "loss": "cross-entropy summed over heads, or the model's own loss()",
            "metrics": ["accuracy", "accuracy@<head>"], "baselines": list(BASELINES), "baseline_size": sizing}


def evaluate(model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
             baselines: list[str] | None = None, train_model: bool | None = None, progress: bool = False,
             dataset: str = "digits", baseline_params: int | str | None = "model", **train_kw: Any) -> Result:
    """Train (unless the model has pretrained weights) and test ``model`` next to the baselines.

    ``baselines`` defaults to the reference backbone the model declares (``reference_backbone``),
    or the CNN. They are sized to ``baseline_params``: ``"model"`` (the default) is the model's
    ``count_params``, a number is that count, ``None`` keeps the backbones' default sizes.
    ``dataset`` is ``"digits"`` or ``"fashion_mnist"`` (see the module docstring). ``progress=True`` shows
    training progress bars (the CLI does). ``train_kw`` (``batch_size``, ``lr``, ``weight_decay``) go to
    ``train``; ``describe`` lists them.
    """
    t0 = time.perf_counter()
    _check_dataset(dataset)
    prov = getattr(model, "zoo", None)
    if train_model is None:
        train_model = not getattr(prov, "pretrained", False)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    if baselines is None:
        kind = getattr(model, "reference_backbone", "cnn")
        baselines = [n for n, k in BASELINES.items() if k == kind]
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"unknown {NAME} baseline(s) {unknown}; choose from {sorted(BASELINES)}")
    if baseline_params == "model":
        size = count_params(model) or None  # a model with nothing to train has no size to match
    elif baseline_params is None or isinstance(baseline_params, int):
        size = baseline_params
    else:
        raise ValueError(f"{NAME}: baseline_params must be 'model', a parameter count or None, got {baseline_params!r}")
    budget = {"steps": steps, "budget_s": budget_s, "seed": seed, "dataset": dataset, **train_kw}
    metrics = fit(model, train_model=train_model, progress=f"train {NAME}" if progress else None, **budget)
    dev = model_device(model)  # the baselines run where the model runs
    results = {name: fit(build_baseline(name, params=size, seed=seed).to(dev), progress=f"train {name}" if progress else None,
                         **budget)
               for name in baselines}
    for name, row in results.items():
        if size and abs(row["params"] - size) > 0.1 * size:  # the backbone's width steps are too coarse here
            log.warning("%s: baseline %s has %d parameters, %.0f%% from the %d it was sized to", NAME, name,
                        row["params"], 100 * abs(row["params"] - size) / size, size)
    return Result(task=NAME, metrics=metrics, baselines=results, n=len(_split(dataset)[3]),
                  seconds=time.perf_counter() - t0,
                  config={**describe(steps=steps, budget_s=budget_s, dataset=dataset, baseline_params=baseline_params,
                                     **train_kw),
                          "seed": seed, "trained": train_model})
