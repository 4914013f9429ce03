"""Token- and layer-level propagation statistics (catalog 64, "Representation propagation in SSMs vs Transformers").

Only the paper's abstract and the catalog entry could be read here; the definitions are this plugin's reading of them:

- **token homogenization** of a layer (B, T, D): per sequence the mean cosine over the T(T-1) ordered pairs of
  distinct tokens, averaged over the B sequences (1: every token the same direction; about 0: unrelated tokens).
  Computed exactly as ``(||sum_t u_t||^2 - T) / (T (T - 1))`` with unit rows ``u_t``.
- **layerwise CKA**: linear CKA (``zoo_task_rep_metrics.similarity.linear_cka``) between every pair of layers, tokens
  as samples (B*T rows, a seeded subsample of at most ``max_rows``); two models' layers in one set give the
  across-model block.
- **stability under input perturbation**: one character per sequence (at a seeded position in the first half) is
  replaced by another; per layer, the mean cosine between clean and perturbed token states at the positions after
  it (1: the perturbation left no trace).
- **per-layer linear probe**: ridge regression from a layer's token states to the one-hot current character,
  accuracy on held-out sequences (how much token identity the layer keeps).
- **randomized-parameter control**: the same statistics on the model at its random initialisation (``trained(kind,
  seed, steps=0)``): what the architecture does before any training.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def _tokens(h: Any, what: str = "hidden states") -> np.ndarray:
    x = np.asarray(h.detach().cpu().numpy() if hasattr(h, "detach") else h, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"{what} has shape {x.shape}: token statistics need (B, T, D) arrays (sequences, tokens, "
                         "features); keep the tokens (pool=None)")
    if x.shape[1] < 2:
        raise ValueError(f"{what} has T = {x.shape[1]} tokens per sequence; token homogenization needs T >= 2")
    if not np.isfinite(x).all():
        raise ValueError(f"{what} holds NaN/inf values; fix the model or drop those sequences before measuring")
    return x


def token_homogenization(h: Any, *, per_sequence: bool = False) -> float | np.ndarray:
    """Mean pairwise cosine between distinct tokens of each sequence of ``h`` (B, T, D), averaged over sequences.

    >>> round(float(token_homogenization(np.ones((2, 5, 3)))), 6)
    1.0
    """
    x = _tokens(h)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    u = x / np.maximum(n, 1e-12)
    t = x.shape[1]
    s = (np.square(u.sum(1)).sum(-1) - np.square(u).sum((1, 2))) / (t * (t - 1))
    return s if per_sequence else float(s.mean())


def _rows(x: np.ndarray, max_rows: int | None, seed: int) -> np.ndarray:
    flat = x.reshape(-1, x.shape[-1]) if x.ndim == 3 else x
    if max_rows is not None and len(flat) > max_rows:
        idx = np.sort(np.random.default_rng(seed).choice(len(flat), max_rows, replace=False))
        flat = flat[idx]
    return flat


def cka_matrix(layers: Mapping[str, Any], *, max_rows: int | None = 2000, seed: int = 0) -> np.ndarray:
    """Linear CKA between every pair of ``layers`` (each (B, T, D) or (N, D), same samples), tokens as samples."""
    from zoo_task_rep_metrics.similarity import linear_cka

    names = list(layers)
    shapes = {k: np.shape(v)[:-1] for k, v in layers.items()}
    if len(set(shapes.values())) != 1:
        raise ValueError(f"CKA compares the same samples: every layer needs the same leading shape, got {shapes}")
    mats = [_rows(np.asarray(layers[k], dtype=np.float64), max_rows, seed) for k in names]
    out = np.eye(len(names))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            out[i, j] = out[j, i] = linear_cka(mats[i], mats[j])
    return out


def profile(h: Sequence[Any]) -> dict[str, float]:
    """Summary of a homogenization profile over depth (one value per block, in order): mean, early (first half of
    the blocks), deep (second half), last, peak depth (argmax index / (L - 1)) and regain (peak - last)."""
    v = np.asarray(h, dtype=np.float64)
    if v.ndim != 1 or len(v) < 2:
        raise ValueError(f"a depth profile needs one value per layer for >= 2 layers, got shape {v.shape}")
    half = len(v) // 2
    k = int(np.argmax(v))
    return {"hom_mean": float(v.mean()), "hom_early": float(v[:half].mean()), "hom_deep": float(v[half:].mean()),
            "hom_last": float(v[-1]), "peak_depth": k / (len(v) - 1), "regain": float(v[k] - v[-1])}


# --- model callables -------------------------------------------------------------------------------------------


def block_states(model: Any, ids: Any, *, batch_size: int = 64) -> dict[str, np.ndarray]:
    """Residual stream after every block (``blocks.0`` ... ``blocks.{L-1}``) of a GPT-shaped model on ``ids``."""
    import zoo

    names = [f"blocks.{i}" for i in range(len(model.blocks))]
    acts = zoo.activations(model, ids, layers=names, batch_size=batch_size)
    return {k: acts[k] for k in names}


def perturbation_stability(model: Any, ids: Any, *, seed: int = 0, vocab_size: int | None = None) -> dict[str, float]:
    """Per block: mean cosine between clean and perturbed token states after one replaced character per sequence."""
    import torch

    ids = torch.as_tensor(ids)
    b, t = ids.shape
    vocab = int(vocab_size or getattr(model, "vocab_size", int(ids.max()) + 1))
    g = torch.Generator().manual_seed(int(seed))
    pos = torch.randint(0, max(1, t // 2), (b,), generator=g)
    shift = torch.randint(1, vocab, (b,), generator=g)
    bad = ids.clone()
    bad[torch.arange(b), pos] = (ids[torch.arange(b), pos] + shift) % vocab
    clean, pert = block_states(model, ids), block_states(model, bad)
    after = (np.arange(t)[None, :] > pos.numpy()[:, None])
    out = {}
    for k in clean:
        a, p = clean[k].astype(np.float64), pert[k].astype(np.float64)
        cos = (a * p).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(p, axis=-1), 1e-12)
        out[k] = float(cos[after].mean())
    return out


def probe_accuracy(train_states: np.ndarray, train_ids: Any, test_states: np.ndarray, test_ids: Any, *,
                   vocab_size: int = 97, ridge: float = 1e-2) -> float:
    """Ridge probe (closed form, on standardised features) from token states to the one-hot current character;
    accuracy of its argmax on the test tokens."""
    xtr, xte = _tokens(train_states).reshape(-1, train_states.shape[-1]), _tokens(test_states).reshape(
        -1, test_states.shape[-1])
    ytr, yte = np.asarray(train_ids).reshape(-1), np.asarray(test_ids).reshape(-1)
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-8
    a, c = (xtr - mu) / sd, (xte - mu) / sd
    a, c = np.c_[a, np.ones(len(a))], np.c_[c, np.ones(len(c))]
    y = np.eye(vocab_size)[ytr]
    w = np.linalg.solve(a.T @ a + ridge * len(a) * np.eye(a.shape[1]), a.T @ y)
    return float(((c @ w).argmax(1) == yte).mean())


def analyse(model: Any, ids: Any, probe_ids: Any | None = None, *, seed: int = 0) -> dict[str, Any]:
    """Everything for one model: homogenization per block and its profile, CKA between blocks, perturbation
    stability per block and (with ``probe_ids``, other sequences to fit the probe on) probe accuracy per block."""
    states = block_states(model, ids)
    hom = [token_homogenization(v) for v in states.values()]
    out: dict[str, Any] = {"homogenization": hom, **profile(hom), "cka": cka_matrix(states, seed=seed),
                           "stability": list(perturbation_stability(model, ids, seed=seed).values())}
    if probe_ids is not None:
        fit = block_states(model, probe_ids)
        vocab = int(getattr(model, "vocab_size", 97))
        out["probe"] = [probe_accuracy(fit[k], probe_ids, states[k], ids, vocab_size=vocab) for k in states]
    return out


__all__ = ["token_homogenization", "cka_matrix", "profile", "block_states", "perturbation_stability",
           "probe_accuracy", "analyse"]
