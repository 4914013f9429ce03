"""node2vec (Grover & Leskovec, KDD 2016): biased walks + skip-gram with negative sampling.

§3.1, Eq. (2): maximise sum_u log Pr(N_S(u) | f(u)), with the neighbourhoods N_S(u) read off the
second-order random walks of §3.2 (``walks.BiasedWalker``) with a context window k, and the
softmax approximated by negative sampling (Mikolov et al. 2013): for every (node, context) pair
in a window, loss = -log sigmoid(f(u).g(c)) - sum_{n ~ P^0.75} log sigmoid(-f(u).g(n)).
Algorithm 1: r walks of length l per node, then SGD. Defaults are the paper's (§4: d = 128,
r = 10, l = 80, k = 10) and those of word2vec that the reference code inherits (5 negatives drawn
from the unigram^0.75 distribution of the walk corpus, a reduced window drawn per position, SGD
with learning rate 0.025 decaying linearly to 0.0001 over one epoch, input vectors uniform in
+-0.5/d and output vectors zero).
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.tasks.base import run_budget
from zoo.tasks.graph_embed import one_torch_thread

from .walks import BiasedWalker, CSRGraph

log = logging.getLogger(__name__)


def skipgram_pairs(walks: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    """(center, context) pairs of every walk position with word2vec's reduced window.

    Each center position draws b uniformly in [0, window) and uses the contexts within
    ``window - b`` steps on both sides; -1 (after a dead end) is skipped.

    >>> w = np.array([[0, 1, 2]]); sorted(map(tuple, skipgram_pairs(w, 1, np.random.default_rng(0)).tolist()))
    [(0, 1), (1, 0), (1, 2), (2, 1)]
    """
    reach = window - rng.integers(0, window, size=walks.shape)
    out = []
    for o in range(1, window + 1):
        a, b = walks[:, :-o], walks[:, o:]
        ok = (a >= 0) & (b >= 0)
        fwd = ok & (reach[:, :-o] >= o)  # center a sees b
        bwd = ok & (reach[:, o:] >= o)  # center b sees a
        out += [np.stack([a[fwd], b[fwd]], 1), np.stack([b[bwd], a[bwd]], 1)]
    return np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)


class Node2Vec(nn.Module):
    """Node embeddings ``emb`` (the features f) and context vectors ``ctx`` of skip-gram.

    ``forward(ids) -> (B, dim)`` returns f(ids); ``fit(graph)`` samples the walks and trains.
    """

    graph_protocol = "link"

    def __init__(self, num_nodes: int = 77, dim: int = 128, p: float = 1.0, q: float = 1.0,
                 walk_length: int = 80, num_walks: int = 10, window: int = 10, negatives: int = 5,
                 epochs: int = 1, lr: float = 0.025, min_lr: float = 0.0001, batch_size: int = 256):
        super().__init__()
        self.num_nodes, self.dim, self.p, self.q = num_nodes, dim, p, q
        self.walk_length, self.num_walks, self.window, self.negatives = walk_length, num_walks, window, negatives
        self.epochs, self.lr, self.min_lr, self.batch_size = epochs, lr, min_lr, batch_size
        self.emb = nn.Embedding(num_nodes, dim)
        self.ctx = nn.Embedding(num_nodes, dim)
        nn.init.uniform_(self.emb.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.ctx.weight)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids)

    def embeddings(self) -> torch.Tensor:
        """(num_nodes, dim) node features."""
        return self.emb.weight.detach().clone()

    def loss(self, center: torch.Tensor, context: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        """Negative-sampling loss summed over the batch: ``center``/``context`` (B,), ``negative`` (B, k)."""
        u = self.emb(center)
        pos = (u * self.ctx(context)).sum(-1)
        neg = torch.bmm(self.ctx(negative), u.unsqueeze(-1)).squeeze(-1)
        return -(nn.functional.logsigmoid(pos).sum() + nn.functional.logsigmoid(-neg).sum())

    @torch.no_grad()
    def sgd_step(self, center: torch.Tensor, context: torch.Tensor, negative: torch.Tensor, lr: float) -> float:
        """One SGD step on the summed ``loss`` with its gradient written out (word2vec's update).

        With s = sigmoid(f(u).g(c)) and s_n = sigmoid(f(u).g(n)): dL/df(u) = (s - 1) g(c) +
        sum_n s_n g(n), dL/dg(c) = (s - 1) f(u), dL/dg(n) = s_n f(u). Returns the loss before the step.
        """
        emb, ctx = self.emb.weight, self.ctx.weight
        u, c, n = emb[center], ctx[context], ctx[negative]
        pos = (u * c).sum(-1)
        neg = (n * u[:, None, :]).sum(-1)
        loss = -(nn.functional.logsigmoid(pos).sum() + nn.functional.logsigmoid(-neg).sum())
        g_pos, g_neg = torch.sigmoid(pos) - 1, torch.sigmoid(neg)
        grad_u = g_pos[:, None] * c + (g_neg[..., None] * n).sum(1)
        ctx.index_add_(0, context, g_pos[:, None] * u, alpha=-lr)
        ctx.index_add_(0, negative.reshape(-1), (g_neg[..., None] * u[:, None, :]).reshape(-1, u.shape[1]), alpha=-lr)
        emb.index_add_(0, center, grad_u, alpha=-lr)
        return float(loss)

    def sample_walks(self, graph: Any, seed: int = 0) -> np.ndarray:
        """The (num_walks * N, walk_length) walks of §3.2 on ``graph`` (a ``GraphData``)."""
        csr = CSRGraph.from_edges(graph.edges, graph.num_nodes)
        return BiasedWalker(csr, self.p, self.q).walks(self.num_walks, self.walk_length, seed=seed)

    def fit(self, graph: Any, *, epochs: int | None = None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None) -> dict[str, float]:
        """Sample walks on ``graph`` and train skip-gram on them (SGD, linearly decaying rate)."""
        if graph.num_nodes != self.num_nodes:
            raise ValueError(f"graph has {graph.num_nodes} nodes, the model {self.num_nodes}")
        rng = np.random.default_rng(seed)
        walks = self.sample_walks(graph, seed=seed)
        counts = np.bincount(walks[walks >= 0], minlength=self.num_nodes).astype(np.float64)
        noise = torch.as_tensor(counts ** 0.75 / (counts ** 0.75).sum())
        epochs = self.epochs if epochs is None else epochs
        pairs = [torch.as_tensor(rng.permutation(skipgram_pairs(walks, self.window, rng))) for _ in range(epochs)]
        per_epoch = max(1, -(-len(pairs[0]) // self.batch_size))
        total = per_epoch * epochs
        gen = torch.Generator().manual_seed(seed)

        def step(i: int) -> float:
            batch = pairs[i // per_epoch][(i % per_epoch) * self.batch_size:][: self.batch_size]
            neg = torch.multinomial(noise, len(batch) * self.negatives, replacement=True, generator=gen)
            lr = max(self.min_lr, self.lr * (1 - i / total))
            return self.sgd_step(batch[:, 0], batch[:, 1], neg.view(len(batch), self.negatives), lr) / len(batch)

        self.train()
        with one_torch_thread():
            fig = run_budget(step, steps=total, budget_s=budget_s, progress=progress)
        self.eval()
        return {**fig, "walks": float(len(walks)), "pairs": float(len(pairs[0]) * epochs)}


def node2vec(num_nodes: int = 77, dim: int = 128, p: float = 1.0, q: float = 1.0, walk_length: int = 80,
             num_walks: int = 10, window: int = 10, negatives: int = 5, epochs: int = 1, lr: float = 0.025,
             batch_size: int = 256) -> Node2Vec:
    """node2vec with the paper's defaults; pick ``p`` (return) and ``q`` (in-out) per graph (§4.3)."""
    return Node2Vec(num_nodes=num_nodes, dim=dim, p=p, q=q, walk_length=walk_length, num_walks=num_walks,
                    window=window, negatives=negatives, epochs=epochs, lr=lr, batch_size=batch_size)
