"""Magnitude-threshold activation sparsity (CETT) and the three aspects "ReLU² Wins" measures.

Zhang et al. 2024 (arXiv:2402.03804), generalized activation definition: an FFN's output is a sum
of neuron outputs ``n_i = a_i * W_down[:, i]`` (``a_i`` the hidden activation); neuron ``i`` is
inactive for a token when ``||n_i|| = |a_i| * ||W_down[:, i]||`` is at most a per-layer threshold
``eps``. The threshold comes from the cumulative errors of tail truncation,

    CETT(eps) = || sum_{i: ||n_i|| <= eps} n_i ||_2 / || sum_i n_i ||_2     (per token),

by choosing, in each layer, the ``eps`` whose mean CETT over calibration tokens equals one target
shared by all layers. Truncating the inactive neurons (``a_i = 0``) and measuring the loss gives the
sparsity-performance trade-off; the operating point "at equal loss" used here is the sparsity at
the largest CETT whose perplexity stays within ``1 + p`` of the dense model's (PPL-p%, the metric
of the authors' follow-up, Luo et al. 2024, arXiv:2411.02335). The other two aspects are
measured at that point: predictivity (a small predictor trained to tell active neurons from the
FFN input: recall of active neurons and the sparsity it predicts) and hardware affinity (share of
a token's active neurons already active for the previous token; share of activations taken by the
20% most frequently active neurons). Predictor size and the affinity statistics follow our reading
of the paper (see the plugin README).
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn

from zoo_nn.gpt import capture_hidden, hidden_hooks
from zoo_task_char_lm import task as char_lm

__all__ = ["CETTCurve", "neuron_magnitudes", "cett", "calibrate", "truncation", "evaluate_at", "ppl_sparsity",
           "predictivity", "hardware_affinity"]


def neuron_magnitudes(h: torch.Tensor, w_down: torch.Tensor) -> torch.Tensor:
    """``||n_i|| = |a_i| * ||W_down[:, i]||`` for hidden activations ``h`` (..., H) and ``w_down`` (D, H)."""
    return h.abs() * w_down.norm(dim=0)


def cett(h: torch.Tensor, w_down: torch.Tensor, eps: float) -> torch.Tensor:
    """Per-token CETT: the norm of the truncated neurons' summed output over the FFN output's norm.

    >>> h = torch.tensor([[3.0, 1.0]]); w = torch.eye(2)
    >>> cett(h, w, eps=1.0)  # neuron 1 (magnitude 1) is truncated: |(0, 1)| / |(3, 1)|
    tensor([0.3162])
    """
    mask = neuron_magnitudes(h, w_down) <= eps
    full = (h @ w_down.T).norm(dim=-1).clamp_min(1e-12)
    return ((h * mask) @ w_down.T).norm(dim=-1) / full


@dataclass
class CETTCurve:
    """One layer's mean CETT over calibration tokens on a grid of thresholds (non-decreasing)."""

    eps: torch.Tensor
    cett: torch.Tensor

    def threshold(self, target: float) -> float:
        """The threshold whose mean CETT is ``target`` (linear interpolation on the grid)."""
        c, e = self.cett, self.eps
        if target <= float(c[0]):
            return float(e[0])
        if target >= float(c[-1]):
            return float(e[-1])
        j = int(torch.searchsorted(c, torch.tensor(target)))
        c0, c1, e0, e1 = float(c[j - 1]), float(c[j]), float(e[j - 1]), float(e[j])
        return e0 if c1 <= c0 else e0 + (e1 - e0) * (target - c0) / (c1 - c0)


