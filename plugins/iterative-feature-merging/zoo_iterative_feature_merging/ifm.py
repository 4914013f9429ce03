"""Iterative Feature Merging (IFM), data-agnostic: weights in, a smaller network with (near-)identical outputs out.

Paper: "Going Beyond Neural Network Feature Similarity: The Network Feature Complexity and Its Interpretation Using
Category Theory" (Chen, Zhou & Yan, 2023; catalog 109). Sources: the abstract and the catalog entry only (the paper's
full text and code were not read), so the rule below is this plugin's reading of "features that produce equivalent
output under certain transformations", stated exactly:

- A feature of a hidden layer is one ReLU neuron j with incoming vector v_j = [W_in[j], b_in[j]]. ReLU is positively
  homogeneous, so if v_j = c v_i with c > 0 then relu(v_j . x) = c relu(v_i . x) for every input: j is functionally
  equivalent to i under the transformation "multiply by c", and the layer loses nothing when j is removed and its
  outgoing column is added to i's scaled by c (W_out[:, i] += c W_out[:, j]). A neuron with v_j = 0 outputs
  relu(0) = 0 always (equivalent to the empty feature) and is removed.
- Approximate equivalence: d_ij = || v_i/|v_i| - v_j/|v_j| || <= tol (the distance of the unit directions; 0 for
  exact positive multiples, sqrt 2 for orthogonal ones), merged with c = |v_j| / |v_i|.
- Iterated: the closest remaining pair within tol merges first; the neuron with the larger |v| |W_out column| keeps
  its incoming vector (so distances to the rest never change) and absorbs the other, with the scales of anything it
  had absorbed composed. Repeated until no pair is within tol; layers are merged in forward order, each on the
  outgoing weights its predecessor's merge produced.
- Feature complexity of a layer at tol = the number of neurons left.
"""
from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

ZERO_REL = 1e-12  # a feature whose norm is below this fraction of the layer's largest is the zero feature
EXACT = 1e-7  # distances below this (the float64 floor of sqrt(2 - 2 cos)) count as 0: exact positive multiples


def _check_matrix(v: Any, what: str) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] < 1 or v.shape[1] < 1:
        raise ValueError(f"{what} must be a 2-D (features, dims) array with at least one row and column, "
                         f"got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError(f"{what} holds NaN/inf values; fix the weights before merging")
    return v


def _check_tol(tol: float) -> float:
    tol = float(tol)
    if not 0.0 <= tol <= 2.0:
        raise ValueError(f"tol must be in [0, 2] (the distance between unit directions), got {tol}")
    return tol


def merge_groups(v: Any, tol: float, importance: Any = None) -> dict[str, Any]:
    """Greedy iterative merging of the rows of ``v`` (features x dims) that are positive multiples within ``tol``.

    Returns ``keep`` (kept row indices, ascending), ``assign`` (per row: the kept row it now lives in, or -1 for the
    zero feature), ``scale`` (per row: c with v_row ~ c v_keep; 1 for kept rows, 0 for zero rows) and ``merges``
    (the number of pairwise merges)."""
    v = _check_matrix(v, "features")
    tol = _check_tol(tol)
    h = v.shape[0]
    norms = np.linalg.norm(v, axis=1)
    zero = norms <= ZERO_REL * max(float(norms.max()), 1e-300)
    imp = norms.copy() if importance is None else np.asarray(importance, dtype=np.float64) * norms
    if imp.shape != (h,):
        raise ValueError(f"importance must have one value per feature ({h}), got shape {imp.shape}")
    parent = np.arange(h)
    rel = np.ones(h)  # v_j ~ rel[j] v_parent[j]
    active = ~zero
    merges = 0
    idx = np.nonzero(active)[0]
    if len(idx) > 1:
        u = v[idx] / norms[idx, None]
        d = np.sqrt(np.maximum(2.0 - 2.0 * (u @ u.T), 0.0))
        d[d < EXACT] = 0.0
        a, b = np.triu_indices(len(idx), k=1)
        within = d[a, b] <= tol
        a, b, dist = idx[a[within]], idx[b[within]], d[a, b][within]
        for k in np.argsort(dist, kind="stable"):
            i, j = int(a[k]), int(b[k])
            if not (active[i] and active[j]):
                continue
            keep, gone = (i, j) if imp[i] >= imp[j] else (j, i)
            parent[gone], rel[gone] = keep, norms[gone] / norms[keep]
            active[gone] = False
            merges += 1
    assign, scale = np.full(h, -1), np.zeros(h)
    for j in range(h):
        if zero[j]:
            continue
        r, c = j, 1.0
        while parent[r] != r:
            c *= rel[r]
            r = parent[r]
        assign[j], scale[j] = r, c
    return {"keep": np.nonzero(active)[0], "assign": assign, "scale": scale, "merges": merges,
            "zero": int(zero.sum())}


def merge_layer(w_in: Any, b_in: Any, w_out: Any, tol: float) -> dict[str, Any]:
    """Merge the hidden ReLU layer between ``w_in`` (h, d) + ``b_in`` (h,) and ``w_out`` (m, h).

    Returns the merged ``w_in`` (k, d), ``b_in`` (k,), ``w_out`` (m, k) and the grouping (``merge_groups``)."""
    w_in, w_out = _check_matrix(w_in, "w_in"), _check_matrix(w_out, "w_out")
    h = w_in.shape[0]
    b_in = np.zeros(h) if b_in is None else np.asarray(b_in, dtype=np.float64).reshape(-1)
    if b_in.shape != (h,) or w_out.shape[1] != h:
        raise ValueError(f"shapes do not chain: w_in {w_in.shape}, b_in {b_in.shape}, w_out {w_out.shape} "
                         f"(need b_in ({h},) and w_out (m, {h}))")
    g = merge_groups(np.concatenate([w_in, b_in[:, None]], axis=1), tol,
                     importance=np.linalg.norm(w_out, axis=0) + 1e-300)
    keep = g["keep"]
    pos = {int(k): n for n, k in enumerate(keep)}
    new_out = np.zeros((w_out.shape[0], len(keep)))
    for j in range(h):
        if g["assign"][j] >= 0:
            new_out[:, pos[int(g["assign"][j])]] += g["scale"][j] * w_out[:, j]
    return {"w_in": w_in[keep], "b_in": b_in[keep], "w_out": new_out, **g}


def _linears(model: Any, names: Sequence[str]) -> list[Any]:
    from torch import nn

    mods = dict(model.named_modules())
    out = []
    for n in names:
        if n not in mods or not isinstance(mods[n], nn.Linear):
            have = [k for k, m in mods.items() if isinstance(m, nn.Linear)]
            raise ValueError(f"{n!r} is not an nn.Linear of {type(model).__name__}; pass linears= naming the model's "
                             f"Linear layers in forward order (it has {have})")
        out.append(mods[n])
    if len(out) < 2:
        raise ValueError("linears= needs at least two Linear layers (a hidden ReLU layer lies between two of them)")
    return out


def _set(model: Any, name: str, module: Any) -> None:
    parent, _, leaf = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, leaf, module)


