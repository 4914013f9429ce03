"""Decoders and tables of Nadaf 2026, "Steerable but Not Decodable: Function Vectors Operate Beyond the Logit Lens"
(arXiv:2604.02608, catalog 14; §5 "The Steerability-Decodability Inversion", appendices L and M by their titles).

Source: the abstract (v1 and v2, which also define FVs as "mean-difference directions extracted from in-context
learning demonstrations") and the catalog entry only; the full text and code were not read, so the exact thresholds,
probe sizes and training schedules below are ours and are named as such. What the abstract fixes:

* **logit lens**: the answer is *decodable* at a layer when the top-1 token of ``unembed(final_norm(h))`` is the
  answer (``logit_lens_accuracy``);
* **diagonal tuned lens**: ``unembed(final_norm(a * h + b))`` with a per-layer elementwise scale ``a`` and bias ``b``
  trained on held-out prompts (``fit_diagonal_lens``);
* **2-layer MLP probe with a Hewitt & Liang (2019) control task**: the probe's accuracy minus the accuracy of the same
  probe on the control task (each input *type* gets a fixed random label drawn from the label distribution),
  the *selectivity* (``probe_with_control``);
* **steerable x decodable contingency table** per cell (``contingency``);
* **FV through the unembedding**: entropy and coherence of ``softmax(unembed(FV))`` (``unembed_stats``);
* **norm-transfer correlation**: Pearson r between the FV norm and its steering gain (``pearson``).

Our choices (not from the paper): decodable = accuracy >= 0.5; steerable = FV accuracy - zero-shot accuracy > 0.1
(the brief's); probe: 64 hidden ReLU units, 300 full-batch Adam steps (lr 1e-2, weight decay 1e-4) on standardised
states; tuned lens: 200 Adam steps (lr 0.05); coherence = share of the top-5 tokens that lie in the task's output
domain.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

STEER_THRESHOLD = 0.1
DECODE_THRESHOLD = 0.5
TOP_K = 5

Unembed = Callable[[torch.Tensor], torch.Tensor]


def _states(h: Any, what: str = "states") -> torch.Tensor:
    t = torch.as_tensor(np.asarray(h) if not isinstance(h, torch.Tensor) else h).float()
    if t.ndim != 2:
        raise ValueError(f"{what} must be (N, D), got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{what} hold NaN/inf values; drop those inputs before decoding")
    return t


def _targets(y: Any, n: int, what: str = "targets") -> torch.Tensor:
    t = torch.as_tensor(np.asarray(y) if not isinstance(y, torch.Tensor) else y)
    if t.shape != (n,) or t.is_floating_point():
        raise ValueError(f"{what} must be ({n},) integer labels (one per state), got {tuple(t.shape)} {t.dtype}")
    return t.long()


def matrix_unembed(weight: Any, bias: Any = None, *, layer_norm: bool = False) -> Unembed:
    """An unembedding from arrays: ``h -> LN(h) @ W.T + b`` (``W`` (V, D); ``layer_norm`` a parameter-free LayerNorm,
    standing in for a final norm)."""
    w = _states(weight, "unembed")
    b = None if bias is None else torch.as_tensor(np.asarray(bias)).float()
    if b is not None and b.shape != (w.shape[0],):
        raise ValueError(f"unembed_bias must be ({w.shape[0]},) (one per vocabulary row of unembed), got {tuple(b.shape)}")

    def fn(h: torch.Tensor) -> torch.Tensor:
        if h.shape[-1] != w.shape[1]:
            raise ValueError(f"states have D = {h.shape[-1]}, unembed has D = {w.shape[1]}: they must match")
        if layer_norm:
            h = F.layer_norm(h, h.shape[-1:])
        out = h @ w.T
        return out if b is None else out + b
    return fn


@torch.no_grad()
def logit_lens_accuracy(h: Any, y: Any, unembed: Unembed) -> torch.Tensor:
    """Per state: 1.0 when the top-1 token of ``unembed(h)`` is the target, else 0.0 (N,)."""
    h = _states(h)
    y = _targets(y, len(h))
    return (unembed(h).argmax(-1) == y).float()


def fit_diagonal_lens(h: Any, y: Any, unembed: Unembed, *, steps: int = 200, lr: float = 0.05,
                      seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The diagonal tuned lens of one layer: ``a``, ``b`` (D,) minimising the cross-entropy of
    ``unembed(a * h + b)`` on (``h``, ``y``); starts at the logit lens (a = 1, b = 0)."""
    h = _states(h)
    y = _targets(y, len(h))
    torch.manual_seed(seed)
    a = torch.ones(h.shape[1], requires_grad=True)
    b = torch.zeros(h.shape[1], requires_grad=True)
    opt = torch.optim.Adam([a, b], lr=lr)
    with torch.enable_grad():
        for _ in range(int(steps)):
            loss = F.cross_entropy(unembed(a * h + b), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return a.detach(), b.detach()


@torch.no_grad()
def diagonal_lens_accuracy(h: Any, y: Any, unembed: Unembed, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per state: the diagonal tuned lens' top-1 hit (N,)."""
    h = _states(h)
    return (unembed(a * h + b).argmax(-1) == _targets(y, len(h))).float()


def control_labels(types: Any, labels: Any, *, seed: int = 0) -> np.ndarray:
    """Hewitt & Liang (2019)'s control task: every distinct ``type`` gets one label drawn at random from the empirical
    distribution of ``labels``; returns each input's control label (N,)."""
    types, labels = np.asarray(types), np.asarray(labels)
    if types.shape != labels.shape or types.ndim != 1:
        raise ValueError(f"types and labels must both be (N,), got {types.shape} and {labels.shape}")
    rng = np.random.default_rng(seed)
    uniq, inv = np.unique(types, return_inverse=True)
    drawn = labels[rng.integers(0, len(labels), size=len(uniq))]
    return drawn[inv]


def mlp_probe(x_tr: Any, y_tr: Any, x_te: Any, y_te: Any, *, hidden: int = 64, steps: int = 300, lr: float = 1e-2,
              seed: int = 0) -> np.ndarray:
    """A 2-layer MLP probe (ReLU, ``hidden`` units) trained full-batch on standardised train states; per test
    state, 1.0 when it predicts the label (N_test,)."""
    x_tr, x_te = _states(x_tr, "train states"), _states(x_te, "test states")
    y_tr, y_te = _targets(y_tr, len(x_tr), "train labels"), _targets(y_te, len(x_te), "test labels")
    if len(x_tr) < 2:
        raise ValueError(f"the probe needs at least 2 training states, got {len(x_tr)}")
    classes, inv = torch.unique(torch.cat([y_tr, y_te]), return_inverse=True)
    c_tr, c_te = inv[: len(y_tr)], inv[len(y_tr):]
    mu, sd = x_tr.mean(0), x_tr.std(0).clamp(min=1e-6)
    x_tr, x_te = (x_tr - mu) / sd, (x_te - mu) / sd
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(x_tr.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, len(classes)))
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-4)
    with torch.enable_grad():
        for _ in range(int(steps)):
            loss = F.cross_entropy(net(x_tr), c_tr)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return (net(x_te).argmax(-1) == c_te).float().numpy()


