"""Sparse probing (Gurnee et al. 2023; the method as the paper's abstract and catalog entry 55 describe it, the full
text was not read here): for a binary feature, rank a layer's neurons by a
cheap score, fit a logistic-regression probe on the top k of them, and sweep k = 1, 2, 4, ...

The ranking methods the paper compares, all computed on the probe's training split only:

- ``mean_diff``: the difference of the class means of each (standardised) neuron, in absolute value;
- ``mi``: the mutual information between each neuron (discretised into quantile bins) and the label;
- ``l1``: L1-regularised logistic regression along a path of decreasing penalty; neurons ranked by the order in
  which they enter the model (their weight first becomes non-zero), ties broken by |weight| at the weakest penalty.

A feature with a dedicated neuron reaches its best F1 at k = 1; a feature stored in a sparse combination of neurons
needs k >= the size of that combination. Differences from the paper: its adaptive-thresholding / optimal sparse
probes (OSP, a mixed-integer program) are not included, and probes here are L2 logistic regressions (weight 1e-2 per
input) on standardised neurons with a stratified held-out split (the paper reports F1 on a held-out split too).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

METHODS = ("mean_diff", "mi", "l1")
MIN_PER_CLASS = 4


def binary_target(y: Any, positive: Sequence[Any] | None = None) -> np.ndarray:
    """``y`` as a 0/1 vector: itself when it has two values (the larger is 1), else ``isin(y, positive)``."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"the feature has shape {y.shape}; sparse probing needs one binary label per input (N,)")
    if positive is not None:
        return np.isin(y, np.asarray(list(positive))).astype(np.int64)
    values = np.unique(y)
    if len(values) > 2:
        raise ValueError(f"the labels take {len(values)} values; sparse probing needs a binary feature: pass "
                         "positive=[classes] (e.g. positive=[0,2,4,6,8] for 'even') or a binary concept")
    return (y == values[-1]).astype(np.int64)


