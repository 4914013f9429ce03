"""node2vec's second-order biased random walks on a CSR graph, all walkers advanced at once.

Grover & Leskovec 2016, §3.2.2: a walk that just traversed (t, v) moves to a neighbour x of v with
probability proportional to alpha_pq(t, x) * w_vx, where alpha is 1/p if x == t (return), 1 if x
is a neighbour of t, and 1/q otherwise (in-out); §3.2.3: these transition probabilities are
precomputed per directed edge as alias tables, so each step is O(1). The first step of a walk
uses the first-order table of its start node (proportional to w_vx). With p = q = 1 the walk is
DeepWalk's uniform random walk and only the first-order tables are built.

Everything is numpy: the alias tables of all distributions are built together from segmented
prefix sums (the sweep form of Vose's method), and each step of the walks is one vectorised draw
for every walker.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CSRGraph:
    """An undirected graph as CSR rows with sorted column indices (``weights`` per stored entry)."""

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    num_nodes: int

    @classmethod
    def from_edges(cls, edges: np.ndarray, num_nodes: int, weights: np.ndarray | None = None) -> CSRGraph:
        """Symmetrise ``edges`` (E, 2); duplicate edges add their weights; self-loops are dropped.

        >>> g = CSRGraph.from_edges(np.array([[0, 1], [1, 2]]), 3)
        >>> g.indptr.tolist(), g.indices.tolist()
        ([0, 1, 3, 4], [1, 0, 2, 1])
        """
        edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        w = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=np.float64)
        keep = edges[:, 0] != edges[:, 1]
        edges, w = edges[keep], w[keep]
        src = np.r_[edges[:, 0], edges[:, 1]]
        dst = np.r_[edges[:, 1], edges[:, 0]]
        key, inv = np.unique(src * num_nodes + dst, return_inverse=True)
        data = np.bincount(inv, weights=np.r_[w, w], minlength=len(key))
        rows, cols = key // num_nodes, key % num_nodes
        indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=num_nodes))].astype(np.int64)
        return cls(indptr, cols.astype(np.int64), data, int(num_nodes))

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def has_edge(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Vectorised adjacency test on the sorted (row, col) keys."""
        keys = np.repeat(np.arange(self.num_nodes), self.degree) * self.num_nodes + self.indices
        q = np.asarray(u) * self.num_nodes + np.asarray(v)
        pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
        return keys[pos] == q if len(keys) else np.zeros(q.shape, dtype=bool)


