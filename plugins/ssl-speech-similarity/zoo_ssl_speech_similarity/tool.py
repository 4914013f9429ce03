"""The tools ``neuron_alignment`` and ``layer_similarity``: inter- and intra-model similarity of ActivationSets.

Inputs (the same N inputs everywhere, in the same order):

- ``{model: ActivationSet}`` (or ``{model: {layer: (N, D)}}``): every pair of models is compared;
- one ``ActivationSet`` and ``other=`` a second one: the two are compared (models "a" and "b");
- one ``ActivationSet`` whose layers are named ``"model/layer"`` (``zoo.analyze(tool, {"a/fc1": X, "b/fc1": Y})``):
  grouped by the part before the first "/";
- one ``ActivationSet`` of plain layer names (``zoo analyze TOOL MODEL``): intra-model, its layers against each other.

``layers=`` keeps only those layer names (after the "model/" prefix). Layer pairs: ``matched`` (same name on both
sides; the default between models) or ``all`` (every layer against every layer; the default within one model).
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zoo.activations import ActivationSet
from zoo.figures import pyplot, save_figure

from .similarity import METHODS, MIN_SAMPLES, layer_matrix, neuron_alignment_pair


def _as_set(value: Any, what: str) -> ActivationSet:
    if isinstance(value, ActivationSet):
        return value
    if isinstance(value, Mapping):
        return ActivationSet.from_arrays(dict(value))
    raise ValueError(f"{what} must be an ActivationSet or a dict of layer -> (N, D) array, not {type(value).__name__}")


def models_of(acts: Any, other: Any = None, *, layers: Sequence[str] | None = None,
              min_samples: int = 3) -> dict[str, dict[str, np.ndarray]]:
    """``{model: {layer: (N, D) float64}}`` from any accepted input (module docstring), validated: the same N
    everywhere, finite, at least ``min_samples`` inputs; tokens mean-pooled."""
    if other is not None:
        groups = {"a": _as_set(acts, "acts"), "b": _as_set(other, "other")}
    elif isinstance(acts, Mapping) and acts and all(isinstance(v, (ActivationSet, Mapping)) for v in acts.values()):
        groups = {str(k): _as_set(v, f"model {k!r}") for k, v in acts.items()}
    else:
        s = _as_set(acts, "acts")
        if all("/" in n for n in s.names):
            split: dict[str, dict[str, np.ndarray]] = {}
            for n in s.names:
                m, layer = n.split("/", 1)
                split.setdefault(m, {})[layer] = s[n]
            groups = {m: ActivationSet(v, s.labels) for m, v in split.items()}
        else:
            groups = {str(s.meta.get("model") or "model"): s}
    out: dict[str, dict[str, np.ndarray]] = {}
    for m, s in groups.items():
        names = [n for n in s.names if layers is None or n in layers]
        if not names:
            raise ValueError(f"model {m!r} has none of the layers {list(layers or [])}; it has {s.names}")
        out[m] = {n: s.matrix(n, min_samples=min_samples) for n in names}
    counts = {m: next(iter(v.values())).shape[0] for m, v in out.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"every model must be recorded on the same inputs; got N = {counts}")
    return out


def _pairs(models: dict[str, dict[str, np.ndarray]], pairs: str | None) -> list[tuple[str, str, str, str]]:
    """(model_a, layer_a, model_b, layer_b) to compare."""
    names = list(models)
    mode = pairs or ("all" if len(names) == 1 else "matched")
    if mode not in ("matched", "all"):
        raise ValueError(f"pairs must be 'matched' or 'all', not {pairs!r}")
    model_pairs = [(names[0], names[0])] if len(names) == 1 else list(itertools.combinations(names, 2))
    out = []
    for ma, mb in model_pairs:
        la, lb = list(models[ma]), list(models[mb])
        if mode == "matched":
            common = [n for n in la if n in lb]
            if not common:
                raise ValueError(f"models {ma!r} and {mb!r} share no layer name ({la} vs {lb}): pass pairs='all'")
            out += [(ma, n, mb, n) for n in common]
        else:
            out += [(ma, x, mb, y) for x in la for y in lb if not (ma == mb and x == y)]
    return out


def neuron_alignment(acts: Any, *, other: Any = None, layers: Sequence[str] | None = None, pairs: str | None = None,
                     threshold: float = 0.9, out_dir: str | None = None, labels: Any = None) -> dict[str, Any]:
    """Per-neuron max |correlation| between models' layers (the paper's neuron-level similarity).

    Returns ``{"pairs": {"<ma>:<la>|<mb>:<lb>": {maxcorr, maxcorr_xy, maxcorr_yx, median_xy, matched_xy,
    matched_yx, dead_x, dead_y}}, "maxcorr": mean over the compared pairs, "matched": mean fraction of neurons with a
    partner at |r| >= threshold}``; a histogram PNG of the best correlations under ``artifacts`` with ``out_dir``.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold is a correlation in (0, 1], got {threshold}")
    models = models_of(acts, other, layers=layers, min_samples=3)
    res: dict[str, dict[str, float]] = {}
    for ma, la, mb, lb in _pairs(models, pairs):
        res[f"{ma}:{la}|{mb}:{lb}"] = neuron_alignment_pair(models[ma][la], models[mb][lb], threshold)
    out: dict[str, Any] = {"pairs": res, "maxcorr": float(np.mean([r["maxcorr"] for r in res.values()])),
                           "matched": float(np.mean([(r["matched_xy"] + r["matched_yx"]) / 2 for r in res.values()])),
                           "threshold": threshold}
    if out_dir is not None:
        out["artifacts"] = {"maxcorr": _bar(res, os.path.join(out_dir, "neuron_alignment.png"))}
    return out