def _standardise(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = x_train.mean(0), x_train.std(0)
    sd = np.where(sd > 1e-12, sd, 1.0)  # dead neurons stay at zero instead of dividing by zero
    return (x_train - mu) / sd, (x_test - mu) / sd


def mean_diff_scores(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|mean(x | y=1) - mean(x | y=0)| per neuron (``x`` standardised: an effect size)."""
    return np.abs(x[y == 1].mean(0) - x[y == 0].mean(0))


def mi_scores(x: np.ndarray, y: np.ndarray, bins: int = 10) -> np.ndarray:
    """Mutual information (nats) between each neuron, cut into ``bins`` quantile bins, and the binary label."""
    n, d = x.shape
    out = np.zeros(d)
    p1 = y.mean()
    py = np.array([1 - p1, p1])
    for j in range(d):
        edges = np.unique(np.quantile(x[:, j], np.linspace(0, 1, bins + 1)[1:-1]))
        b = np.searchsorted(edges, x[:, j], side="right")
        joint = np.zeros((len(edges) + 1, 2))
        np.add.at(joint, (b, y), 1.0)
        joint /= n
        px = joint.sum(1, keepdims=True)
        nz = joint > 0
        out[j] = float(np.sum(joint[nz] * np.log(joint[nz] / (px @ py[None, :])[nz])))
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 30) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression (weights penalised, intercept not) by Newton's method: ``(w, b)``."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    reg = np.full(d + 1, l2 * n)
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ theta, -30, 30)))
        grad = xb.T @ (p - y) + reg * theta
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return theta[:-1], float(theta[-1])


def l1_order(x: np.ndarray, y: np.ndarray, n_lambda: int = 16, iters: int = 150) -> np.ndarray:
    """Neurons in the order they enter an L1-regularised logistic regression as the penalty weakens (a warm-started
    proximal-gradient path from the smallest penalty that keeps every weight at zero down to 1% of it)."""
    n, d = x.shape
    b0 = float(np.log(y.mean() / (1 - y.mean())))
    lam_max = float(np.max(np.abs(x.T @ (y - y.mean())))) / n
    step = 4.0 * n / max(float(np.linalg.norm(x, 2)) ** 2 + n, 1e-12)  # 1 / Lipschitz constant of the mean loss
    w, b = np.zeros(d), b0
    entry = np.full(d, n_lambda, dtype=float)
    for i, lam in enumerate(lam_max * np.logspace(-0.02, -2, n_lambda)):
        for _ in range(iters):
            r = 1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -30, 30))) - y
            b -= step * float(r.mean())
            w = w - step * (x.T @ r) / n
            w = np.sign(w) * np.maximum(np.abs(w) - step * lam, 0.0)  # soft threshold: the L1 proximal step
        entry = np.where((w != 0) & (entry == n_lambda), i, entry)
    return np.lexsort((-np.abs(w), entry))  # first by entry step, then by weight at the weakest penalty


def rank_neurons(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """Neuron indices, best first, by ``method`` (one of ``METHODS``); ``x`` standardised."""
    if method == "mean_diff":
        return np.argsort(-mean_diff_scores(x, y), kind="stable")
    if method == "mi":
        return np.argsort(-mi_scores(x, y), kind="stable")
    if method == "l1":
        return l1_order(x, y)
    raise ValueError(f"unknown ranking method {method!r}; choose from {list(METHODS)}")


def f1_score(y: np.ndarray, pred: np.ndarray) -> float:
    """F1 of the positive class (0 when nothing is predicted positive and nothing is)."""
    tp = float(np.sum((pred == 1) & (y == 1)))
    fp = float(np.sum((pred == 1) & (y == 0)))
    fn = float(np.sum((pred == 0) & (y == 1)))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def default_ks(d: int, max_k: int | None = None) -> list[int]:
    """1, 2, 4, ... up to ``max_k`` (default: the layer width), the width itself last when it is not a power of 2."""
    top = min(d, max_k or d)
    ks = [1 << i for i in range(top.bit_length()) if (1 << i) <= top]
    return ks if ks[-1] == top or max_k is not None else ks + [top]


def probe_layer(x: np.ndarray, y: np.ndarray, *, ks: Sequence[int] | None = None,
                methods: Sequence[str] = METHODS, test_fraction: float = 0.3, seed: int = 0,
                l2: float = 1e-2) -> dict[str, Any]:
    """Sparse probing of one (N, D) layer for a binary ``y``: per method, the top-k neurons (ranked on the training
    split) and the held-out F1 of a logistic probe on them, for every k."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    n, d = x.shape
    counts = np.bincount(y, minlength=2)
    if len(counts) != 2 or counts.min() < 2 * MIN_PER_CLASS:
        raise ValueError(f"sparse probing needs a binary feature with at least {2 * MIN_PER_CLASS} inputs of each "
                         f"class (a train and a test split of {MIN_PER_CLASS}); got class counts {counts.tolist()}")
    rng = np.random.default_rng(seed)
    test = np.zeros(n, dtype=bool)
    for cls in (0, 1):  # stratified split: both classes in both halves
        idx = rng.permutation(np.flatnonzero(y == cls))
        test[idx[: max(MIN_PER_CLASS, int(round(test_fraction * len(idx))))]] = True
    xtr, xte = _standardise(x[~test], x[test])
    ytr, yte = y[~test], y[test]
    ks = sorted({int(k) for k in (ks or default_ks(d))})
    if ks[0] < 1 or ks[-1] > d:
        raise ValueError(f"k must lie in 1..{d} (the layer's width); got {ks}")
    f1: dict[str, list[float]] = {}
    neurons: dict[str, list[int]] = {}
    for method in methods:
        order = rank_neurons(xtr, ytr, method)
        neurons[method] = [int(i) for i in order[: ks[-1]]]
        f1[method] = []
        for k in ks:
            cols = order[:k]
            w, b = fit_logistic(xtr[:, cols], ytr, l2)
            f1[method].append(f1_score(yte, (xte[:, cols] @ w + b > 0).astype(np.int64)))
    best = {m: max(v) for m, v in f1.items()}
    return {"k": ks, "f1": f1, "neurons": neurons, "best_f1": best, "f1_at_1": {m: v[0] for m, v in f1.items()},
            "n_train": int((~test).sum()), "n_test": int(test.sum())}


def sparse_probe(acts: Any, *, feature: str | None = None, positive: Sequence[Any] | None = None,
                 layers: Sequence[str] | None = None, ks: Sequence[int] | None = None, max_k: int | None = None,
                 methods: Sequence[str] = METHODS, test_fraction: float = 0.3, seed: int = 0, pool: str = "mean",
                 out_dir: str | None = None) -> dict[str, Any]:
    """The ``sparse_probe`` tool: F1 vs k per layer and ranking method, and the selected neuron ids.

    The feature is ``acts.concepts[feature]`` when ``feature`` is given, else ``acts.labels`` (binary, or
    multiclass reduced to ``isin(labels, positive)``)."""
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown ranking method {m!r}; choose from {list(METHODS)}")
    if feature is not None:
        if feature not in acts.concepts:
            raise ValueError(f"no concept {feature!r} in this ActivationSet; it has {sorted(acts.concepts)}")
        y = binary_target(acts.concepts[feature], positive)
    else:
        if acts.labels is None:
            raise ValueError("sparse_probe needs a binary feature: labels (with positive= for multiclass labels) "
                             "or feature= naming a concept")
        y = binary_target(acts.labels, positive)
    names = list(layers) if layers else acts.names
    out: dict[str, Any] = {"feature": feature or ("labels in " + str(list(positive)) if positive is not None
                                                  else "labels"),
                           "positives": int(y.sum()), "n": int(len(y)), "layers": {}}
    for name in names:
        x = acts.matrix(name, min_samples=4 * MIN_PER_CLASS, pool=pool)
        layer_ks = ks if ks is not None else default_ks(x.shape[1], max_k)
        out["layers"][name] = probe_layer(x, y, ks=layer_ks, methods=methods, test_fraction=test_fraction, seed=seed)
    if out_dir is not None:
        out["artifacts"] = {"f1_vs_k": _plot(out["layers"], os.path.join(out_dir, "sparse_probe_f1_vs_k.png"))}
    return out


def _plot(layers: dict[str, dict[str, Any]], path: str) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    styles = {"mean_diff": "-", "mi": "--", "l1": ":"}
    for i, (name, res) in enumerate(layers.items()):
        for method, f1 in res["f1"].items():
            ax.plot(res["k"], f1, styles.get(method, "-"), color=f"C{i % 10}", marker="o", ms=3,
                    label=f"{name} ({method})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k (neurons in the probe)")
    ax.set_ylabel("held-out F1")
    ax.set_ylim(0, 1.02)
    ax.set_title("sparse probing: F1 vs k")
    ax.legend(fontsize=6)
    return save_figure(fig, path)
