"""Ideal words (Trager et al. 2023, "Linear Spaces of Meanings: Compositional Structures in Vision-Language Models").

§3 (decomposable embeddings): vectors u(z) for z = (a, o) in A x O are *decomposable* when
u(a, o) = u0 + u_a + u_o with sum_a u_a = sum_o u_o = 0; the ideal words of any table are the centred means

    u0 = mean_{a,o} u(a, o),   u_a = mean_o u(a, o) - u0,   u_o = mean_a u(a, o) - u0,

which give the least-squares decomposable approximation of the table (the paper's Proposition on the optimal
decomposition). The uses (§6) are composing ideal words into vectors for pairs (classification, also of pairs that
were never seen), removing an attribute (debiasing) and editing an embedding by u_a' - u_a (retrieval).

This module is numpy only. The paper works with unit-norm CLIP embeddings (``normalize=True`` here, its default);
when cells of the table are missing (held-out pairs) the ideal words are the least-squares additive fit over the
observed cells (identical to the centred means when the table is complete). The paper's text was read from memory of
its published version and its abstract; the orthogonality statistic (principal angles between the attribute and
object ideal-word spans) and the leave-one-cell-out protocol are this plugin's way of measuring what §3-§4 describe.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _check_table(table: Any) -> np.ndarray:
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 3:
        raise ValueError(f"an embedding table is (|A|, |O|, D); got shape {t.shape}")
    if t.shape[0] < 2 or t.shape[1] < 2:
        raise ValueError(f"an embedding table needs at least 2 attributes and 2 objects; got {t.shape[:2]}")
    return t


def unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm (zero rows stay zero)."""
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def pair_table(x: Any, a: Any, o: Any, *, n_a: int | None = None, n_o: int | None = None,
               normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(table (|A|, |O|, D) of mean embeddings per pair, mask (|A|, |O|) of pairs that have samples). Samples are
    unit-normalised first when ``normalize`` (the paper's CLIP convention); a missing pair's row is NaN."""
    x = np.asarray(x, dtype=np.float64)
    a, o = np.asarray(a).astype(np.int64).ravel(), np.asarray(o).astype(np.int64).ravel()
    if x.ndim != 2 or len(a) != len(x) or len(o) != len(x):
        raise ValueError(f"samples (N, D) need one attribute and one object label each; got x {x.shape}, "
                         f"{len(a)} attributes, {len(o)} objects")
    if not np.isfinite(x).all():
        raise ValueError("the embeddings hold NaN/inf values; drop those samples first")
    if len(a) and (a.min() < 0 or o.min() < 0):
        raise ValueError("attribute and object labels must be integers >= 0")
    n_a = int(a.max()) + 1 if n_a is None else int(n_a)
    n_o = int(o.max()) + 1 if n_o is None else int(n_o)
    if n_a < 2 or n_o < 2:
        raise ValueError(f"ideal words need at least 2 attributes and 2 objects; the labels give {n_a} x {n_o}")
    if normalize:
        x = unit(x)
    table = np.full((n_a, n_o, x.shape[1]), np.nan)
    mask = np.zeros((n_a, n_o), dtype=bool)
    for i in range(n_a):
        for j in range(n_o):
            sel = (a == i) & (o == j)
            if sel.any():
                table[i, j] = x[sel].mean(0)
                mask[i, j] = True
    return table, mask


def ideal_words(table: Any, mask: Any = None) -> dict[str, np.ndarray]:
    """Ideal words ``{"u0": (D,), "ua": (|A|, D), "uo": (|O|, D)}`` of a table: the centred means (§3) for a complete
    table; with ``mask`` (False = missing cell) the least-squares additive fit over the observed cells, centred so
    that sum_a u_a = sum_o u_o = 0. Raises ValueError when the observed cells do not determine the words (an
    attribute or object with no observed cell, or observed cells that do not connect all attributes and objects)."""
    t = _check_table(table)
    n_a, n_o, d = t.shape
    m = np.isfinite(t).all(-1) if mask is None else np.asarray(mask, dtype=bool) & np.isfinite(t).all(-1)
    if m.all():
        u0 = t.mean((0, 1))
        return {"u0": u0, "ua": t.mean(1) - u0, "uo": t.mean(0) - u0}
    if not m.any(1).all() or not m.any(0).all():
        raise ValueError("every attribute and every object needs at least one observed pair to have an ideal word")
    # design: [1, onehot(a) centred basis, onehot(o) centred basis] via sum-to-zero contrasts
    ca = np.vstack([np.eye(n_a - 1), -np.ones((1, n_a - 1))])  # (n_a, n_a-1): row i = contrast code of attribute i
    co = np.vstack([np.eye(n_o - 1), -np.ones((1, n_o - 1))])
    ii, jj = np.nonzero(m)
    design = np.hstack([np.ones((len(ii), 1)), ca[ii], co[jj]])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError("the observed pairs do not connect all attributes and objects: the ideal words are not "
                         "determined (hold out fewer pairs)")
    coef, *_ = np.linalg.lstsq(design, t[ii, jj], rcond=None)
    u0 = coef[0]
    return {"u0": u0, "ua": ca @ coef[1:n_a], "uo": co @ coef[n_a:]}


def compose(words: dict[str, np.ndarray]) -> np.ndarray:
    """The decomposable table u0 + u_a + u_o, (|A|, |O|, D)."""
    return words["u0"][None, None] + words["ua"][:, None] + words["uo"][None, :]


def reconstruction(table: Any, words: dict[str, np.ndarray] | None = None) -> dict[str, float]:
    """How well the ideal words rebuild a complete table: ``r2`` (share of the table's centred variance the
    decomposable approximation explains), ``residual`` (relative Frobenius norm of table - composite about the
    mean), ``mean_cosine`` (between each cell and its composite), and the variance shares of the attribute words,
    the object words and the interaction (residual)."""
    t = _check_table(table)
    if not np.isfinite(t).all():
        raise ValueError("reconstruction needs a complete table (no missing pairs)")
    w = ideal_words(t) if words is None else words
    comp = compose(w)
    centred = t - t.mean((0, 1))
    total = float((centred ** 2).sum())
    if total <= 0:
        raise ValueError("the table is constant: every pair has the same embedding, nothing to decompose")
    res = float(((t - comp) ** 2).sum())
    cos = (unit(t) * unit(comp)).sum(-1)
    return {"r2": 1.0 - res / total, "residual": float(np.sqrt(res / total)), "mean_cosine": float(cos.mean()),
            "attribute_share": float((w["ua"] ** 2).sum() * t.shape[1] / total),
            "object_share": float((w["uo"] ** 2).sum() * t.shape[0] / total), "interaction_share": res / total}


def _basis(v: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    u, s, _ = np.linalg.svd(v.T, full_matrices=False)
    keep = s > tol * max(s.max(initial=0.0), 1e-300)
    return u[:, keep]


def factor_angles(words: dict[str, np.ndarray]) -> dict[str, Any]:
    """Principal angles (degrees) between span{u_a} and span{u_o}; 90 everywhere means orthogonal factors.
    ``mean_cos2`` is the mean squared cosine of the angles (0 = orthogonal, 1 = the same subspace)."""
    qa, qo = _basis(words["ua"]), _basis(words["uo"])
    if qa.shape[1] == 0 or qo.shape[1] == 0:
        return {"angles": [], "min_angle": 90.0, "mean_cos2": 0.0, "rank_attribute": qa.shape[1],
                "rank_object": qo.shape[1]}
    s = np.clip(np.linalg.svd(qa.T @ qo, compute_uv=False), 0.0, 1.0)
    ang = np.degrees(np.arccos(s))
    return {"angles": ang.tolist(), "min_angle": float(ang.min()), "mean_cos2": float((s ** 2).mean()),
            "rank_attribute": int(qa.shape[1]), "rank_object": int(qo.shape[1])}


def nearest(x: np.ndarray, protos: np.ndarray) -> np.ndarray:
    """Index of the highest-cosine prototype (rows of ``protos``) for each row of ``x``."""
    return np.argmax(unit(x) @ unit(protos).T, axis=1)


def classify_pairs(x: np.ndarray, a: np.ndarray, o: np.ndarray, table: np.ndarray) -> dict[str, float]:
    """Pair classification of samples by the nearest (cosine) pair vector: the real pair means (``pair_acc``)
    against the composed ideal words u0 + u_a + u_o (``iw_acc``; |A| + |O| - 1 vectors instead of |A||O|)."""
    n_a, n_o, d = table.shape
    truth = a * n_o + o
    pair = nearest(x, table.reshape(-1, d))
    iw = nearest(x, compose(ideal_words(table)).reshape(-1, d))
    return {"pair_acc": float((pair == truth).mean()), "iw_acc": float((iw == truth).mean()),
            "chance": 1.0 / (n_a * n_o)}


def unseen_pairs(x: np.ndarray, a: np.ndarray, o: np.ndarray, table: np.ndarray) -> dict[str, float]:
    """Leave-one-pair-out: for every pair (a, o), the ideal words are fitted on the other cells only and its vector
    is predicted as u0 + u_a + u_o; its samples are classified among all pairs (the others by their real means).
    ``iw_*`` uses the composed vector, ``neighbour_*`` the plain average of the seen pairs that share a or o (a
    non-additive guess from the same cells). ``*_cos`` is the cosine of the guess with the real (held-out) mean."""
    n_a, n_o, d = table.shape
    acc = {"iw": [], "neighbour": []}
    cos = {"iw": [], "neighbour": []}
    for i in range(n_a):
        for j in range(n_o):
            mask = np.ones((n_a, n_o), bool)
            mask[i, j] = False
            w = ideal_words(table, mask)
            guesses = {"iw": w["u0"] + w["ua"][i] + w["uo"][j],
                       "neighbour": np.concatenate([np.delete(table[i], j, 0), np.delete(table[:, j], i, 0)]).mean(0)}
            sel = (a == i) & (o == j)
            for k, g in guesses.items():
                protos = table.reshape(-1, d).copy()
                protos[i * n_o + j] = g
                cos[k].append(float(unit(g) @ unit(table[i, j])))
                if sel.any():
                    acc[k].append(float((nearest(x[sel], protos) == i * n_o + j).mean()))
    return {"iw_acc": float(np.mean(acc["iw"])), "neighbour_acc": float(np.mean(acc["neighbour"])),
            "iw_cos": float(np.mean(cos["iw"])), "neighbour_cos": float(np.mean(cos["neighbour"]))}


def remove_directions(x: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """``x`` with the span of ``directions`` (rows) projected out."""
    q = _basis(np.atleast_2d(directions))
    return x - (x @ q) @ q.T


def linear_probe(xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, yte: np.ndarray, ridge: float = 1e-3) -> float:
    """Test accuracy of a ridge least-squares one-vs-rest linear classifier (closed form, with bias)."""
    k = int(max(ytr.max(), yte.max())) + 1
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-8
    ztr, zte = (xtr - mu) / sd, (xte - mu) / sd
    ztr, zte = np.hstack([ztr, np.ones((len(ztr), 1))]), np.hstack([zte, np.ones((len(zte), 1))])
    y = np.eye(k)[ytr]
    w = np.linalg.solve(ztr.T @ ztr + ridge * len(ztr) * np.eye(ztr.shape[1]), ztr.T @ y)
    return float(((zte @ w).argmax(1) == yte).mean())


def debias(xtr, atr, otr, xte, ate, ote, table: np.ndarray, *, seed: int = 0) -> dict[str, float]:
    """Remove the attribute: project out span{u_a} (|A| - 1 directions) and measure how well linear probes still
    decode the attribute and the object, against removing as many random directions."""
    n_a, d = table.shape[0], table.shape[2]
    w = ideal_words(table)
    rand = np.random.default_rng(seed).standard_normal((n_a - 1, d))
    out = {"attribute_before": linear_probe(xtr, atr, xte, ate), "object_before": linear_probe(xtr, otr, xte, ote)}
    for name, dirs in (("iw", w["ua"]), ("random", rand)):
        ptr, pte = remove_directions(xtr, dirs), remove_directions(xte, dirs)
        out[f"attribute_after_{name}"] = linear_probe(ptr, atr, pte, ate)
        out[f"object_after_{name}"] = linear_probe(ptr, otr, pte, ote)
    out["attribute_chance"] = float(np.bincount(ate).max() / len(ate))
    return out


def retrieval(x: np.ndarray, a: np.ndarray, o: np.ndarray, table: np.ndarray, *, max_queries: int = 400,
              seed: int = 0) -> dict[str, float]:
    """Attribute-edit retrieval (``x`` in the table's space): the query image (a, o) plus u_a' - u_a must retrieve
    (top-1 cosine, the query itself excluded) an image of (a', o) for every a' != a. ``iw_top1`` for the edited
    query, ``image_top1`` for the unedited image (which finds its own pair: near 0) and ``words_top1`` for the words
    alone u0 + u_a' + u_o."""
    n_a = table.shape[0]
    w = ideal_words(table)
    xn = unit(x)
    rng = np.random.default_rng(seed)
    qs = rng.permutation(len(x))[:max_queries]
    hits = {"iw": [], "image": [], "words": []}
    for q in qs:
        for t in range(n_a):
            if t == a[q]:
                continue
            want = (a == t) & (o == o[q])
            queries = {"iw": x[q] - w["ua"][a[q]] + w["ua"][t], "image": x[q],
                       "words": w["u0"] + w["ua"][t] + w["uo"][o[q]]}
            for k, v in queries.items():
                s = xn @ unit(v)
                s[q] = -np.inf
                hits[k].append(bool(want[int(np.argmax(s))]))
    return {f"{k}_top1": float(np.mean(v)) for k, v in hits.items()}


__all__ = ["pair_table", "ideal_words", "compose", "reconstruction", "factor_angles", "classify_pairs", "unseen_pairs",
           "debias", "retrieval", "remove_directions", "linear_probe", "unit", "nearest"]
