"""Activation sources with known relations, for the representation-metric claims.

- ``digits_models(seeds, kind, steps)``: small classifiers (an MLP or a CNN) trained on scikit-learn's digits
  (training split of ``zoo_task_digits``), one per seed, each an ``ActivationSet`` of its layers on the fixed probe
  split (the 450 test images, ``probe_data``). Same architecture, same data, different seeds: the planted truth is
  "the same function, learned twice".
- ``random_init=True``: the same architectures untrained (the random-init twin of each seed): the control.
- ``raw_pixels(n)``: the probe images themselves (N, 64).

Trained weights are cached in zoo's cache (``ZOO_CACHE_DIR``/rep_metrics) as safetensors, written atomically, keyed
by kind, seed, steps and ``VERSION`` (bump it when the recipe changes), so a claim's seeds are trained once.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from torch import nn

from zoo.activations import ActivationSet, activations

VERSION = 1  # the training recipe below; part of the cache key
KINDS = ("mlp", "cnn")
DEFAULT_STEPS = 400
BATCH, LR, WEIGHT_DECAY = 64, 3e-3, 1e-4
# the layers every source records, in forward order (activations after each nonlinearity, and the logits)
LAYERS = {"mlp": ("act1", "act2", "act3", "out"), "cnn": ("act1", "act2", "act3", "out")}


class DigitsMLP(nn.Module):
    """64 -> 128 -> 128 -> 64 -> 10 with ReLU; layer names fc1/act1 ... out."""

    def __init__(self, width: int = 128) -> None:
        super().__init__()
        self.flat = nn.Flatten()
        self.fc1, self.act1 = nn.Linear(64, width), nn.ReLU()
        self.fc2, self.act2 = nn.Linear(width, width), nn.ReLU()
        self.fc3, self.act3 = nn.Linear(width, 64), nn.ReLU()
        self.out = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act1(self.fc1(self.flat(x)))
        h = self.act2(self.fc2(h))
        return self.out(self.act3(self.fc3(h)))


class DigitsCNN(nn.Module):
    """conv3x3(16) -> conv3x3(32) -> 2x2 pool -> fc(64) -> 10 with ReLU; layer names conv1/act1 ... out."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.conv1, self.act1 = nn.Conv2d(1, width, 3, padding=1), nn.ReLU()
        self.conv2, self.act2 = nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc3, self.act3 = nn.Linear(2 * width * 16, 64), nn.ReLU()
        self.out = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act2(self.conv2(self.act1(self.conv1(x))))
        h = self.pool(h).flatten(1)
        return self.out(self.act3(self.fc3(h)))


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose from {list(KINDS)}")


def build(kind: str, seed: int) -> nn.Module:
    """The untrained network of ``kind``, initialised from ``seed``."""
    _check_kind(kind)
    g = torch.random.fork_rng()
    with g:
        torch.manual_seed(int(seed))
        return DigitsMLP() if kind == "mlp" else DigitsCNN()


def probe_data(n: int | None = None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The probe set: the digits test split (450 images, never trained on), first ``n`` in a seeded order."""
    from zoo_task_digits.task import probe_data as digits_probe

    return digits_probe(n=n, seed=seed, dataset="digits")


def _cache_path(kind: str, seed: int, steps: int) -> Path:
    from zoo.weights import cache_dir

    return cache_dir() / "rep_metrics" / f"digits-{kind}-s{int(seed)}-t{int(steps)}-v{VERSION}.safetensors"


def _save_atomic(state: dict[str, torch.Tensor], path: Path) -> None:
    """Write through a temporary file and a rename (``zoo.fileio.atomic_path``): a reader never sees half a file."""
    from safetensors.torch import save_file

    from zoo.fileio import atomic_path

    with atomic_path(path) as tmp:
        save_file({k: v.detach().contiguous().cpu() for k, v in state.items()}, str(tmp))


def train(kind: str, seed: int, steps: int = DEFAULT_STEPS) -> nn.Module:
    """A classifier of ``kind`` trained ``steps`` AdamW steps (batch 64) on the digits training split; the seed fixes
    the initialisation and the batch order. Cached (see the module docstring)."""
    _check_kind(kind)
    if int(steps) < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    model = build(kind, seed)
    if int(steps) == 0:
        return model.eval()
    path = _cache_path(kind, seed, steps)
    if path.is_file():
        from safetensors.torch import load_file

        try:
            model.load_state_dict(load_file(str(path)))
            return model.eval()
        except Exception:  # noqa: BLE001 - a corrupt or stale cache entry is retrained and rewritten
            pass
    from zoo_task_digits.task import load_split

    x, y, _, _ = load_split("digits")
    g = torch.Generator().manual_seed(10_000 + int(seed))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    model.train()
    for _ in range(int(steps)):
        idx = torch.randint(0, len(y), (BATCH,), generator=g)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    _save_atomic(model.state_dict(), path)
    return model


def accuracy(model: nn.Module) -> float:
    """Accuracy on the probe split (all 450 test images)."""
    x, y = probe_data()
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def model_activations(model: nn.Module, kind: str, n: int | None = None,
                      layers: Sequence[str] | None = None) -> ActivationSet:
    """``model``'s activations on the probe set (conv maps flattened), labels attached."""
    x, y = probe_data(n)
    return activations(model, x, layers=list(layers or LAYERS[kind]), labels=y.numpy())


def digits_models(seeds: Iterable[int], kind: str = "mlp", steps: int = DEFAULT_STEPS, *, n: int | None = None,
                  layers: Sequence[str] | None = None, random_init: bool = False) -> dict[int, ActivationSet]:
    """``{seed: ActivationSet}``: each seed's classifier (or, with ``random_init``, its untrained twin) recorded on the
    probe set; every set maps layer name -> (N, D) and carries the labels."""
    _check_kind(kind)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("digits_models needs at least one seed")
    out: dict[int, ActivationSet] = {}
    for s in seeds:
        model = build(kind, s).eval() if random_init else train(kind, s, steps)
        acts = model_activations(model, kind, n, layers)
        acts.meta.update({"source": "random_init" if random_init else "trained", "kind": kind, "seed": s,
                          "steps": 0 if random_init else int(steps)})
        out[s] = acts
    return out


def raw_pixels(n: int | None = None) -> ActivationSet:
    """The probe images as (N, 64) pixel vectors (layer "pixels"), labels attached."""
    x, y = probe_data(n)
    return ActivationSet({"pixels": x.flatten(1).numpy()}, y.numpy(), meta={"source": "pixels"})
