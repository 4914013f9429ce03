"""The ``steer-decode`` analysis tool: per layer of an ``ActivationSet`` (labelled states; tokens mean-pooled), how
decodable the label is (logit lens and diagonal tuned lens when an unembedding is given, a 2-layer MLP probe with a
Hewitt & Liang control task always), and with ``steer_gain`` the steerable x decodable contingency over the layers;
with ``vectors`` (steering vectors, e.g. function vectors) their token distributions through the unembedding.

    zoo.analyze("steer-decode", {"L1": h1, "L2": h2}, labels=answers, unembed=W_U, steer_gain={"L1": 0.3, "L2": 0.0})
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

MIN_SAMPLES = 10



def _int_labels(labels: Any) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or not (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.bool_)):
        raise ValueError(f"steer-decode needs integer class labels (N,) (the answer token ids when unembed= is "
                         f"given), got {y.dtype} {y.shape}")
    return y.astype(np.int64)


def _types(acts: Any, types: Any, n: int) -> np.ndarray:
    if types is None:
        return np.asarray(acts.concepts["type"]) if "type" in acts.concepts else np.arange(n)
    if isinstance(types, str):
        if types not in acts.concepts:
            raise ValueError(f"types={types!r} names no concept of this ActivationSet (it has {sorted(acts.concepts)})")
        return np.asarray(acts.concepts[types])
    t = np.asarray(types)
    if t.shape != (n,):
        raise ValueError(f"types must be ({n},): one type per input (H&L's control label is a function of it)")
    return t


def _gains(steer_gain: Any, names: list[str]) -> np.ndarray:
    if isinstance(steer_gain, Mapping):
        missing = [n for n in names if n not in steer_gain]
        if missing:
            raise ValueError(f"steer_gain has no value for layers {missing}: give one gain per analysed layer")
        vals = [steer_gain[n] for n in names]
    else:
        vals = list(np.ravel(np.asarray(steer_gain, dtype=float)))
        if len(vals) != len(names):
            raise ValueError(f"steer_gain holds {len(vals)} values for {len(names)} layers: one per analysed layer")
    out = np.asarray(vals, dtype=float)
    if not np.isfinite(out).all():
        raise ValueError("steer_gain holds NaN/inf values")
    return out


def steer_decode_tool(acts: Any, *, layers: Any = None, unembed: Any = None, unembed_bias: Any = None,
                      layer_norm: bool = False, types: Any = None, test_frac: float = 0.5, hidden: int = 64,
                      steps: int = 300, lens_steps: int = 200, seed: int = 0, steer_gain: Any = None,
                      steer_threshold: float | None = None, decode_threshold: float | None = None,
                      vectors: Any = None, domains: Any = None, top_k: int = 5, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: ``probe``, ``control``, ``selectivity`` (and ``logit_lens``, ``tuned_lens`` with ``unembed``
    (V, D)), each a held-out accuracy; ``decodable`` (the logit lens with an unembedding, else the probe with
    selectivity >= 0.1, at ``decode_threshold``). ``steer_gain`` (one per layer) adds ``contingency``;
    ``vectors`` (K, D) with ``unembed`` adds ``vectors``: entropy (and ``coherence`` with ``domains``, one token-id
    list per vector) of their unembedded distributions."""
    import torch

    from .decode import (
        DECODE_THRESHOLD,
        STEER_THRESHOLD,
        contingency,
        diagonal_lens_accuracy,
        fit_diagonal_lens,
        logit_lens_accuracy,
        matrix_unembed,
        probe_with_control,
        unembed_stats,
    )

    st = STEER_THRESHOLD if steer_threshold is None else float(steer_threshold)
    dt = DECODE_THRESHOLD if decode_threshold is None else float(decode_threshold)
    if not 0.0 < float(test_frac) < 1.0:
        raise ValueError(f"test_frac must be in (0, 1), got {test_frac}")
    names = acts.select(layers)
    if acts.labels is None:
        raise ValueError("steer-decode needs labels (the answer of each input): pass labels= to zoo.analyze")
    y = _int_labels(acts.labels)
    typ = _types(acts, types, len(y))
    u = None if unembed is None else matrix_unembed(unembed, unembed_bias, layer_norm=bool(layer_norm))
    if u is not None:
        vocab = np.asarray(unembed).shape[0]
        if y.min() < 0 or y.max() >= vocab:
            raise ValueError(f"with unembed= the labels are token ids in 0..{vocab - 1}; got {y.min()}..{y.max()}")
    gains = None if steer_gain is None else _gains(steer_gain, names)
    if vectors is not None and u is None:
        raise ValueError("vectors= are read through the unembedding: pass unembed= (V, D) too")
    if u is not None:
        d_u = np.asarray(unembed).shape[1]
        bad = {n: acts[n].shape[-1] for n in names if acts[n].shape[-1] != d_u}
        if bad:
            raise ValueError(f"layers {bad} have a width D other than unembed's D = {d_u}: they must match")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_te = max(1, int(round(len(y) * float(test_frac))))
    te, tr = order[:n_te], order[n_te:]
    out: dict[str, Any] = {"layers": {}, "steer_threshold": st, "decode_threshold": dt, "n_train": len(tr),
                           "n_test": len(te)}
    with torch.no_grad():
        for name in names:
            x = acts.matrix(name, min_samples=MIN_SAMPLES, needs_labels=True)
            pc = probe_with_control(x[tr], y[tr], typ[tr], x[te], y[te], typ[te], seed=seed, hidden=int(hidden),
                                    steps=int(steps))
            row = {"probe": float(pc["probe"].mean()), "control": float(pc["control"].mean())}
            row["selectivity"] = row["probe"] - row["control"]
            if u is not None:
                row["logit_lens"] = float(logit_lens_accuracy(x[te], y[te], u).mean())
                a, b = fit_diagonal_lens(x[tr], y[tr], u, steps=int(lens_steps), seed=seed)
                row["tuned_lens"] = float(diagonal_lens_accuracy(x[te], y[te], u, a, b).mean())
                row["decodable"] = row["logit_lens"] >= dt
            else:
                row["decodable"] = row["probe"] >= dt and row["selectivity"] >= 0.1
            out["layers"][name] = row
    if gains is not None:
        dec = np.array([out["layers"][n]["decodable"] for n in names])
        for n, g in zip(names, gains, strict=True):
            out["layers"][n]["steer_gain"] = float(g)
            out["layers"][n]["steerable"] = bool(g > st)
        out["contingency"] = contingency(gains > st, dec)
    if vectors is not None:
        stats = unembed_stats(vectors, u, None if domains is None else list(domains), top_k=int(top_k))
        out["vectors"] = {k: np.asarray(v).tolist() for k, v in stats.items()}
    if out_dir is not None:
        out["artifacts"] = {"steer_decode": _plot(out, os.path.join(out_dir, "steer_decode.png"))}
    return out


def _plot(out: dict[str, Any], path: str) -> str:
    plt = pyplot()
    names = list(out["layers"])
    fig, ax = plt.subplots(figsize=(max(3.5, 0.9 * len(names) + 2), 3.2))
    for key in ("logit_lens", "tuned_lens", "probe", "control", "steer_gain"):
        vals = [out["layers"][n].get(key) for n in names]
        if all(v is not None for v in vals):
            ax.plot(range(len(names)), vals, "o-", label=key, lw=1)
    ax.axhline(out["decode_threshold"], color="k", ls=":", lw=0.8)
    ax.set_xticks(range(len(names)), names, rotation=30, fontsize=7)
    ax.set_ylabel("held-out accuracy / gain")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["steer_decode_tool"]
