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
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import run_budget, torch_threads

from .walks import BiasedWalker, CSRGraph, alias_tables

log = logging.getLogger(__name__)

TRAINERS = ("torch", "skipgram")


def reduced_window(shape: tuple[int, ...], window: int, rng: np.random.Generator) -> np.ndarray:
    """word2vec's reduced window: each position sees ``window - b`` steps, b uniform in [0, window)."""
    return (window - rng.integers(0, window, size=shape)).astype(np.int16)


def _pair_masks(walks: np.ndarray, reach: np.ndarray, window: int) -> Iterator[tuple[np.ndarray, ...]]:
    for o in range(1, window + 1):
        a, b = walks[:, :-o], walks[:, o:]
        ok = (a >= 0) & (b >= 0)
        yield a, b, ok & (reach[:, :-o] >= o), ok & (reach[:, o:] >= o)  # center a sees b; center b sees a


def skipgram_pairs(walks: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    """(center, context) pairs of every walk position with word2vec's reduced window.

    Each center position draws b uniformly in [0, window) and uses the contexts within
    ``window - b`` steps on both sides; -1 (after a dead end) is skipped.

    >>> w = np.array([[0, 1, 2]]); sorted(map(tuple, skipgram_pairs(w, 1, np.random.default_rng(0)).tolist()))
    [(0, 1), (1, 0), (1, 2), (2, 1)]
    """
    keys = pair_keys(walks, reduced_window(walks.shape, window, rng), window, 1 << 32)
    return np.stack([keys >> 32, keys & 0xFFFFFFFF], 1)


def pair_keys(walks: np.ndarray, reach: np.ndarray, window: int, n: int) -> np.ndarray:
    """The pairs of ``skipgram_pairs`` for given reduced windows ``reach``, as one int64 key
    ``center * n + context`` each (half the memory of an (P, 2) array, and shuffled in place)."""
    out, at = np.empty(pair_count(walks, reach, window), dtype=np.int64), 0
    for a, b, fwd, bwd in _pair_masks(walks, reach, window):
        for c, x, m in ((a, b, fwd), (b, a, bwd)):
            k = int(m.sum())
            np.add(c[m] * n, x[m], out=out[at:at + k])
            at += k
    return out


def pair_count(walks: np.ndarray, reach: np.ndarray, window: int) -> int:
    """How many pairs ``pair_keys`` makes, without making them."""
    return sum(int(f.sum()) + int(g.sum()) for _, _, f, g in _pair_masks(walks, reach, window))


def subsample(walks: np.ndarray, counts: np.ndarray, sample: float, rng: np.random.Generator) -> np.ndarray:
    """word2vec's down-sampling of frequent nodes (gensim's ``sample``, on in the reference code).

    A position holding node w is kept with probability min(1, (sqrt(c_w / t) + 1) t / c_w), with
    t = ``sample`` * (total count) and c_w the count of w in the walks; each walk's kept positions
    move to its front (the window is then applied to the shortened walk), -1 after them.

    >>> w = np.array([[0, 1, 0, 1, 2]]); subsample(w, np.bincount(w.ravel()), 1.0, np.random.default_rng(0))
    array([[0, 1, 0, 1, 2]])
    """
    t = sample * counts.sum()
    keep_p = np.minimum(1.0, (np.sqrt(counts / t) + 1) * t / np.maximum(counts, 1))
    keep = (walks >= 0) & (rng.random(walks.shape) < keep_p[np.maximum(walks, 0)])
    order = np.argsort(~keep, axis=1, kind="stable")
    return np.take_along_axis(np.where(keep, walks, -1), order, axis=1)


class Node2Vec(nn.Module):
    """Node embeddings ``emb`` (the features f) and context vectors ``ctx`` of skip-gram.

    ``forward(ids) -> (B, dim)`` returns f(ids); ``fit(graph)`` samples the walks and trains.
    """

    graph_protocol = "link"

    def __init__(self, num_nodes: int = 77, dim: int = 128, p: float = 1.0, q: float = 1.0,
                 walk_length: int = 80, num_walks: int = 10, window: int = 10, negatives: int = 5,
                 epochs: int = 1, lr: float = 0.025, min_lr: float = 0.0001, batch_size: int = 256,
                 sample: float = 0.0, trainer: str = "skipgram"):
        super().__init__()
        if trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {TRAINERS}, got {trainer!r}")
        self.num_nodes, self.dim, self.p, self.q = num_nodes, dim, p, q
        self.walk_length, self.num_walks, self.window, self.negatives = walk_length, num_walks, window, negatives
        self.epochs, self.lr, self.min_lr, self.batch_size = epochs, lr, min_lr, batch_size
        self.trainer = trainer  # "torch": batched SGD in torch (GPU-able); "skipgram": zoo_nn.skipgram's compiled loop
        self.sample = sample  # word2vec's frequent-node down-sampling threshold; 0 = off (see ``subsample``)
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
        The context and the negatives are gathered as one (B, 1 + k, d) block with ``index_select``
        (advanced indexing costs several times more on CPU), and both products are (1, .) row-times-
        matrix ``bmm`` calls, which beat broadcast-multiply-and-sum (and the (., d) x (d, 1) ``bmm``).
        """
        emb, ctx = self.emb.weight, self.ctx.weight
        targets = torch.cat([context[:, None], negative], 1).reshape(-1).long()  # (B * (1 + k),)
        center = center.long()  # int64 indices: index_add_ is slower with int32
        u = emb.index_select(0, center)  # (B, d)
        t = ctx.index_select(0, targets).view(len(center), -1, u.shape[1])  # (B, 1 + k, d)
        s = torch.bmm(u[:, None, :], t.transpose(1, 2)).squeeze(1)  # (B, 1 + k): context, then negatives
        sign = torch.full((s.shape[1],), -1.0)
        sign[0] = 1.0
        loss = -nn.functional.logsigmoid(s * sign).sum()  # log sigmoid of the context, of minus the negatives
        g = torch.sigmoid(s)
        g[:, 0] -= 1  # dL/ds: s - 1 for the context, s_n for the negatives
        g.mul_(-lr)  # the step folded in here: index_add_ with alpha != 1 takes a path 3x slower
        step_u = torch.bmm(g[:, None, :], t).squeeze(1)
        ctx.index_add_(0, targets, (g[..., None] * u[:, None, :]).view(-1, u.shape[1]))
        emb.index_add_(0, center, step_u)
        return float(loss)

    @torch.no_grad()
    def _fit_walks_skipgram(self, walks: np.ndarray, *, epochs: int, seed: int) -> dict[str, float]:
        """``fit_walks`` with ``zoo_nn.skipgram.train``: one compiled per-pair SGD loop on one core.

        The same model as the torch trainer (window, negatives from the walks' unigram^0.75, reduced
        window, ``sample``, epochs, rate ``lr`` decaying linearly), continuing from the current ``emb`` /
        ``ctx`` (so the standard initialisation, or a previous fit), written back into them in place.
        Differences: per-pair updates (word2vec.c's) instead of 256-pair batches, and the rate floor is
        ``lr * 1e-4`` (word2vec.c's), not ``min_lr``. ``budget_s`` does not apply: the loop runs to the end.
        """
        from zoo_nn import skipgram  # numba (zoo-nn[fast]) makes it fast; without it a numpy loop runs

        emb, ctx = self.emb.weight, self.ctx.weight
        out = skipgram.train(walks, self.num_nodes, dim=self.dim, window=self.window, negative=self.negatives,
                             sample=self.sample, epochs=epochs, lr=self.lr, seed=seed,
                             init=(emb.detach().cpu().numpy(), ctx.detach().cpu().numpy()))
        emb.copy_(torch.from_numpy(out.input_vectors))
        ctx.copy_(torch.from_numpy(out.output_vectors))
        self.eval()
        loss = out.epoch_loss[-1] if out.epoch_loss else float("nan")
        # "steps" are (input, target) predictions here: each is one pair of the torch trainer
        return {"steps": out.predictions, "train_seconds": out.seconds,
                "seconds_per_step": out.seconds / max(1, out.predictions), "final_train_loss": loss,
                "walks": float(len(walks)), "pairs": float(out.predictions)}

    def sample_walks(self, graph: Any, seed: int = 0) -> np.ndarray:
        """The (num_walks * N, walk_length) walks of §3.2 on ``graph`` (a ``GraphData``)."""
        csr = CSRGraph.from_edges(graph.edges, graph.num_nodes)
        return BiasedWalker(csr, self.p, self.q).walks(self.num_walks, self.walk_length, seed=seed)

    def fit(self, graph: Any, *, epochs: int | None = None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None, trainer: str | None = None) -> dict[str, float]:
        """Sample walks on ``graph`` and train skip-gram on them (``fit_walks``)."""
        if graph.num_nodes != self.num_nodes:
            raise ValueError(f"graph has {graph.num_nodes} nodes, the model {self.num_nodes}")
        walks = self.sample_walks(graph, seed=seed)
        return self.fit_walks(walks, epochs=epochs, budget_s=budget_s, seed=seed, progress=progress, trainer=trainer)

    def fit_walks(self, walks: np.ndarray, *, epochs: int | None = None, budget_s: float | None = None,
                  seed: int = 0, progress: str | None = None, trainer: str | None = None) -> dict[str, float]:
        """Train skip-gram on given walks ((W, L) node ids, -1 = padding): SGD, linearly decaying rate.

        ``trainer`` (default: the model's ``trainer``): "torch" runs batched SGD in torch (below);
        "skipgram" runs ``zoo_nn.skipgram.train`` (word2vec.c's per-pair loop, compiled with numba).

        >>> m = Node2Vec(num_nodes=3, dim=4); m.fit_walks(np.array([[0, 1, 2, 1]]))["walks"]
        1.0
        """
        walks = np.asarray(walks, dtype=np.int64)
        trainer = self.trainer if trainer is None else trainer
        if trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {TRAINERS}, got {trainer!r}")
        if trainer == "skipgram":
            return self._fit_walks_skipgram(walks, epochs=self.epochs if epochs is None else epochs, seed=seed)
        n = self.num_nodes
        rng = np.random.default_rng(seed)
        counts = np.bincount(walks[walks >= 0], minlength=n).astype(np.float64)
        prob, alias = (torch.as_tensor(x) for x in alias_tables(counts ** 0.75, np.array([n])))
        epochs = self.epochs if epochs is None else epochs
        # each epoch's down-sampled walks and reduced windows are drawn up front (so the number of steps
        # of the linear decay is known); its pairs are made, and shuffled in place, when it starts
        kept = [subsample(walks, counts, self.sample, rng) if self.sample > 0 else walks for _ in range(epochs)]
        reach = [reduced_window(walks.shape, self.window, rng) for _ in range(epochs)]
        sizes = [pair_count(w, r, self.window) for w, r in zip(kept, reach, strict=True)]
        steps = [max(1, -(-k // self.batch_size)) for k in sizes]
        first = np.r_[0, np.cumsum(steps)]
        total = int(first[-1])
        gen = torch.Generator().manual_seed(seed)
        block = 64  # negatives are drawn for this many steps at once
        state: dict[str, Any] = {"epoch": -1}

        def step(i: int) -> float:
            epoch = int(np.searchsorted(first, i, side="right")) - 1
            if epoch != state["epoch"]:
                state["keys"] = None  # free the last epoch's pairs first
                keys = pair_keys(kept[epoch], reach[epoch], self.window, n)
                rng.shuffle(keys)
                state.update(epoch=epoch, keys=torch.from_numpy(keys))
            if i % block == 0:  # unigram^0.75 negatives by the alias method (2-4x faster than multinomial)
                m = block * self.batch_size * self.negatives
                k = torch.randint(n, (m,), generator=gen)
                keep = torch.rand(m, generator=gen, dtype=torch.float64) < prob[k]
                state["neg"] = torch.where(keep, k, alias[k]).view(block, self.batch_size, self.negatives)
            b = i - int(first[epoch])
            keys = state["keys"][b * self.batch_size:(b + 1) * self.batch_size]
            lr = max(self.min_lr, self.lr * (1 - i / total))
            loss = self.sgd_step(keys // n, keys % n, state["neg"][i % block, :len(keys)], lr)
            return loss / max(1, len(keys))

        self.train()
        with torch_threads(1):  # thousands of tiny ops: a second thread only spins
            fig = run_budget(step, steps=total, budget_s=budget_s, progress=progress)
        self.eval()
        return {**fig, "walks": float(len(walks)), "pairs": float(sum(sizes))}


def node2vec(num_nodes: int = 77, dim: int = 128, p: float = 1.0, q: float = 1.0, walk_length: int = 80,
             num_walks: int = 10, window: int = 10, negatives: int = 5, epochs: int = 1, lr: float = 0.025,
             batch_size: int = 256, sample: float = 0.0, trainer: str = "skipgram") -> Node2Vec:
    """node2vec with the paper's defaults; pick ``p`` (return) and ``q`` (in-out) per graph (§4.3).

    ``sample`` > 0 turns on word2vec's down-sampling of frequent nodes (the reference code's gensim
    default is 1e-3; the paper does not mention it, so it is off by default). ``trainer``: "skipgram"
    (the default: ``zoo_nn.skipgram``'s compiled word2vec loop on one CPU core, about 3.5x less CPU than
    the torch trainer at the same AUC; see the README's measurements) or "torch" (batched SGD in torch,
    the path for a GPU, and the one that honours ``budget_s``).
    """
    return Node2Vec(num_nodes=num_nodes, dim=dim, p=p, q=q, walk_length=walk_length, num_walks=num_walks,
                    window=window, negatives=negatives, epochs=epochs, lr=lr, batch_size=batch_size, sample=sample,
                    trainer=trainer)