def _linear(w: np.ndarray, b: np.ndarray | None, like: Any) -> Any:
    import torch
    from torch import nn

    lin = nn.Linear(w.shape[1], w.shape[0], bias=b is not None, dtype=like.weight.dtype, device=like.weight.device)
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(w, dtype=like.weight.dtype))
        if b is not None:
            lin.bias.copy_(torch.as_tensor(b, dtype=like.weight.dtype))
    return lin


def _weights(lin: Any) -> tuple[np.ndarray, np.ndarray | None]:
    w = lin.weight.detach().double().cpu().numpy()
    return w, (None if lin.bias is None else lin.bias.detach().double().cpu().numpy())


def ifm_prune(model: Any, tol: float,
              linears: Sequence[str] = ("fc1", "fc2", "fc3", "out")) -> tuple[Any, dict[str, Any]]:
    """IFM on an MLP: ``linears`` name its Linear layers in forward order, with an elementwise ReLU (or any
    positively homogeneous activation) between consecutive ones. Returns a merged deep copy and a report
    ``{"layers": {name: {"before", "after", "merges", "zero"}}, "before", "after"}`` (hidden neurons). No data."""
    tol = _check_tol(tol)
    new = copy.deepcopy(model)
    mods = _linears(new, linears)
    ws = [_weights(m) for m in mods]
    report: dict[str, Any] = {"layers": {}}
    for li in range(len(mods) - 1):
        (w_in, b_in), (w_out, b_out) = ws[li], ws[li + 1]
        r = merge_layer(w_in, b_in, w_out, tol)
        ws[li] = (r["w_in"], None if b_in is None else r["b_in"])
        ws[li + 1] = (r["w_out"], b_out)
        report["layers"][linears[li]] = {"before": int(w_in.shape[0]), "after": int(len(r["keep"])),
                                         "merges": int(r["merges"]), "zero": int(r["zero"])}
    for name, m, (w, b) in zip(linears, mods, ws, strict=True):
        _set(new, name, _linear(w, b, m))
    report["before"] = sum(v["before"] for v in report["layers"].values())
    report["after"] = sum(v["after"] for v in report["layers"].values())
    return new, report


def magnitude_prune(model: Any, widths: Sequence[int], linears: Sequence[str] = ("fc1", "fc2", "fc3", "out")) -> Any:
    """The data-agnostic baseline: keep, per hidden layer, the ``widths[l]`` neurons with the largest
    |v_j| |W_out[:, j]| (incoming with bias, times outgoing norm); the others are deleted without compensation."""
    new = copy.deepcopy(model)
    mods = _linears(new, linears)
    if len(widths) != len(mods) - 1:
        raise ValueError(f"widths needs one entry per hidden layer ({len(mods) - 1}), got {len(widths)}")
    ws = [_weights(m) for m in mods]
    for li, k in enumerate(widths):
        (w_in, b_in), (w_out, b_out) = ws[li], ws[li + 1]
        if not 1 <= int(k) <= w_in.shape[0]:
            raise ValueError(f"width {k} for layer {linears[li]!r} must be in [1, {w_in.shape[0]}]")
        v = w_in if b_in is None else np.concatenate([w_in, b_in[:, None]], axis=1)
        score = np.linalg.norm(v, axis=1) * np.linalg.norm(w_out, axis=0)
        keep = np.sort(np.argsort(-score, kind="stable")[: int(k)])
        ws[li] = (w_in[keep], None if b_in is None else b_in[keep])
        ws[li + 1] = (w_out[:, keep], b_out)
    for name, m, (w, b) in zip(linears, mods, ws, strict=True):
        _set(new, name, _linear(w, b, m))
    return new


def feature_complexity(x: Any, tols: Sequence[float]) -> dict[float, int]:
    """Features (rows of ``x``) left after merging at each tolerance (zero features not counted)."""
    return {float(t): int(len(merge_groups(x, t)["keep"])) for t in tols}


__all__ = ["merge_groups", "merge_layer", "ifm_prune", "magnitude_prune", "feature_complexity"]
