"""The ``ideal-words`` analysis tool. A layer is read either as an embedding table (|A|, |O|, D) (a 3-D array given
without labels: ``zoo.analyze("ideal-words", {"T": table})``) or as N samples (N, D) with an attribute and an object
label each: labels (N, 2), a concept (N, k >= 2) array, two named concepts (``factors=("colour", "shape")``), or
single labels l split as (l // n_objects, l % n_objects) with ``n_objects=`` (what ``zoo analyze`` passes)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from . import iw


def _labels(acts: Any, factors: Any, n_objects: int | None) -> tuple[np.ndarray, np.ndarray] | None:
    if factors is not None:
        names = [factors] if isinstance(factors, str) else list(factors)
        if len(names) != 2 or any(f not in acts.concepts for f in names):
            raise ValueError(f"factors= names two concepts of the set (attribute, object); it has "
                             f"{sorted(acts.concepts)}")
        return np.asarray(acts.concepts[names[0]]).ravel(), np.asarray(acts.concepts[names[1]]).ravel()
    for arr in [*acts.concepts.values(), acts.labels]:
        if arr is not None and np.asarray(arr).ndim == 2 and np.asarray(arr).shape[1] >= 2:
            arr = np.asarray(arr)
            return arr[:, 0], arr[:, 1]
    if acts.labels is not None:
        lab = np.asarray(acts.labels).ravel().astype(np.int64)
        if n_objects is None:
            raise ValueError("single labels need n_objects= to be read as pairs (label // n_objects, label % "
                             "n_objects); or pass labels (N, 2) = (attribute, object)")
        if int(n_objects) < 2:
            raise ValueError(f"n_objects must be >= 2, got {n_objects}")
        return lab // int(n_objects), lab % int(n_objects)
    return None


def ideal_words_tool(acts: Any, *, layers: Any = None, factors: Any = None, n_objects: int | None = None,
                     normalize: bool = True, seed: int = 0, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: the ideal words' reconstruction of the pair table, their factor orthogonality and, from samples,
    pair classification (real means vs composed words), leave-one-pair-out unseen-pair classification, attribute
    removal (debiasing) and attribute-edit retrieval on a held-out half."""
    out: dict[str, Any] = {"layers": {}}
    labels = _labels(acts, factors, n_objects)
    tables = {}
    for name in acts.select(layers):
        raw = acts[name]
        if labels is None:
            if raw.ndim != 3:
                raise ValueError(f"layer {name!r} is {raw.shape}: without labels a layer must be an embedding table "
                                 "(|A|, |O|, D); with samples pass labels (N, 2) or n_objects=")
            table = iw.unit(raw.astype(np.float64)) if normalize else raw.astype(np.float64)
            if not np.isfinite(table).all():
                raise ValueError(f"layer {name!r} holds NaN/inf values")
            res = _table_stats(table)
        else:
            x = acts.matrix(name, min_samples=8)
            res, table = _sample_stats(x, *labels, normalize=normalize, seed=seed, name=name)
        tables[name] = table
        out["layers"][name] = res
    if out_dir is not None:
        out["artifacts"] = {"ideal_words": _plot(tables, os.path.join(out_dir, "ideal_words.png"))}
    return out


def _table_stats(table: np.ndarray) -> dict[str, Any]:
    words = iw.ideal_words(table)
    ang = iw.factor_angles(words)
    return {"n_attributes": table.shape[0], "n_objects": table.shape[1], "dim": table.shape[2],
            **iw.reconstruction(table, words), "principal_angles": ang["angles"], "min_angle": ang["min_angle"],
            "mean_cos2": ang["mean_cos2"]}


def _sample_stats(x, a, o, *, normalize: bool, seed: int, name: str) -> tuple[dict[str, Any], np.ndarray]:
    a, o = np.asarray(a).astype(np.int64), np.asarray(o).astype(np.int64)
    n_a, n_o = int(a.max()) + 1, int(o.max()) + 1
    xs = iw.unit(x) if normalize else x
    perm = np.random.default_rng(seed).permutation(len(x))
    fit, test = perm[: len(x) // 2], perm[len(x) // 2:]
    table, mask = iw.pair_table(xs[fit], a[fit], o[fit], n_a=n_a, n_o=n_o, normalize=False)
    if not mask.all():
        missing = [(int(i), int(j)) for i, j in zip(*np.nonzero(~mask), strict=True)]
        raise ValueError(f"layer {name!r}: pairs {missing[:6]} have no samples in the fitting half; ideal-word "
                         "statistics need every (attribute, object) pair (give more samples)")
    res = _table_stats(table)
    xt, at, ot = xs[test], a[test], o[test]
    cls = iw.classify_pairs(xt, at, ot, table)
    uns = iw.unseen_pairs(xt, at, ot, table)
    deb = iw.debias(xs[fit], a[fit], o[fit], xt, at, ot, table, seed=seed)
    ret = iw.retrieval(xt, at, ot, table, max_queries=200, seed=seed)
    res.update({"n_samples": len(x), **cls, **{f"unseen_{k}": v for k, v in uns.items()},
                **{f"debias_{k}": v for k, v in deb.items()}, **{f"retrieval_{k}": v for k, v in ret.items()}})
    return res, table


def _plot(tables: dict[str, np.ndarray], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(tables), figsize=(3.6 * len(tables), 3.4), squeeze=False)
    for ax, (name, t) in zip(axes[0], tables.items(), strict=False):
        comp = iw.compose(iw.ideal_words(t))
        cos = (iw.unit(t) * iw.unit(comp)).sum(-1)
        im = ax.imshow(cos, vmin=min(0.0, float(cos.min())), vmax=1.0, cmap="viridis")
        ax.set_xlabel("object")
        ax.set_ylabel("attribute")
        ax.set_title(f"{name}: cos(u, u0+ua+uo)", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    return save_figure(fig, path)


__all__ = ["ideal_words_tool"]
