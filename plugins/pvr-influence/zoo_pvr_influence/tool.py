"""The ``boolean-influence``, ``noise-stability`` and ``canonical-holdout`` tools on an ``ActivationSet`` holding
Boolean inputs ``x`` (N, n) and outputs ``y``: ``zoo.analyze("boolean-influence", {"x": X, "y": Y})`` on raw arrays, or a
model's recorded input and output layers (``binarize=True`` turns real inputs, e.g. pixels, into +-1 about each feature's
median; then only the low-degree Fourier estimate applies, since the flipped inputs are not in the data).
"""
from __future__ import annotations

import os
from itertools import combinations
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .boolean import EXACT_LIMIT, fourier


def _xy(acts: Any, x: str, y: str, unit: int, binarize: bool) -> tuple[np.ndarray, np.ndarray]:
    for name in (x, y):
        if name not in acts.names:
            raise ValueError(f"this tool needs layers {x!r} (Boolean inputs) and {y!r} (outputs); the set has "
                             f"{list(acts.names)}: pass x=, y= with the layer names")
    xs = acts.matrix(x, min_samples=2, pool="flatten")
    ys = acts.matrix(y, min_samples=2, pool="flatten")
    if not 0 <= unit < ys.shape[1]:
        raise ValueError(f"unit={unit} is outside layer {y!r}'s {ys.shape[1]} columns")
    if binarize:
        xs = np.where(xs > np.median(xs, axis=0), 1.0, -1.0)
    elif not np.isin(xs, (-1.0, 1.0)).all():
        raise ValueError(f"layer {x!r} must hold +-1 values (Boolean inputs); pass binarize=True to threshold real "
                         "inputs at each feature's median")
    return xs, ys[:, unit]


def _codes(xs: np.ndarray) -> np.ndarray:
    return (((1 - xs) / 2).astype(np.int64) << np.arange(xs.shape[1])).sum(1)


def _table(xs: np.ndarray, ys: np.ndarray) -> np.ndarray | None:
    """f on the whole cube (mean over repeated rows) when every point of {-1, +1}^n is present, else None."""
    n = xs.shape[1]
    if n > EXACT_LIMIT or len(xs) < 2**n:
        return None
    codes = _codes(xs)
    counts = np.bincount(codes, minlength=2**n)
    if (counts == 0).any():
        return None
    return np.bincount(codes, weights=ys, minlength=2**n) / counts


def _subsets(n: int, degree: int) -> list[tuple[int, ...]]:
    return [s for d in range(degree + 1) for s in combinations(range(n), d)]