def layer_similarity(acts: Any, *, other: Any = None, method: str = "linear_cka", layers: Sequence[str] | None = None,
                     k: int | None = None, out_dir: str | None = None, labels: Any = None) -> dict[str, Any]:
    """Layer x layer similarity matrices between models (or within one): ``method`` one of linear_cka, debiased_cka,
    rbf_cka, cca (mean canonical correlation), svcca (``k`` principal components first), rsa.

    Returns ``{"method", "matrices": {"<ma>|<mb>": {"rows": layers of ma, "cols": layers of mb, "matrix": [[...]],
    "diagonal": {layer: value} for matched names}}, "diagonal_mean": mean over matched layers (None if none)}``; a
    heatmap PNG per model pair under ``artifacts`` with ``out_dir``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {list(METHODS)}")
    models = models_of(acts, other, layers=layers, min_samples=MIN_SAMPLES[method])
    names = list(models)
    model_pairs = [(names[0], names[0])] if len(names) == 1 else list(itertools.combinations(names, 2))
    mats: dict[str, Any] = {}
    diag_all: list[float] = []
    artifacts: dict[str, str] = {}
    for ma, mb in model_pairs:
        m = layer_matrix(models[ma], models[mb], method, k=k) if method == "svcca" else \
            layer_matrix(models[ma], models[mb], method)
        rows, cols = list(models[ma]), list(models[mb])
        diag = {n: float(m[rows.index(n), cols.index(n)]) for n in rows if n in cols} if ma != mb else {}
        diag_all += list(diag.values())
        key = f"{ma}|{mb}"
        mats[key] = {"rows": rows, "cols": cols, "matrix": m, "diagonal": diag}
        if out_dir is not None:
            safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
            artifacts[key] = _heatmap(m, rows, cols, ma, mb, method,
                                      os.path.join(out_dir, f"layer_similarity_{safe}.png"))
    out: dict[str, Any] = {"method": method, "matrices": mats,
                           "diagonal_mean": float(np.mean(diag_all)) if diag_all else None}
    if artifacts:
        out["artifacts"] = artifacts
    return out


def _heatmap(m: np.ndarray, rows: list[str], cols: list[str], ma: str, mb: str, method: str, path: str) -> str:
    plt = pyplot()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * len(cols), 1.0 + 0.5 * len(rows)))
    im = ax.imshow(m, vmin=min(0.0, float(m.min())), vmax=1.0, cmap="viridis")
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(mb)
    ax.set_ylabel(ma)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7, color="w" if m[i, j] < 0.6 else "k")
    fig.colorbar(im, ax=ax, label=method)
    return save_figure(fig, path, dpi=110)


def _bar(res: dict[str, dict[str, float]], path: str) -> str:
    plt = pyplot()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    keys = list(res)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(keys) + 2), 3.2))
    ax.bar(range(len(keys)), [res[k]["maxcorr"] for k in keys], label="mean max |r|")
    ax.bar(range(len(keys)), [(res[k]["matched_xy"] + res[k]["matched_yx"]) / 2 for k in keys], width=0.4,
           label="fraction matched")
    ax.set_xticks(range(len(keys)), keys, rotation=45, ha="right", fontsize=7)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    return save_figure(fig, path, dpi=110)
