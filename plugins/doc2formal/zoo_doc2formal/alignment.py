"""IBM Model 1 (Brown et al. 1993), the lexical translation model of doc2formal, estimated by EM on parallel pairs.

For a pair (source words x_1..x_l plus NULL x_0, target tokens z_1..z_m),

    p(z | x) = prod_j 1/(l+1) sum_i t(z_j | x_i),

and EM re-estimates t: the E-step spreads each target token over the source words in proportion to t(z_j | x_i),
the M-step renormalises the expected counts per source word. Only (target, source) pairs that co-occur in some
training pair ever get mass, so the table is stored sparsely as links ``(tgt, src, t)``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

NULL = 0  # source id 0 is the empty word every target token may align to


@dataclass(frozen=True)
class Table:
    """t(tgt | src) on its links; ``n_src`` counts NULL (id 0), ``n_tgt`` the target vocabulary."""

    tgt: np.ndarray
    src: np.ndarray
    t: np.ndarray
    n_src: int
    n_tgt: int

    def matrix(self) -> sparse.csr_matrix:
        """(n_src, n_tgt) sparse t(tgt | src)."""
        return sparse.csr_matrix((self.t, (self.src, self.tgt)), shape=(self.n_src, self.n_tgt))

    def prob(self, tgt: int, src: int) -> float:
        hit = np.flatnonzero((self.tgt == tgt) & (self.src == src))
        return float(self.t[hit[0]]) if len(hit) else 0.0


def em(sources: Sequence[Sequence[int]], targets: Sequence[Sequence[int]], n_src: int, n_tgt: int,
       iters: int = 10) -> Table:
    """Model 1 by ``iters`` EM iterations from uniform t; ``sources`` exclude NULL (it is added to every pair).

    >>> tab = em([[1, 2], [1, 3], [1, 2]], [[0, 1], [0], [0, 1]], n_src=4, n_tgt=2, iters=20)
    >>> tab.prob(0, 1) > 0.8  # word 1 is in every pair with token 0
    True
    """
    rows_pair, rows_j, tgt, src = [], [], [], []
    g = 0
    for s, z in zip(sources, targets, strict=True):
        srcs = np.array([NULL, *s], dtype=np.int64)
        for tok in z:
            rows_j.append(np.full(len(srcs), g))
            tgt.append(np.full(len(srcs), tok))
            src.append(srcs)
            g += 1
        rows_pair.append(g)
    if g == 0:
        return Table(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), n_src, n_tgt)
    group, tgt_a, src_a = (np.concatenate(a) for a in (rows_j, tgt, src))
    key = tgt_a * n_src + src_a
    uniq, link = np.unique(key, return_inverse=True)
    u_tgt, u_src = uniq // n_src, uniq % n_src
    t = np.full(len(uniq), 1.0 / n_tgt)
    for _ in range(iters):
        val = t[link]
        post = val / np.bincount(group, weights=val, minlength=g)[group]  # E: each target token's alignment
        count = np.bincount(link, weights=post, minlength=len(uniq))
        total = np.bincount(u_src, weights=count, minlength=n_src)  # M: renormalise per source word
        t = count / total[u_src]
    return Table(u_tgt, u_src, t, n_src, n_tgt)


def mean_log_prob(table: Table, sources: Sequence[Sequence[int]], targets: sparse.csr_matrix, floor: float = 1e-6
                  ) -> np.ndarray:
    """(Q, N): for query q (source ids, NULL added) and candidate n (a row of target-token counts, columns
    ``n_tgt`` for tokens outside the vocabulary), sum_j log(1/(l+1) sum_i t(z_j | x_i)), floored at ``floor``."""
    q = sparse.lil_matrix((len(sources), table.n_src))
    for i, s in enumerate(sources):
        ids = [NULL, *s]
        for w in ids:
            q[i, w] += 1.0 / len(ids)
    p = np.asarray((q.tocsr() @ table.matrix()).todense())  # (Q, n_tgt): p(token | query)
    logp = np.log(np.maximum(p, floor))
    logp = np.concatenate([logp, np.full((len(sources), 1), np.log(floor))], axis=1)  # the out-of-vocabulary column
    return np.asarray(targets @ logp.T).T
