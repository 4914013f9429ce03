"""Functional regression in ``operator_learn``: ``function_on_function`` (samples models) and ``scalar_on_function``
(curve models), on ``data.functional``'s curves.

* ``function_on_function``: the model gets each curve's irregular samples ``(B, N, 2)`` [t, x(t)] with their
  ``mask`` and the query times ``(B, M)``, and predicts ``y`` there ``(B, M, 1)``. Trained on the noisy ``y``
  (per-function relative L2 loss); ``rel_l2`` is scored against the noise-free ``y_clean`` of the test curves
  sampled as in training (``sampling="uniform"``), ``rel_l2_skewed`` on the same test curves sampled at times
  ``U^2`` (dense near 0: a shift of the sampling distribution, not of the curves), ``rel_l2_2x`` on the same test
  curves with twice as many samples each (40-200 instead of 20-100: a finer discretisation).
* ``scalar_on_function``: the model gets the curves on the dense grid ``(B, T)`` with the times ``(T,)`` and
  predicts the scalar ``(B, 1)``; the loss is the batch's relative L2 ``||y_hat - y|| / ||y||`` (a per-sample
  ratio of scalars would divide by near-zero responses); ``rel_l2`` is that ratio over the test set against
  ``y_clean``, ``r2`` the coefficient of determination; ``rel_l2_2x`` the same ratio with the test curves on a grid
  twice as dense (256 points instead of 128: the same curves, a finer discretisation).

Baselines (``baselines.py``): ``linear``, ``mlp_interp``, ``fpca_mlp`` (principal components of the training
curves interpolated to the baselines' grid).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from zoo.task import count_params, model_device

from . import baselines as B
from . import data
from .training import Split, check_shape, predict, probe, rel_l2, train_row

N_POINTS = (20, 100)  # samples per curve (function_on_function), uniform in this range


def splits(problem: str, kind: str, *, n: int, split: str, data_seed: int, sampling: str = "uniform",
           refine: int = 1) -> tuple[Any, Any]:
    """The task's ``Split`` of ``problem`` for a model of ``kind`` and the ``FunctionalData`` it came from; ``refine``
    multiplies the samples per curve (samples) or the dense grid's points (curve): the same curves, finer."""
    d = data.functional(problem, split=split, n=n, seed=data_seed, n_points=tuple(refine * k for k in N_POINTS),
                        sampling=sampling, dense_points=refine * data.DENSE_POINTS)
    y = d.y if split == "train" else d.y_clean
    if kind == "samples":
        s = Split((torch.from_numpy(d.samples), torch.from_numpy(d.mask), torch.from_numpy(d.t_query)), torch.from_numpy(y))
    else:
        s = Split((torch.from_numpy(d.x_dense),), torch.from_numpy(y).reshape(-1, 1), shared=(torch.from_numpy(d.t_dense),))
    return s, d


def batch_rel_l2(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The relative L2 error of a whole batch of scalars, as a one-element tensor (the curve models' loss)."""
    return rel_l2(pred.reshape(1, -1), target.reshape(1, -1))


def evaluate_functional(model: nn.Module, problem: str, kind: str, names: list[str], *, n_train: int, n_test: int,
                        data_seed: int, lr: float | None, train_model: bool, train_kw: dict,
                        label: str) -> tuple[dict[str, float], dict[str, dict[str, float]], dict[str, Any]]:
    """Train ``model`` and the baselines ``names`` on ``problem``; return (model metrics, baseline rows, config)."""
    train, train_data = splits(problem, kind, n=n_train, split="train", data_seed=data_seed)
    test, _ = splits(problem, kind, n=n_test, split="test", data_seed=data_seed)
    shifted = None
    if kind == "samples":
        shifted, _ = splits(problem, kind, n=n_test, split="test", data_seed=data_seed, sampling="skewed")
    fine, _ = splits(problem, kind, n=n_test, split="test", data_seed=data_seed, refine=2)
    loss = batch_rel_l2 if kind == "curve" else None
    curves = B.interpolate_samples(torch.from_numpy(train_data.samples), torch.from_numpy(train_data.mask),
                                   torch.linspace(0, 1, B.INTERP_GRID))
    params = count_params(model)
    probe(model, train, problem)
    rows: dict[str, tuple[nn.Module, dict[str, float]]] = {}
    rows[label] = (model, train_row(model, train, train_model=train_model, lr=lr, train_kw=train_kw, label=label,
                                    loss=loss))
    for b in names:
        torch.manual_seed(train_kw["seed"])
        base = B.build_functional(b, kind, params=params, curves=curves).to(model_device(model))
        rows[b] = (base, train_row(base, train, train_model=True, lr=None, train_kw=train_kw, label=b, loss=loss))
    for net, m in rows.values():
        pred = predict(net, test)
        check_shape(pred, test.target)
        if kind == "curve":
            pred, y = pred.reshape(-1).cpu(), test.target.reshape(-1)
            m["rel_l2"] = float((pred - y).norm() / y.norm())
            m["r2"] = float(1 - ((pred - y) ** 2).sum() / ((y - y.mean()) ** 2).sum())
            m["rel_l2_2x"] = float((predict(net, fine).reshape(-1).cpu() - y).norm() / y.norm())
        else:
            m["rel_l2"] = float(rel_l2(pred.cpu(), test.target).mean())
            m["rel_l2_2x"] = float(rel_l2(predict(net, fine).cpu(), fine.target).mean())
            if shifted is not None:
                m["rel_l2_skewed"] = float(rel_l2(predict(net, shifted).cpu(), shifted.target).mean())
    metrics = rows.pop(label)[1]
    samples = kind == "samples"
    config = {"n_points": list(N_POINTS) if samples else None,
              "sampling_test_shift": "skewed (t = U^2)" if samples else None,
              "test_2x": "the test curves with twice the samples each" if samples
              else f"the test curves on a dense grid of {2 * data.DENSE_POINTS} points",
              "target": "y_clean (noise-free) on the test split; noisy y in training"}
    return metrics, {k: v[1] for k, v in rows.items()}, config

