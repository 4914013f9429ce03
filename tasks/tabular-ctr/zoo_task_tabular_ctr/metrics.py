"""The metrics of tabular_ctr's table and CTR modes, in float64 numpy, with their exact cases.

>>> auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.4]))
1.0
>>> auc(np.array([0, 1]), np.array([0.5, 0.5]))
0.5
>>> round(logloss(np.array([1.0, 0.0]), np.array([0.0, 0.0])), 6) == round(float(np.log(2)), 6)
True
"""
from __future__ import annotations

import numpy as np


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve: the probability that a random positive scores above a random negative, ties
    counting one half (the Mann-Whitney statistic over average ranks)."""
    from scipy.stats import rankdata

    y = np.asarray(y).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"auc needs both classes; got {n_pos} positives and {n_neg} negatives")
    ranks = rankdata(np.asarray(score, dtype=np.float64))
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def logloss(y: np.ndarray, logit: np.ndarray) -> float:
    """Mean binary cross-entropy of logits against 0/1 labels (natural log), computed stably."""
    y, z = np.asarray(y, dtype=np.float64), np.asarray(logit, dtype=np.float64)
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def multiclass_logloss(y: np.ndarray, logits: np.ndarray) -> float:
    """Mean cross-entropy of (N, C) logits against integer labels."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-logp[np.arange(len(y)), np.asarray(y, dtype=int)].mean())


def rmse(y: np.ndarray, pred: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(y, dtype=np.float64) - np.asarray(pred, dtype=np.float64)) ** 2)))
