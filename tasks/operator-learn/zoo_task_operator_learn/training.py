"""The training loop and scoring ``operator_learn`` runs for every model and baseline (grid, points, samples, curve).

Adam (weight decay 1e-4 as in the FNO paper's code), learning rate the caller's ``lr``, else the model's
``default_lr``, else ``DEFAULT_LR``; cosine decay to 0 over ``steps`` (constant under ``budget_s`` alone);
minibatches of ``batch_size`` from a seeded permutation per epoch; loss: the mean over the batch of each sample's
relative L2 error (or another ``loss``). Data stays on the CPU and each batch moves to the model's device.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from zoo.task import count_params, model_device, run_budget

DEFAULT_LR = 3e-3  # the FNO paper uses 1e-3 over 25k steps; at the task's 300-500 steps 3e-3 reaches ~half the error (README)
WEIGHT_DECAY = 1e-4
BATCH_SIZE = 20
EVAL_CHUNK = 50


@dataclass
class Split:
    """A split as a model of one kind takes it: per-sample ``inputs`` (tensors with leading n), ``target``, and
    ``shared`` inputs common to every sample, passed after ``inputs`` (a curve model's times)."""

    inputs: tuple[torch.Tensor, ...]
    target: torch.Tensor
    shared: tuple[torch.Tensor, ...] = ()

    @property
    def n(self) -> int:
        return int(self.target.shape[0])

    def take(self, idx: torch.Tensor | slice, device: Any = None) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """The model's arguments and the target of samples ``idx``, on ``device``."""
        args = (*(x[idx] for x in self.inputs), *self.shared)
        if device is not None:
            return tuple(a.to(device) for a in args), self.target[idx].to(device)
        return args, self.target[idx]


def rel_l2(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Each sample's relative L2 error ``||pred - target|| / ||target||`` (over all but the first axis): (n,).

    >>> rel_l2(torch.tensor([[3.0, 4.0], [0.0, 0.0]]), torch.tensor([[3.0, 4.0], [1.0, 0.0]])).tolist()
    [0.0, 1.0]
    """
    diff = (pred - target).flatten(1).norm(dim=1)
    return diff / target.flatten(1).norm(dim=1).clamp_min(1e-12)


def fit(model: nn.Module, train: Split, *, steps: int | None, budget_s: float | None = None, lr: float | None = None,
        batch_size: int = BATCH_SIZE, seed: int = 0, progress: str | None = None,
        loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None) -> dict[str, float]:
    """Train ``model`` on ``train`` (module docstring); returns ``run_budget``'s figures."""
    lr = lr if lr is not None else getattr(model, "default_lr", DEFAULT_LR)
    loss = loss or rel_l2
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=WEIGHT_DECAY)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps) if steps else None
    gen = torch.Generator().manual_seed(seed)
    batch_size = min(batch_size, train.n)
    dev = model_device(model)
    order: list[torch.Tensor] = []
    model.train()

    def step(i: int) -> float:
        if not order or len(order[0]) < batch_size:
            order[:] = [torch.randperm(train.n, generator=gen)]
        idx, order[0] = order[0][:batch_size], order[0][batch_size:]
        args, target = train.take(idx, dev)
        value = loss(model(*args), target).mean()
        opt.zero_grad(set_to_none=True)
        value.backward()
        opt.step()
        if sched is not None:
            sched.step()
        return float(value.detach())

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


@torch.no_grad()
def predict(model: nn.Module, split: Split, chunk: int = EVAL_CHUNK) -> torch.Tensor:
    """The model's outputs on every sample of ``split`` (on the CPU), in chunks."""
    model.eval()
    dev = model_device(model)
    return torch.cat([model(*split.take(slice(i, i + chunk), dev)[0]).cpu() for i in range(0, split.n, chunk)])


def score(model: nn.Module, split: Split, task: str = "operator_learn") -> float:
    """The mean per-sample relative L2 error on ``split``; a wrong output shape raises ``ValueError`` naming both."""
    pred = predict(model, split)
    check_shape(pred, split.target, task)
    return float(rel_l2(pred, split.target).mean())


def check_shape(pred: torch.Tensor, target: torch.Tensor, task: str = "operator_learn") -> None:
    if pred.shape != target.shape:
        raise ValueError(f"{task}: the model's output has shape {tuple(pred.shape)}, expected {tuple(target.shape)} "
                         f"(the target's shape for {target.shape[0]} functions)")


def probe(model: nn.Module, split: Split, what: str, task: str = "operator_learn") -> None:
    """Run ``model`` on two samples of ``split`` before any training: a model that cannot take the inputs, or returns
    the wrong shape, raises ``ValueError`` naming the input, the expected and the actual output shapes."""
    args, target = split.take(slice(0, 2), model_device(model))
    shapes = ", ".join(str(tuple(a.shape)) for a in args)
    try:
        with torch.no_grad():
            out = model(*args)
    except Exception as e:  # noqa: BLE001 - any failure here is the model refusing this problem's inputs
        raise ValueError(f"{task}: the model fails on {what}'s inputs {shapes} (expected output {tuple(target.shape)}): "
                         f"{type(e).__name__}: {e}") from e
    check_shape(out, target, task)


def train_row(net: nn.Module, split: Split, *, train_model: bool, lr: float | None, train_kw: dict, label: str,
              progress: bool = False, loss: Callable | None = None) -> dict[str, float]:
    """Train ``net`` (by its own ``fit(split, *, steps, budget_s, seed, batch_size, lr, progress)`` when it has one,
    given the arguments its signature names; an ``lr`` it does not take is refused, never dropped) and return its row's
    training figures and ``params``."""
    m: dict[str, float] = {"params": float(count_params(net))}
    if not train_model:
        return m
    own = getattr(net, "fit", None)
    if callable(own):
        kw = {**train_kw, "progress": progress, **({"lr": lr} if lr is not None else {})}
        accepted = inspect.signature(own).parameters
        if lr is not None and "lr" not in accepted:
            raise ValueError(f"operator_learn: {label}'s own fit takes no lr; leave lr unset")
        fig = own(split, **{k: v for k, v in kw.items() if k in accepted}) or {}
    else:
        fig = fit(net, split, lr=lr, progress=f"fit {label}" if progress else None, loss=loss, **train_kw)
    m.update({k: float(v) for k, v in fig.items() if k in ("steps", "seconds_per_step", "final_train_loss")})
    return m