def _windows(ids: torch.Tensor, t: int, n: int) -> torch.Tensor:
    n = min(n, (len(ids) - 1) // t)
    return ids[: n * t].view(n, t)


@torch.no_grad()
def calibrate(model: nn.Module, data: char_lm.Data, n_windows: int = 8, grid: int = 40) -> list[CETTCurve]:
    """Mean CETT per layer on a grid of thresholds, from ``n_windows`` training windows."""
    model.eval()
    x = _windows(data[0], model.block_size, n_windows)
    with capture_hidden(model) as acts:
        model(x)
    curves = []
    for i, mlp in enumerate(model.mlps()):
        h = acts[i][0].reshape(-1, acts[i][0].shape[-1])
        w = mlp.down.weight
        mags = neuron_magnitudes(h, w).flatten()
        sample = mags[:: max(1, mags.numel() // 200_000)]
        qs = torch.quantile(sample, torch.linspace(0.0, 0.999, grid - 1))
        eps = torch.cat([torch.zeros(1), qs]).sort().values
        vals = torch.stack([cett(h, w, float(e)).mean() for e in eps])
        curves.append(CETTCurve(eps=eps, cett=torch.cummax(vals, 0).values))
    return curves


@contextlib.contextmanager
def truncation(model: nn.Module, thresholds: list[float]) -> Iterator[dict[int, list[int]]]:
    """Zero every neuron with ``|a_i| * ||W_down[:, i]|| <= thresholds[layer]`` inside the context.

    Yields ``{layer: [inactive, total]}`` counts, filled as the model runs.
    """
    norms = [mlp.down.weight.detach().norm(dim=0) for mlp in model.mlps()]
    counts = {i: [0, 0] for i in range(len(norms))}

    def cut(i: int, h: torch.Tensor) -> torch.Tensor:
        mask = h.abs() * norms[i] <= thresholds[i]
        counts[i][0] += int(mask.sum())
        counts[i][1] += mask.numel()
        return h.masked_fill(mask, 0.0)

    with hidden_hooks(model, cut):
        yield counts


def evaluate_at(model: nn.Module, data: char_lm.Data, thresholds: list[float], max_windows: int = 64) -> dict:
    """Validation bits/char with inactive neurons truncated, and the sparsity (mean and per layer)."""
    with truncation(model, thresholds) as counts:
        bpc = char_lm.val_loss(model, data, max_windows=max_windows)
    per_layer = [c[0] / max(c[1], 1) for c in counts.values()]
    return {"bpc": bpc, "sparsity": sum(per_layer) / len(per_layer), "per_layer": per_layer}


def ppl_sparsity(model: nn.Module, data: char_lm.Data, curves: list[CETTCurve], p: float = 0.01, iters: int = 10,
                 max_windows: int = 64) -> dict:
    """Sparsity at the largest shared CETT whose perplexity is within ``1 + p`` of the dense model's.

    Bisection on the CETT target in [0, 1]; returns the operating point (``cett``, ``bpc``,
    ``sparsity``, ``per_layer``, ``thresholds``) and ``dense_bpc``.
    """
    dense = char_lm.val_loss(model, data, max_windows=max_windows)
    limit = dense + math.log2(1 + p)
    lo, hi = 0.0, 1.0
    best = {**evaluate_at(model, data, [c.threshold(0.0) for c in curves], max_windows), "cett": 0.0}
    best["thresholds"] = [c.threshold(0.0) for c in curves]
    for _ in range(iters):
        mid = (lo + hi) / 2
        thr = [c.threshold(mid) for c in curves]
        point = evaluate_at(model, data, thr, max_windows)
        if point["bpc"] <= limit:
            lo, best = mid, {**point, "cett": mid, "thresholds": thr}
        else:
            hi = mid
    return {**best, "dense_bpc": dense}


def _mlp_inputs(model: nn.Module, x: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Each layer's FFN input (after the norm) and hidden activation for ids ``x``."""
    inputs: list[torch.Tensor] = []
    handles = [mlp.register_forward_pre_hook(lambda _m, args: inputs.append(args[0].detach())) for mlp in model.mlps()]
    try:
        with capture_hidden(model) as acts:
            model(x)
    finally:
        for h in handles:
            h.remove()
    return [t.reshape(-1, t.shape[-1]) for t in inputs], [acts[i][0].reshape(-1, acts[i][0].shape[-1])
                                                          for i in range(len(inputs))]


def predictivity(model: nn.Module, data: char_lm.Data, thresholds: list[float], rank: int | None = None,
                 steps: int = 200, n_windows: int = 16, seed: int = 0) -> dict:
    """Train a low-rank two-layer predictor per layer (FFN input -> which neurons are active).

    Trained with binary cross-entropy on training windows, scored on validation windows: ``recall``
    (share of truly active neurons predicted active) and ``predicted_sparsity`` (share predicted
    inactive), both averaged over layers; higher is better for both.
    """
    model.eval()
    t = model.block_size
    with torch.no_grad():
        xs_tr, hs_tr = _mlp_inputs(model, _windows(data[0], t, n_windows))
        xs_va, hs_va = _mlp_inputs(model, _windows(data[1], t, n_windows))
    recalls, predicted = [], []
    for i, mlp in enumerate(model.mlps()):
        norm = mlp.down.weight.detach().norm(dim=0)
        y_tr = (hs_tr[i].abs() * norm > thresholds[i]).float()
        y_va = hs_va[i].abs() * norm > thresholds[i]
        d, n_h = xs_tr[i].shape[-1], y_tr.shape[-1]
        torch.manual_seed(seed + i)
        r = rank or max(8, d // 2)
        net = nn.Sequential(nn.Linear(d, r), nn.ReLU(), nn.Linear(r, n_h))
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        for _ in range(steps):
            loss = nn.functional.binary_cross_entropy_with_logits(net(xs_tr[i]), y_tr)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            pred = net(xs_va[i]) > 0
        recalls.append(float((pred & y_va).sum() / y_va.sum().clamp_min(1)))
        predicted.append(1.0 - float(pred.float().mean()))
    return {"recall": sum(recalls) / len(recalls), "predicted_sparsity": sum(predicted) / len(predicted),
            "recall_per_layer": recalls}


@torch.no_grad()
def hardware_affinity(model: nn.Module, data: char_lm.Data, thresholds: list[float], n_windows: int = 16,
                      hot_fraction: float = 0.2) -> dict:
    """Token reuse (share of a token's active neurons also active for the previous token) and the
    share of all activations taken by the ``hot_fraction`` most frequently active neurons."""
    model.eval()
    x = _windows(data[1], model.block_size, n_windows)
    with capture_hidden(model) as acts:
        model(x)
    reuse, hot = [], []
    for i, mlp in enumerate(model.mlps()):
        active = acts[i][0].abs() * mlp.down.weight.norm(dim=0) > thresholds[i]  # (B, T, H)
        shared = (active[:, 1:] & active[:, :-1]).sum()
        reuse.append(float(shared / active[:, 1:].sum().clamp_min(1)))
        freq = active.flatten(0, 1).float().mean(0).sort(descending=True).values
        k = max(1, int(round(hot_fraction * len(freq))))
        hot.append(float(freq[:k].sum() / freq.sum().clamp_min(1e-12)))
    return {"token_reuse": sum(reuse) / len(reuse), "hot_coverage": sum(hot) / len(hot)}