def probe_with_control(x_tr: Any, y_tr: Any, types_tr: Any, x_te: Any, y_te: Any, types_te: Any, *,
                       seed: int = 0, **probe: Any) -> dict[str, np.ndarray]:
    """The MLP probe on the real labels and on the control task (labels a fixed random function of the type, one
    map for train and test), per test state: ``{"probe": (N_te,), "control": (N_te,)}``; selectivity is the
    difference of their means."""
    types = np.concatenate([np.asarray(types_tr), np.asarray(types_te)])
    labels = np.concatenate([np.asarray(y_tr), np.asarray(y_te)])
    ctrl = control_labels(types, labels, seed=10_000 + seed)
    n = len(np.asarray(y_tr))
    return {"probe": mlp_probe(x_tr, y_tr, x_te, y_te, seed=seed, **probe),
            "control": mlp_probe(x_tr, ctrl[:n], x_te, ctrl[n:], seed=seed, **probe)}


@torch.no_grad()
def unembed_stats(vectors: Any, unembed: Unembed, domains: list[Any] | None = None,
                  top_k: int = TOP_K) -> dict[str, np.ndarray]:
    """Each vector through the unembedding: ``entropy`` of ``softmax(unembed(v))`` over log V (1 = uniform),
    ``top`` its top-k token ids, and with ``domains`` (one id list per vector, the task's output tokens)
    ``coherence`` (share of the top-k inside the domain) and ``domain_mass`` (probability mass on the domain)."""
    v = _states(vectors, "vectors")
    p = unembed(v).softmax(-1)
    vocab = p.shape[-1]
    ent = -(p * p.clamp(min=1e-30).log()).sum(-1) / math.log(vocab)
    k = min(int(top_k), vocab)
    top = p.topk(k, dim=-1).indices
    out = {"entropy": ent.numpy(), "top": top.numpy()}
    if domains is not None:
        if len(domains) != len(v):
            raise ValueError(f"domains must hold one token-id list per vector ({len(v)}), got {len(domains)}")
        coh, mass = [], []
        for i, dom in enumerate(domains):
            dom = torch.as_tensor(np.asarray(dom)).long()
            if dom.numel() == 0 or int(dom.min()) < 0 or int(dom.max()) >= vocab:
                raise ValueError(f"domain {i} must be token ids in 0..{vocab - 1}")
            coh.append(float(torch.isin(top[i], dom).float().mean()))
            mass.append(float(p[i, dom].sum()))
        out["coherence"], out["domain_mass"] = np.array(coh), np.array(mass)
    return out


def contingency(steerable: Any, decodable: Any) -> dict[str, int]:
    """The steerable x decodable table over cells (any equal-shape boolean arrays): counts of the four cells and
    the total; they add up to the number of cells."""
    s, d = np.asarray(steerable, bool), np.asarray(decodable, bool)
    if s.shape != d.shape:
        raise ValueError(f"steerable and decodable must have the same shape (one flag per cell), got {s.shape} and "
                         f"{d.shape}")
    return {"steerable_decodable": int((s & d).sum()), "steerable_not_decodable": int((s & ~d).sum()),
            "decodable_not_steerable": int((~s & d).sum()), "neither": int((~s & ~d).sum()), "cells": int(s.size)}


def pearson(a: Any, b: Any) -> float:
    """Pearson r of two equal-length vectors (NaN when either is constant)."""
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if a.shape != b.shape or len(a) < 2:
        raise ValueError(f"pearson needs two equal-length vectors of >= 2 values, got {a.shape} and {b.shape}")
    a, b = a - a.mean(), b - b.mean()
    den = math.sqrt(float((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 0 else float("nan")