def _fourier_fit(xs: np.ndarray, ys: np.ndarray, degree: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    # a bit that never varies in the data (a pixel that is always 0) has no measurable influence: its characters
    # would only duplicate the lower-degree ones, so they are left out of the fit (coefficient 0)
    varying = [i for i in range(xs.shape[1]) if np.ptp(xs[:, i]) > 0]
    subsets = [tuple(varying[j] for j in s) for s in _subsets(len(varying), degree)]
    if len(xs) <= len(subsets):
        raise ValueError(f"a degree-{degree} Fourier fit over {xs.shape[1]} bits has {len(subsets)} coefficients and "
                         f"needs more than that many inputs (got {len(xs)}); pass more inputs or a lower degree=")
    feats = np.stack([np.prod(xs[:, list(s)], axis=1) if s else np.ones(len(xs)) for s in subsets], axis=1)
    coef, *_ = np.linalg.lstsq(feats, ys, rcond=None)
    return subsets, coef


def influence_tool(acts: Any, *, x: str = "x", y: str = "y", unit: int = 0, binarize: bool = False,
                   method: str = "auto", degree: int = 1, out_dir: str | None = None) -> dict[str, Any]:
    """Inf_i of output ``y`` (column ``unit``) for every input bit of ``x``: exact when the rows cover the cube,
    from the rows whose bit-i flip is present (``pairs``), or from a least-squares Fourier fit up to ``degree``."""
    if method not in ("auto", "exact", "pairs", "fourier"):
        raise ValueError(f"method must be auto, exact, pairs or fourier (got {method!r})")
    xs, ys = _xy(acts, x, y, unit, binarize)
    n = xs.shape[1]
    table = _table(xs, ys) if method in ("auto", "exact") else None
    if method == "exact" and table is None:
        raise ValueError(f"method='exact' needs every one of the 2^{n} points of the cube among the inputs (n <= 16)")
    out: dict[str, Any] = {"n": n, "rows": len(xs)}
    inf: list[float] | None = None
    if table is not None:
        idx = np.arange(2**n)
        inf = [float(np.mean((table - table[idx ^ (1 << i)]) ** 2) / 4) for i in range(n)]
        out["method"] = "exact"
    elif method in ("auto", "pairs") and not binarize and n <= 62:  # rows as int64 bit codes
        codes, means = _group_mean(_codes(xs), ys)
        mean_y = dict(zip(codes.tolist(), means.tolist(), strict=True))
        diffs = [[(v - mean_y[c ^ (1 << i)]) ** 2 / 4 for c, v in mean_y.items() if c ^ (1 << i) in mean_y]
                 for i in range(n)]
        if all(diffs):
            inf = [float(np.mean(d)) for d in diffs]
            out.update(method="pairs", pairs=[len(d) for d in diffs])
        elif method == "pairs":
            raise ValueError("method='pairs' needs, for every bit, some input whose copy with that bit flipped is also "
                             "present; use method='fourier'")
    if inf is None:
        subsets, coef = _fourier_fit(xs, ys, degree)
        inf = [float(sum(c**2 for s, c in zip(subsets, coef, strict=True) if i in s)) for i in range(n)]
        out.update(method="fourier", degree=degree)
    out["influence"] = inf
    out["total_influence"] = float(np.sum(inf))
    if out_dir is not None:
        out["artifacts"] = {"influence": _plot(inf, os.path.join(out_dir, "boolean_influence.png"))}
    return out


def _group_mean(codes: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inv = np.unique(codes, return_inverse=True)
    return uniq, np.bincount(inv, weights=ys) / np.bincount(inv)


def stability_tool(acts: Any, *, x: str = "x", y: str = "y", unit: int = 0, binarize: bool = False,
                   rho: Any = (0.5, 0.9), degree: int = 2) -> dict[str, Any]:
    """Stab_rho of output ``y`` over inputs ``x``: exact Fourier weights when the rows cover the cube, else a
    least-squares Fourier fit up to ``degree`` (a low-degree estimate)."""
    rhos = [float(r) for r in (rho if isinstance(rho, list | tuple) else [rho])]
    if any(not -1 <= r <= 1 for r in rhos):
        raise ValueError(f"rho must lie in [-1, 1] (got {rhos})")
    xs, ys = _xy(acts, x, y, unit, binarize)
    n = xs.shape[1]
    table = _table(xs, ys)
    if table is not None:
        coef = fourier(table, n)
        deg = np.array([bin(m).count("1") for m in range(2**n)])
        method = "exact"
    else:
        subsets, coef = _fourier_fit(xs, ys, degree)
        deg = np.array([len(s) for s in subsets])
        method = "fourier"
    weights = [float(np.sum(coef[deg == d] ** 2)) for d in range(int(deg.max()) + 1)]
    return {"stability": {f"{r:g}": float(np.sum(r**deg * coef**2)) for r in rhos}, "degree_weights": weights,
            "method": method, "n": n}


def holdout_tool(acts: Any, *, x: str = "x", y: str = "y", unit: int = 0, k: int = 0, model: str = "mlp",
                 seed: int = 0, steps: int | None = None) -> dict[str, Any]:
    """Canonical holdout of bit ``k`` on the target that ``y`` tabulates over the whole cube of ``x``."""
    from .holdout import canonical_holdout

    xs, ys = _xy(acts, x, y, unit, False)
    n = xs.shape[1]
    table = _table(xs, ys)
    if table is None:
        raise ValueError(f"canonical-holdout needs every one of the 2^{n} points of the cube among the inputs "
                         f"(n <= {EXACT_LIMIT}): it trains on the half x_k = +1 and tests on the other half")
    return canonical_holdout(model, table, n, k, seed=seed, steps=steps)


def _plot(inf: list[float], path: str) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.bar(range(len(inf)), inf)
    ax.set_xlabel("input bit")
    ax.set_ylabel("influence")
    return save_figure(fig, path)