def alias_tables(weights: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Alias tables of many discrete distributions stored back to back (Walker/Vose).

    ``weights`` holds the unnormalised weights of each distribution in consecutive segments of
    ``sizes``. Returns ``(prob, alias)``: to draw from segment s, pick a slot k uniformly, keep k
    with probability ``prob[start_s + k]``, else take ``alias[start_s + k]`` (a local index).

    Vose's pairing is done as a sweep: small slots (scaled weight < 1) in order have their holes
    filled by large slots in order; with prefix sums H of the holes and E of the excesses, small j
    is aliased to the first large k with E_k >= H_{j-1}, and large k (when not the last) to the next
    large, keeping 1 - (H_{j*} - E_k) of its own slot, j* the first small with H_j > E_k.

    >>> prob, alias = alias_tables(np.array([1.0, 3.0]), np.array([2]))
    >>> prob.tolist(), alias.tolist()
    ([0.5, 1.0], [1, 1])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    m = int(sizes.sum())
    seg = np.repeat(np.arange(len(sizes)), sizes)
    start = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
    total = np.add.reduceat(weights, start) if m else np.zeros(0)
    q = weights / total[seg] * sizes[seg]
    small = q < 1.0
    base = 2.0 * (start + np.arange(len(sizes)))  # keeps every segment's keys apart (H, E <= size)

    def seg_cumsum(x: np.ndarray) -> np.ndarray:
        c = np.cumsum(x)
        return c - (c[start] - x[start])[seg]

    hole = np.where(small, 1.0 - q, 0.0)
    excess = np.where(small, 0.0, q - 1.0)
    h_incl, e_incl = seg_cumsum(hole), seg_cumsum(excess)
    prob, alias = np.ones(m), np.arange(m) - start[seg]
    ls, ss = np.flatnonzero(~small), np.flatnonzero(small)
    if len(ss):
        key_e = base[seg[ls]] + e_incl[ls]
        k = np.searchsorted(key_e, base[seg[ss]] + h_incl[ss] - hole[ss], side="left")
        last_large = np.searchsorted(seg[ls], seg[ss], side="right") - 1
        k = np.minimum(k, last_large)  # guards float round-off at a segment's end
        prob[ss], alias[ss] = q[ss], ls[k] - start[seg[ss]]
        key_h = base[seg[ss]] + h_incl[ss]
        j = np.searchsorted(key_h, base[seg[ls]] + e_incl[ls], side="right")
        nxt_same = np.r_[seg[ls][1:] == seg[ls][:-1], False]
        has_j = (j < len(ss)) & nxt_same
        has_j[has_j] &= seg[ss[j[has_j]]] == seg[ls[has_j]]
        give = ls[has_j]
        prob[give] = np.clip(1.0 - (h_incl[ss[j[has_j]]] - e_incl[give]), 0.0, 1.0)
        alias[give] = ls[np.flatnonzero(has_j) + 1] - start[seg[give]]
    return prob, alias


def _draw(rng: np.random.Generator, start: np.ndarray, size: np.ndarray, prob: np.ndarray,
          alias: np.ndarray) -> np.ndarray:
    """One alias draw per row: a local index in [0, size)."""
    k = np.minimum((rng.random(len(start)) * size).astype(np.int64), size - 1)
    g = start + k
    return np.where(rng.random(len(start)) < prob[g], k, alias[g])


class BiasedWalker:
    """Precomputed node2vec transition tables for one graph and one (p, q).

    >>> g = CSRGraph.from_edges(np.array([[0, 1], [1, 2], [2, 0]]), 3)
    >>> BiasedWalker(g, p=1, q=1).walks(num_walks=1, walk_length=5, seed=0).shape
    (3, 5)
    """

    def __init__(self, graph: CSRGraph, p: float = 1.0, q: float = 1.0):
        self.graph, self.p, self.q = graph, float(p), float(q)
        deg = graph.degree
        self.node_prob, self.node_alias = alias_tables(graph.weights, deg[deg > 0])
        self.node_start = np.zeros(graph.num_nodes, dtype=np.int64)
        self.node_start[deg > 0] = np.r_[0, np.cumsum(deg[deg > 0])[:-1]]
        self.second_order = not (self.p == 1.0 and self.q == 1.0)
        if self.second_order:
            self._edge_tables()

    def _edge_tables(self) -> None:
        g = self.graph
        deg = g.degree
        t = np.repeat(np.arange(g.num_nodes), deg)  # source of each directed edge (CSR entry)
        v = g.indices
        sizes = deg[v]
        self.edge_start = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
        owner = np.repeat(np.arange(len(v)), sizes)
        slot = np.arange(int(sizes.sum())) - self.edge_start[owner]
        entry = g.indptr[v[owner]] + slot
        x, tt = g.indices[entry], t[owner]
        alpha = np.where(x == tt, 1.0 / self.p, np.where(g.has_edge(tt, x), 1.0, 1.0 / self.q))
        self.edge_prob, self.edge_alias = alias_tables(g.weights[entry] * alpha, sizes)

    def walks(self, num_walks: int = 10, walk_length: int = 80, seed: int = 0) -> np.ndarray:
        """``num_walks`` walks from every node (nodes shuffled each round), -1 after a dead end."""
        g, rng = self.graph, np.random.default_rng(seed)
        deg = g.degree
        starts = np.concatenate([rng.permutation(g.num_nodes) for _ in range(num_walks)])
        out = np.full((len(starts), walk_length), -1, dtype=np.int64)
        out[:, 0] = starts
        alive = np.flatnonzero(deg[starts] > 0)
        cur, edge = starts[alive], np.zeros(len(alive), dtype=np.int64)
        for i in range(1, walk_length):
            if not len(alive):
                break
            if i == 1 or not self.second_order:
                local = _draw(rng, self.node_start[cur], deg[cur], self.node_prob, self.node_alias)
            else:
                local = _draw(rng, self.edge_start[edge], deg[cur], self.edge_prob, self.edge_alias)
            edge = g.indptr[cur] + local
            cur = g.indices[edge]
            out[alive, i] = cur
        return out
