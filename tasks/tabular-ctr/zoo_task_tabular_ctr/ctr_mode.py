"""tabular_ctr's ``ctr`` mode: train a CTR model on the earlier impressions of every user, score the later ones
(``ctr_data.ctr_data`` gives the data).

Training (a model's own loss hooks first): the optional ``model.prepare(hist_ids, hist_mask, ad_id, dense, y)`` is
called once with the whole training part (a model that needs id frequencies: DIN's mini-batch aware regulariser);
then Adam (``lr``), ``epochs`` passes over the shuffled training impressions in batches of ``batch``, loss = binary
cross-entropy + the optional ``model.extra_loss(hist_ids, hist_mask, ad_id, dense)`` of the batch.

Metrics on the test part: ``auc``, ``logloss``, ``gauc`` (the DIN paper's user-weighted AUC: per-user AUC averaged
with weights = the user's test impressions, over users with both classes), ``params``, ``final_train_loss`` (mean
BCE of the last tenth of the steps), ``train_seconds``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import count_params, match_width

from . import metrics as M
from .ctr_baselines import CTR_BASELINES, PooledEmbeddingMLP
from .ctr_data import CTRData, Impressions, ctr_data

NAME = "tabular_ctr"
EPOCHS, BATCH, LR = {"synthetic": 5, "movielens": 2}, 256, 1e-3  # epochs per dataset


def predict_ctr(model: nn.Module, part: Impressions, batch: int = 4096) -> torch.Tensor:
    """Logits on ``part``, checked against the contract."""
    n = len(part.y)
    with torch.no_grad():
        out = torch.cat([model(*part.inputs(slice(i, i + batch))) for i in range(0, n, batch)])
    if tuple(out.shape) != (n,) or not torch.isfinite(out).all():
        raise TypeError(f"{NAME}: a CTR model must return finite logits ({n},), got {tuple(out.shape)}")
    return out.float()


def gauc(y: np.ndarray, score: np.ndarray, user: np.ndarray) -> float:
    """Impression-weighted mean of per-user AUC over users whose test impressions have both classes."""
    total, weight = 0.0, 0
    for u in np.unique(user):
        sel = user == u
        yu = y[sel]
        if 0 < yu.sum() < len(yu):
            total += len(yu) * M.auc(yu, score[sel])
            weight += len(yu)
    return total / weight if weight else float("nan")


def train_ctr(model: nn.Module, d: CTRData, *, seed: int, epochs: int | None = None, batch: int = BATCH,
              lr: float = LR) -> dict[str, float]:
    """Train ``model`` on ``d.train`` as the module docstring says (``epochs``: the dataset's ``EPOCHS``)."""
    epochs = EPOCHS[d.name] if epochs is None else int(epochs)
    torch.manual_seed(seed)
    tr = d.train
    if callable(getattr(model, "prepare", None)):
        model.prepare(*tr.inputs(), tr.y)
    extra = getattr(model, "extra_loss", None)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    g = torch.Generator().manual_seed(seed)
    n, losses, t0 = len(tr.y), [], time.perf_counter()
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            x = tr.inputs(idx)
            bce = nn.functional.binary_cross_entropy_with_logits(model(*x), tr.y[idx])
            loss = bce + extra(*x) if callable(extra) else bce
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(bce.detach()))
    model.eval()
    tail = losses[-max(1, len(losses) // 10):]
    return {"final_train_loss": float(np.mean(tail)), "train_seconds": time.perf_counter() - t0}


def score_ctr(model: nn.Module, d: CTRData) -> dict[str, float]:
    z = predict_ctr(model, d.test).double().numpy()
    y = d.test.y.numpy()
    return {"auc": M.auc(y, z), "logloss": M.logloss(y, z), "gauc": gauc(y, z, d.test.user.numpy())}


def fit_ctr_dims(model: nn.Module, d: CTRData, *, seed: int, rebuild: Callable[..., nn.Module] | None) -> nn.Module:
    want = d.info()
    have = {k: int(getattr(model, k, v)) for k, v in want.items()}
    if have == want:
        return model
    if rebuild is not None:
        torch.manual_seed(seed)
        return rebuild(**want)
    raise ValueError(f"{NAME}: ctr dataset {d.name!r} needs a model built with {want}; this one has {have} "
                     "(a pretrained tag is scored on the data it was trained on; create the bare model to train one)")


def build_ctr_baseline(name: str, dataset: str, *, params: int | None = None, seed: int = 0, dim: int = 16,
                       width: int = 200) -> nn.Module:
    """``sum_pooling`` / ``mean_pooling`` for ``dataset``, at ``width`` or at the MLP width closest to ``params``."""
    if name not in CTR_BASELINES:
        raise ValueError(f"{NAME}: unknown CTR baseline {name!r}; choose from {CTR_BASELINES}")
    info = ctr_data(dataset).info()

    def build(w: int) -> nn.Module:
        return PooledEmbeddingMLP(dim=dim, width=w, pooling=name.split("_")[0], **info)

    w = match_width(build, params, lo=3) if params else width
    torch.manual_seed(seed)
    return build(w)


def run_ctr(model: nn.Module, d: CTRData, *, seed: int, train: bool = True, **train_kw: Any) -> dict[str, float]:
    """``train_ctr`` (unless ``train`` is False: a pretrained model is scored as it is), then ``score_ctr``."""
    fit = train_ctr(model, d, seed=seed, **train_kw) if train else {"epochs": 0.0}
    model.eval()
    return {**score_ctr(model, d), "params": float(count_params(model)), **fit}


def example_ctr_input(model: nn.Module | None = None, batch: int = 4) -> tuple[torch.Tensor, ...]:
    """``(hist_ids (4, 20), hist_mask (4, 20), ad_id (4,), dense (4, n_dense))`` within the model's ``n_items``."""
    n_items, n_dense = int(getattr(model, "n_items", 50)), int(getattr(model, "n_dense", 1))
    g = torch.Generator().manual_seed(0)
    lengths = torch.tensor([20, 7, 1, 12])[:batch]
    mask = torch.arange(20)[None, :] < lengths[:, None]
    ids = torch.randint(1, n_items, (batch, 20), generator=g) * mask
    return ids, mask, torch.randint(1, n_items, (batch,), generator=g), torch.randn(batch, n_dense, generator=g)


def check_ctr_output(model: nn.Module, output: Any) -> None:
    if not isinstance(output, torch.Tensor) or tuple(output.shape) != (4,) or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: a CTR model's forward(hist_ids (4, 20), hist_mask, ad_id (4,), dense) must "
                             f"return finite logits (4,), got {getattr(output, 'shape', type(output))}")
